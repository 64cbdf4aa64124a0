package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/codemode"
	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
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
audit_query, code_mode). code_mode (Code Mode) runs one JavaScript program that batches the
read-only tools; the configuration's code_mode = true sends it by default. Commands run through the user helper (s-code-userhelper); one that needs a
person's approval is asked for through MCP elicitation, and never runs without it.

The helper decides every command: it plans it (workspace, verdict, sandbox profile, mode),
and runs exactly the plan approved, once. --mode: manual asks for everything that is not
allow, file changes included; accept-edits also applies patches without asking; workspace
also runs sandboxed, offline, workspace-only commands without asking. The default is the
mode key of $XDG_CONFIG_HOME/s-code/config.toml, else manual.
--edit-format selects the apply_patch schema and instructions the model is shown (default:
the configuration's edit_format, else lines); every form stays accepted. Diagnostics go to
stderr.`,
		Example: `  s-code mcp --workspace ~/src/proj --mode accept-edits
  claude mcp add s-code -- s-code mcp --mode accept-edits`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := sessionMode(mode)
			if err != nil {
				return err
			}
			c, err := loadUserConfig()
			if err != nil {
				return usageError{err}
			}
			if format == "" {
				format = c.EditFormat
			}
			f, err := tools.ParseEditFormat(format)
			if err != nil {
				return usagef("--edit-format: %v", err)
			}
			// The workspace is resolved and validated as for every verb (a home directory,
			// the file system root or a config tree is refused).
			ws, err := userWorkspace(workspace)
			if err != nil {
				return err
			}
			// A Code Mode program stuck in a native built-in past its budget cannot be stopped
			// but by the end of the process: the session ends (main exits) with the reason.
			stuck := make(chan error, 1)
			budgets := codemode.Budgets{OnStuck: func(err error) {
				select {
				case stuck <- err:
				default:
				}
			}}
			// The user's host process definitions: the enabled, confirmed MCP servers start
			// on the first tool_search; the pre-call hooks run in the user helper. A file
			// that does not load starts no server, and every call then goes to the helper's
			// PreCall, which refuses it until the file is fixed (fail closed).
			opts := mcpserver.Options{Workspace: ws, Mode: m, EditFormat: f, Socket: socket, CodeMode: c.CodeMode, CodeModeBudgets: budgets,
				Resolver: credhandle.FromEnvironment()}
			if st, home, err := hostStore(); err != nil {
				fmt.Fprintf(streams.Err, "s-code mcp: host process definitions: %v; no host MCP server starts and every tool call is refused by the pre-call hook check\n", err)
				opts.Hooks = true
			} else {
				opts.Home = home
				for _, n := range st.Names() {
					d := st.Defs[n]
					opts.HostProcesses = append(opts.HostProcesses, d)
					if d.Kind == hostdef.KindHook && d.Event == hostdef.EventPreCall && d.Enabled {
						opts.Hooks = true
					}
				}
			}
			srv, err := mcpserver.New(opts)
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			defer srv.Close()
			t := &mcp.IOTransport{Reader: io.NopCloser(streams.In), Writer: nopWriteCloser{streams.Out}}
			done := make(chan error, 1)
			go func() { done <- srv.Run(cmd.Context(), t) }()
			select {
			case err := <-stuck:
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("ending the session: %w", err)}
			case err := <-done:
				if err != nil && !errors.Is(err, io.EOF) && cmd.Context().Err() == nil {
					return &ExitError{Code: ExitFailure, Err: err}
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&workspace, "workspace", "", "workspace root `DIR` (default: the Git top-level of the working directory, else the working directory)")
	fl.StringVar(&mode, "mode", "", "permission `MODE`: manual, accept-edits or workspace (default: the configuration's mode, else manual)")
	fl.StringVar(&format, "edit-format", "", "apply_patch `FORM` shown to the model: lines, text or patch (default: the configuration's edit_format, else lines)")
	fl.StringVar(&socket, "socket", "", "the user helper's socket `PATH` (default $S_CODE_USER_SOCKET or $XDG_RUNTIME_DIR/s-code/user.sock)")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
