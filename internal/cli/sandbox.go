package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"mvdan.cc/sh/v3/syntax"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

func newSandboxCmd(streams IO) *cobra.Command {
	var (
		asJSON, network, yes, expand bool
		workspace, socket, mode      string
	)
	cmd := &cobra.Command{
		Use:   "sandbox [--json] [--network] [--workspace DIR] [--yes] [-- COMMAND [ARG...]]",
		Short: "Show the sandbox profile of a workspace, or run a command in it",
		Long: `sandbox prints the effective sandbox profile of the workspace (the current directory
unless --workspace names one) as a card: writable and read-only roots, denied and protected
paths (and, on Linux, how the protected ones are kept read-only), network, private dependency
caches, environment changes and the kernel features found.

With a command after --, it runs the command through the user helper as s-code run does
(the arguments quoted into one bash command): the helper plans it (workspace, verdict,
sandbox profile, network, mode), a plan that needs a person shows its card and asks on a
terminal (or needs --yes in automation; without it the exit status is 126, "approval
required"), and the helper runs exactly that plan in its sandbox and records it in its audit
log. No command runs confined but unrecorded: without a helper the exit status is 125 and
nothing runs. The profile card alone needs no helper.`,
		RunE: func(c *cobra.Command, args []string) error {
			if dash := c.ArgsLenAtDash(); dash < 0 && len(args) > 0 {
				return usagef("put the command after --: s-code sandbox [flags] -- %s", strings.Join(args, " "))
			} else if dash > 0 {
				return usagef("unexpected arguments before --: %s", strings.Join(args[:dash], " "))
			}
			if len(args) > 0 {
				command, err := quoteArgv(args)
				if err != nil {
					return usagef("%v", err)
				}
				return runRun(c.Context(), streams, runFlags{yes: yes, network: network, workspace: workspace, socket: socket, mode: mode, shell: "bash", expand: expand}, command)
			}
			if socket != "" || mode != "" || yes || expand {
				return usagef("--socket, --mode, --yes and --expand apply to a command: s-code sandbox [flags] -- COMMAND")
			}
			return runSandbox(streams, sandboxOptions{json: asJSON, network: network, workspace: workspace})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the card as one JSON object")
	f.BoolVar(&network, "network", false, "request network access for the command (off by default)")
	f.BoolVar(&yes, "yes", false, "approve running the command without asking (automation)")
	f.StringVar(&workspace, "workspace", "", "the workspace root (default: the current directory; with a command, the helper resolves it as s-code run does)")
	f.StringVar(&socket, "socket", "", "the user helper's socket `PATH` for a command (default $S_CODE_USER_SOCKET or $XDG_RUNTIME_DIR/s-code/user.sock)")
	f.StringVar(&mode, "mode", "", "permission `MODE` for a command: manual, accept-edits or workspace (default: the configuration's mode, else manual)")
	f.BoolVar(&expand, "expand", false, "list every path on the approval card")
	return cmd
}

// quoteArgv joins argv into one bash command that runs exactly those arguments.
func quoteArgv(argv []string) (string, error) {
	q := make([]string, len(argv))
	for i, a := range argv {
		var err error
		if q[i], err = syntax.Quote(a, syntax.LangBash); err != nil {
			return "", fmt.Errorf("argument %d cannot be quoted for bash: %w", i+1, err)
		}
	}
	return strings.Join(q, " "), nil
}

type sandboxOptions struct {
	json, network bool
	workspace     string
}

func runSandbox(streams IO, o sandboxOptions) error {
	ws := o.workspace
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("getwd: %w", err)
		}
		ws = wd
	}
	profile, err := sandbox.ForWorkspace(os.Getenv, ws, o.network)
	if err != nil {
		if errors.Is(err, sandbox.ErrRelativePath) || errors.Is(err, sandbox.ErrCacheInWorkspace) || errors.Is(err, sandbox.ErrBadWorkspace) {
			return &ExitError{Code: ExitUsage, Err: err}
		}
		return err
	}
	return writeSandboxCard(streams.Out, sandbox.NewCard(profile, sandbox.ProbeFeatures(), nil), o.json)
}

func writeSandboxCard(w io.Writer, card sandbox.Card, asJSON bool) error {
	if asJSON {
		return writeJSON(w, card)
	}
	return card.Write(w)
}
