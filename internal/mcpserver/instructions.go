package mcpserver

import (
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/tools"
)

// Instructions returns the MCP instructions sent at initialization for an edit format and
// mode: how to use the tools together, and the edit form the model is shown.
func Instructions(f tools.EditFormat, m permission.Mode) string {
	s := "S-Code serves one workspace. Paths are relative to the workspace root; symlinks are never followed.\n" +
		"- Plan with update_plan (whole plan each time, at most one step in_progress).\n" +
		"- Discover with list_dir, glob and grep (ignored files are left out unless include_ignored).\n" +
		"- Read with read_file before changing a file: it returns numbered_content and the revision apply_patch needs.\n" +
		"- Change files only with apply_patch, passing the revision you just read; a stale revision is refused: read again. undo_turn reverts a turn.\n" +
		"- Run commands with exec_command (sandboxed, no network unless approved). A denied command returns exit_status 126 with a rule id: do not retry a variant. " +
		"A command that needs a person's approval is asked for through the client; if it is declined, nothing ran.\n" +
		"- Inspect Git with git_status, git_diff, git_log, git_show and git_blame.\n" +
		"- tool_search finds more tools (sandbox profile, audit log, code_mode: many reads in one JavaScript program).\n"
	switch f {
	case tools.EditText:
		s += "Edit format: exact text edits. {\"files\":[{\"path\":P,\"expected_revision\":REV,\"edits\":[{\"old_text\":T,\"new_text\":N}]}]}; " +
			"old_text must occur exactly once, copied from numbered_content without the line-number prefixes.\n"
	case tools.EditPatch:
		s += "Edit format: patch text. {\"patch\":\"*** Begin Patch\\n*** Update File: P\\n@@\\n context\\n-old\\n+new\\n*** End Patch\\n\",\"revisions\":{\"P\":REV}}; " +
			"*** Add File: P with + lines and revision null creates a file. Hunks start with a bare @@.\n"
	default:
		s += "Edit format: line edits. {\"files\":[{\"path\":P,\"expected_revision\":REV,\"edits\":[{\"start_line\":A,\"end_line\":B,\"new_text\":T}]}]}; " +
			"line numbers are those of numbered_content, all against the file as read.\n"
	}
	switch m {
	case permission.Manual:
		s += "Mode: manual: file changes and commands that are not plainly safe ask a person first."
	case permission.AcceptEdits:
		s += "Mode: accept-edits: file changes apply without asking; commands that are not plainly safe ask a person first."
	case permission.Workspace:
		s += "Mode: workspace: file changes and sandboxed, offline, workspace-only commands run without asking; network, writes outside the workspace and unconfined commands ask a person first."
	default:
		s += "Mode: unset: nothing is changed or run; the user must choose a mode (s-code mcp --mode)."
	}
	return s
}
