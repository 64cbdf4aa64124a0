package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/workspace"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// ExitHelperUnavailable is the exit status of `s-code run` when no helper could be reached
// (as `docker run` and `timeout` use 125 for their own failures), so that it is never
// mistaken for the command's own status.
const ExitHelperUnavailable = 125

type runFlags struct {
	root      bool
	socket    string
	yes       bool
	workspace string
	cwd       string
	timeout   time.Duration
	network   bool
	shell     string
	env       []string
	mode      string
	writable  []string
	expand    bool
}

func newRunCmd(streams IO) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND",
		Short: "Judge a shell command, then run it through a helper",
		Long: `Run judges COMMAND with ShellSafety, then sends it to the user helper (or with --root to the
root helper), which authenticates this process from the kernel, judges it again and runs it.

The helper decides: it resolves the workspace (the Git top level above the working directory,
else the working directory; --workspace overrides), judges the command in its own context
and policy, and returns its plan (sandbox profile, environment, network, extra writable
paths) with a digest. A plan that needs a person shows its card: on a terminal s-code asks;
otherwise only --yes approves this one plan. The helper runs exactly the plan approved,
once. A deny (the client's own quick check or the helper's) exits 126 and is recorded in
the helper's audit log. A helper that refuses the caller exits 126.

--mode picks the permission mode (default: the mode key of the configuration file
$XDG_CONFIG_HOME/s-code/config.toml, else manual): manual asks for everything that is not
allow; accept-edits also approves file edits policy allows; workspace also approves commands
that run confined, without network, writing only inside the workspace.
Output streams back; SIGINT and SIGTERM are forwarded to the command's process group; the exit
status is the command's own (128+N for signal N). A helper's denial exits 126, an
unreachable helper 125.`,
		Example: `  s-code run -- go vet ./...
  s-code run --yes --timeout 5m -- 'make test'
  s-code run --root -- systemctl restart nginx`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usagef("missing command: give it after --, e.g. s-code run -- go vet ./...")
			}
			if cmd.ArgsLenAtDash() != 0 {
				return usagef("put the command after --, e.g. s-code run -- %s", strings.Join(args, " "))
			}
			return runRun(cmd.Context(), streams, f, strings.Join(args, " "))
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.root, "root", false, "run through the root helper (as root)")
	fl.StringVar(&f.socket, "socket", "", "the helper's socket `PATH` (default $S_CODE_USER_SOCKET or $XDG_RUNTIME_DIR/s-code/user.sock; with --root $S_CODE_ROOT_SOCKET or /run/s-code/root.sock)")
	fl.BoolVar(&f.yes, "yes", false, "approve this one command: an ask verdict, and network with --network")
	fl.StringVar(&f.workspace, "workspace", "", "the workspace root `DIR` (default: the Git top level of the working directory, else the working directory)")
	fl.StringVar(&f.cwd, "cwd", "", "the `DIR` the command runs in (default: the current directory)")
	fl.DurationVar(&f.timeout, "timeout", 0, "kill the command's process group after `DURATION` (default: the helper's)")
	fl.BoolVar(&f.network, "network", false, "network access for this one command (needs a person's approval: --yes, or yes on the terminal)")
	fl.StringVar(&f.shell, "shell", "bash", "the shell that runs the command: bash or sh")
	fl.StringArrayVar(&f.env, "env", nil, "add `NAME=VALUE` to the command's environment (the helper accepts terminal, locale and time zone variables and the names its policy adds; PATH entries are merged when safe)")
	fl.StringVar(&f.mode, "mode", "", "permission `MODE`: manual, accept-edits or workspace (default: the configuration's mode, else manual)")
	fl.StringArrayVar(&f.writable, "writable", nil, "make `DIR` (outside the workspace) writable for this one run (needs a person's approval)")
	fl.BoolVar(&f.expand, "expand", false, "list every path on the approval card")
	return cmd
}

func runRun(ctx context.Context, streams IO, f runFlags, command string) error {
	dialect := safety.Bash
	switch f.shell {
	case "bash":
	case "sh":
		dialect = safety.POSIX
	default:
		return usagef("--shell %q: want bash or sh", f.shell)
	}
	if f.timeout < 0 || f.timeout > time.Duration(1<<32-1)*time.Millisecond {
		return usagef("--timeout %v is out of range", f.timeout)
	}
	mode, err := sessionMode(f.mode)
	if err != nil {
		return err
	}
	cwd, err := absDir(f.cwd, "--cwd")
	if err != nil {
		return err
	}
	override := ""
	if f.workspace != "" {
		if override, err = absDir(f.workspace, "--workspace"); err != nil {
			return err
		}
	}
	var writable []string
	for _, w := range f.writable {
		a, err := absDir(w, "--writable")
		if err != nil {
			return err
		}
		writable = append(writable, a)
	}
	env := helperclient.ForwardedEnv(os.Environ())
	for _, kv := range f.env {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return usagef("--env %q: want NAME=VALUE", kv)
		}
		env[name] = val
	}
	role, sctx := helperclient.User, safety.Context{Role: safety.RoleUser, Cwd: cwd, Dialect: dialect}
	if f.root {
		role, sctx.Role, sctx.Home = helperclient.Root, safety.RoleRoot, "/root"
	} else if sctx.Home, err = os.UserHomeDir(); err != nil {
		return fmt.Errorf("home directory: %w", err)
	}
	// The client's quick pre-filter judges where the helper will: the same workspace.
	if sctx.Workspace, err = workspace.Resolve(cwd, override); err != nil {
		return &ExitError{Code: ExitDenied, Err: err}
	}
	if r, err := filepath.EvalSymlinks(cwd); err == nil {
		sctx.Cwd = r
	}
	v := safety.Check(command, sctx)
	op := helperclient.Operation{
		Command: command, Shell: f.shell, Workspace: override, Cwd: cwd, Env: env, Timeout: f.timeout,
		Mode: mode, Network: f.network, ExtraWritable: writable, Path: os.Getenv("PATH"), ClientVerdict: &v,
	}

	socket := f.socket
	if socket == "" {
		if socket, err = helperclient.DefaultSocket(role); err != nil {
			if v.Decision != safety.Allow && v.Decision != safety.Ask {
				return clientDenial(v)
			}
			return &ExitError{Code: ExitHelperUnavailable, Err: err}
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	client, err := helperclient.Dial(dctx, role, socket)
	cancel()
	if err != nil {
		if v.Decision != safety.Allow && v.Decision != safety.Ask {
			// The deny stands; it could not be recorded.
			fmt.Fprintf(streams.Err, "s-code: the %s helper is unreachable, so this refusal is not in its audit log: %v\n", role, err)
			return clientDenial(v)
		}
		return &ExitError{Code: ExitHelperUnavailable, Err: err}
	}
	defer client.Close()

	// Signals go to the command; the stream itself outlives the CLI's cancelled context, so
	// the command's own exit status comes back. A third signal gives up and disconnects,
	// which makes the helper kill the process group.
	execCtx, execCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer execCancel()
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigc)
	fwd := make(chan helperv1.Signal, 4)
	go func() {
		n := 0
		for {
			select {
			case s := <-sigc:
				n++
				if n >= 3 {
					execCancel()
					return
				}
				if s == syscall.SIGINT {
					fwd <- helperv1.Signal_SIGNAL_INT
				} else {
					fwd <- helperv1.Signal_SIGNAL_TERM
				}
			case <-execCtx.Done():
				return
			}
		}
	}()
	approver := helperclient.ApproverFunc(func(_ context.Context, pl *helperclient.Planned) (permission.Channel, error) {
		return askApproval(streams, pl, f)
	})
	res, _, err := client.Run(execCtx, op, approver, helperclient.Streams{Stdin: streams.In, Stdout: streams.Out, Stderr: streams.Err, Signals: fwd,
		Pending: func(p *helperv1.Pending) {
			fmt.Fprintf(streams.Err, "s-code: request %s waits for a team approver until %s: another person in the group %s runs `s-code approvals approve %s` (or deny)\n",
				p.GetId(), p.GetExpiresAt().AsTime().Local().Format("15:04:05"), p.GetApprovers(), p.GetId()[:min(12, len(p.GetId()))])
		}})
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return err
		}
		if execCtx.Err() != nil {
			return &ExitError{Code: 128 + int(syscall.SIGINT), Err: errors.New("interrupted: disconnected from the helper, which kills the command")}
		}
		if st, ok := status.FromError(err); ok && st.Code() == codes.PermissionDenied {
			// The helper is there and refuses this caller (peer credentials): a refusal, not
			// a missing helper.
			return &ExitError{Code: ExitDenied, Err: fmt.Errorf("refused by the %s helper: %s", role, oneLine(st.Message()))}
		}
		if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
			switch {
			case res == nil || res.RequestID == "":
				// The helper never accepted the request: it did not record or run it.
				return &ExitError{Code: ExitHelperUnavailable, Err: fmt.Errorf("the %s helper on %s never answered the request (%s): the command was not run", role, socket, oneLine(st.Message()))}
			case !res.Started:
				return &ExitError{Code: ExitHelperUnavailable, Err: fmt.Errorf("lost the connection to the %s helper before it reported the command's start (%s): the command may not have run; see the helper's log and `s-code audit list`", role, oneLine(st.Message()))}
			}
			// Connected, then lost: the helper died or was stopped while the command ran.
			return &ExitError{Code: ExitHelperUnavailable, Err: fmt.Errorf("lost the connection to the %s helper while the command ran (%s): its exit status is unknown; see the helper's log and `s-code audit list`", role, oneLine(st.Message()))}
		}
		return &ExitError{Code: ExitHelperUnavailable, Err: fmt.Errorf("%s helper: %w", role, err)}
	}
	if d := res.Denied; d != nil {
		if v.Decision != safety.Allow && v.Decision != safety.Ask {
			return clientDenial(v)
		}
		return &ExitError{Code: ExitDenied, Err: fmt.Errorf("denied by the %s helper: %s: %s", role, d.GetRule(), oneLine(d.GetReason()))}
	}
	switch reason := res.Exited.GetReason(); {
	case res.Exited.GetTimedOut():
		fmt.Fprintf(streams.Err, "s-code: the command timed out after %v and its process group was killed\n", res.Exited.GetDuration().AsDuration().Round(time.Millisecond))
	case reason != "":
		// The helper ended the command (say, it was stopped and its drain time ran out):
		// say so, rather than exit 143 without a word.
		fmt.Fprintf(streams.Err, "s-code: the %s helper ended the command after %v (%s); exit status %d\n", role, res.Exited.GetDuration().AsDuration().Round(time.Millisecond), oneLine(reason), res.Status())
	}
	if st := res.Status(); st != 0 {
		return &ExitError{Code: st}
	}
	return nil
}

// clientDenial is the error of a command the client's own check denied.
func clientDenial(v safety.Verdict) error {
	rule, msg := firstFinding(v, safety.Deny)
	return &ExitError{Code: ExitDenied, Err: fmt.Errorf("denied by ShellSafety: %s: %s", rule, msg)}
}

// absDir returns dir (default: the current directory) as an absolute path; a usage error
// when it does not exist or is not a directory.
func absDir(dir, flag string) (string, error) {
	if dir == "" {
		d, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("current directory: %w", err)
		}
		return d, nil
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", usagef("%s %q: %v", flag, dir, err)
	}
	// A directory that does not exist is the caller's mistake (exit 2), not a helper's
	// denial. One the client may not look into (another user's, for --root) is left for the
	// helper to judge.
	switch fi, err := os.Stat(d); {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return "", usagef("%s %s: no such directory", flag, d)
	case err == nil && !fi.IsDir():
		return "", usagef("%s %s: not a directory", flag, d)
	}
	return d, nil
}

// askApproval shows the plan's card and asks y/N when stdin and stderr are terminals; with
// --yes it approves without asking (channel flag); without a terminal it refuses (exit 126)
// and says how to approve.
func askApproval(streams IO, pl *helperclient.Planned, f runFlags) (permission.Channel, error) {
	if f.yes {
		return permission.ChannelFlag, nil
	}
	in, inOK := streams.In.(*os.File)
	errf, errOK := streams.Err.(*os.File)
	if !inOK || !errOK || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(errf.Fd())) {
		rules := strings.Join(pl.Outcome.Rules, ", ")
		return 0, &ExitError{Code: ExitDenied, Err: fmt.Errorf("approval required: %s: %s (no terminal to ask on; rerun with --yes to approve this one command)", rules, oneLine(pl.Outcome.Reason))}
	}
	question := "Run this command?"
	if pl.Plan.Network {
		question = "Run this command with network access?"
	}
	yes, err := confirmCard(in, streams.Err, question, f.expand, func(opt cardOptions) {
		opt.width, opt.verdict = terminalWidth(streams.Err), true
		writePlanCard(streams.Err, pl.Plan, pl.Outcome, pl.Digest, opt)
	})
	if err != nil {
		return 0, err
	}
	if yes {
		return permission.ChannelTerminal, nil
	}
	return 0, &ExitError{Code: ExitDenied, Err: helperclient.ErrNotApproved}
}

// firstFinding returns the rule id and message of the first finding with decision d (or
// the first finding), for a one-line reason.
func firstFinding(v safety.Verdict, d safety.Decision) (string, string) {
	for _, f := range v.Findings {
		if f.Decision == d {
			return f.Rule, oneLine(f.Message)
		}
	}
	if len(v.Findings) > 0 {
		return v.Findings[0].Rule, oneLine(v.Findings[0].Message)
	}
	return "safety." + d.String(), "ShellSafety says " + d.String()
}

// oneLine escapes newlines and other control characters so a reason stays on one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '␤'
		}
		return r
	}, s)
}
