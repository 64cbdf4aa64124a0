package cli

import (
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/mcpserver"
	"github.com/s-code-dev/s-code/internal/tools"
)

func newMCPCmd(streams IO) *cobra.Command {
	var workspace, mode, format, socket string
	cmd := &cobra.Command{
		Use:   "mcp [--workspace DIR] [--mode MODE] [--edit-format lines|text|patch]",
		Short: "Serve the workspace's tools to an agent over MCP (stdio)",
		Long: `mcp is the agent-facing MCP server: an MCP host (Codex, Claude Code, Gemini CLI, ...) starts it
and speaks JSON-RPC on its stdin and stdout. It serves the core tools (update_plan, list_dir,
glob, grep, read_file, apply_patch, exec_command, git_status, git_diff, git_log, git_show,
git_blame, undo_turn) and tool_search, which loads the deferred tools (sandbox_profile,
audit_query). Commands run through the user helper (s-code-userhelper); one that needs a
person's approval is asked for through MCP elicitation, and never runs without it.

--mode: manual (the default) asks before file changes too; accept-edits applies patches
without asking; workspace is accept-edits until the helper's plans land.
--edit-format selects the apply_patch schema and instructions the model is shown; every
form stays accepted. Diagnostics go to stderr.`,
		Example: `  s-code mcp --workspace ~/src/proj --mode accept-edits
  claude mcp add s-code -- s-code mcp --mode accept-edits`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := tools.ParseMode(mode)
			if err != nil {
				return usagef("--mode: %v", err)
			}
			f, err := tools.ParseEditFormat(format)
			if err != nil {
				return usagef("--edit-format: %v", err)
			}
			ws := workspace
			if ws == "" {
				if ws, err = defaultWorkspace(); err != nil {
					return &ExitError{Code: ExitFailure, Err: err}
				}
			}
			srv, err := mcpserver.New(mcpserver.Options{Workspace: ws, Mode: m, EditFormat: f, Socket: socket})
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			defer srv.Close()
			t := &mcp.IOTransport{Reader: io.NopCloser(streams.In), Writer: nopWriteCloser{streams.Out}}
			if err := srv.Run(cmd.Context(), t); err != nil && !errors.Is(err, io.EOF) && cmd.Context().Err() == nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&workspace, "workspace", "", "workspace root `DIR` (default: the Git top-level of the working directory, else the working directory)")
	fl.StringVar(&mode, "mode", "manual", "permission `MODE`: manual, accept-edits or workspace")
	fl.StringVar(&format, "edit-format", "lines", "apply_patch form shown to the model: lines, text or patch")
	fl.StringVar(&socket, "socket", "", "the user helper's socket `PATH` (default $S_CODE_USER_SOCKET or $XDG_RUNTIME_DIR/s-code/user.sock)")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
