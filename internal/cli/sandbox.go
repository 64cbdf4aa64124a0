package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/workspace"
)

func newSandboxCmd(streams IO) *cobra.Command {
	var (
		asJSON, network, yes bool
		workspace            string
	)
	cmd := &cobra.Command{
		Use:   "sandbox [--json] [--network] [--workspace DIR] [--yes] [-- COMMAND [ARG...]]",
		Short: "Show the sandbox profile of a workspace, or run a command in it",
		Long: `sandbox prints the effective sandbox profile of the workspace (the current directory
unless --workspace names one) as a card: writable and read-only roots, denied and protected
paths (and, on Linux, how the protected ones are kept read-only), network, private dependency
caches, environment changes and the kernel features found.

With a command after --, it prints the same card and the network request on stderr, asks for
confirmation on a terminal (or needs --yes in automation; without it the exit status is 126,
"approval required"), then runs the command in that sandbox through s-code-sandbox.`,
		RunE: func(c *cobra.Command, args []string) error {
			if dash := c.ArgsLenAtDash(); dash < 0 && len(args) > 0 {
				return usagef("put the command after --: s-code sandbox [flags] -- %s", strings.Join(args, " "))
			} else if dash > 0 {
				return usagef("unexpected arguments before --: %s", strings.Join(args[:dash], " "))
			}
			return runSandbox(streams, sandboxOptions{json: asJSON, network: network, yes: yes, workspace: workspace, command: args})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the card as one JSON object")
	f.BoolVar(&network, "network", false, "request network access for the command (off by default)")
	f.BoolVar(&yes, "yes", false, "approve running the command without asking (automation)")
	f.StringVar(&workspace, "workspace", "", "the workspace root (default: the current directory)")
	return cmd
}

type sandboxOptions struct {
	json, network, yes bool
	workspace          string
	command            []string
}

// errApprovalRequired is returned (exit 126) when a command needs a person's approval and
// there is no terminal to ask on and no --yes.
var errApprovalRequired = errors.New("approval required: no terminal to ask on; rerun with --yes to approve this command and its sandbox profile")

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
	card := sandbox.NewCard(profile, sandbox.ProbeFeatures(), o.command)
	out := streams.Out
	if len(o.command) > 0 {
		out = streams.Err // the command's stdout stays its own
	}
	if err := writeSandboxCard(out, card, o.json); err != nil {
		return err
	}
	if len(o.command) == 0 {
		return nil
	}
	approved, err := approve(streams, o.yes, card)
	if err != nil {
		return err
	}
	if !approved {
		return &ExitError{Code: ExitDenied, Err: errors.New("not approved: the command did not run")}
	}
	profile.AllowUnconfined = !card.Confined // the person saw the card say why
	launcher, err := sandbox.FindLauncher()
	if err != nil {
		return &ExitError{Code: ExitDenied, Err: err}
	}
	if err := sandbox.Prepare(profile); err != nil {
		return err
	}
	argv, err := sandbox.LauncherArgs(launcher, profile, o.command)
	if err != nil {
		return err
	}
	if wd, err := os.Getwd(); err != nil || !inWorkspace(profile.Workspace, wd) {
		if err := os.Chdir(profile.Workspace); err != nil {
			return fmt.Errorf("chdir workspace: %w", err)
		}
	}
	attr := sandbox.LauncherSysProcAttr(profile)
	if attr == nil {
		// The launcher replaces this process: nothing is left to run the post-run check.
		return execLauncher(launcher, argv, profile.Env.ApplyEnv(os.Environ()), nil)
	}
	if err := sandbox.MakeGitPlaceholders(profile); err != nil {
		return err
	}
	since, err := sandbox.Since(profile.CacheNamespace)
	if err != nil {
		return err
	}
	runErr := execLauncher(launcher, argv, profile.Env.ApplyEnv(os.Environ()), attr)
	// The launcher has ended, and with its PID namespace every process of the command: what
	// the command left that Git would read as configuration or indirection is moved aside.
	q, qerr := sandbox.Quarantine(profile.Workspace, since, since.UTC().Format("20060102T150405.000000000Z"))
	if len(q) > 0 {
		fmt.Fprintf(streams.Err, "s-code: the sandbox moved aside what the command wrote that Git, an editor or an agent would read as configuration (each renamed to NAME%sTAG): %s\n", sandbox.QuarantineSuffix, strings.Join(q, ", "))
	}
	if qerr != nil {
		fmt.Fprintf(streams.Err, "s-code: post-run check: %v\n", qerr)
	}
	return runErr
}

// inWorkspace reports whether dir, made canonical, lies in the workspace ws.
func inWorkspace(ws, dir string) bool {
	c, err := sandbox.Canonical(dir)
	return err == nil && workspace.Within(ws, c)
}

func writeSandboxCard(w io.Writer, card sandbox.Card, asJSON bool) error {
	if asJSON {
		return writeJSON(w, card)
	}
	return card.Write(w)
}

// approve returns whether the command may run: --yes approves; on a terminal the person is
// asked; otherwise errApprovalRequired (exit 126).
func approve(streams IO, yes bool, card sandbox.Card) (bool, error) {
	if yes {
		return true, nil
	}
	in, ok := streams.In.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return false, &ExitError{Code: ExitDenied, Err: errApprovalRequired}
	}
	q := "run this command in the sandbox above? [y/N] "
	if !card.Confined {
		q = "run this command WITHOUT confinement (see above)? [y/N] "
	}
	if _, err := io.WriteString(streams.Err, q); err != nil {
		return false, err
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read approval: %w", err)
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}
