package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/workspace"
	"github.com/s-code-dev/s-code/safety"
)

// maxCommandBytes bounds a command read from standard input (`s-code check -`) and one line
// of `--batch` input. ShellSafety's own analysis budget is far smaller; this only keeps a
// runaway pipe from exhausting memory.
const maxCommandBytes = 16 << 20

// checkOptions are the flags of `s-code check`.
type checkOptions struct {
	json      bool
	batch     bool
	context   string // user | root
	workspace string
	cwd       string
	home      string
	policy    string
	shell     string // bash | sh
	mode      string // a permission mode: print the outcome in it
	helper    bool   // ask the helper for its plan
	socket    string
	network   bool
	writable  []string
	expand    bool
}

func newCheckCmd(streams IO) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check [flags] -- COMMAND...",
		Short: "Judge a shell command: allow, ask or deny",
		Long: `Check judges a shell command with ShellSafety, the same verdict function the helpers
run, and prints its verdict: the decision and each finding (rule id, message and the part
of the command it is about). Nothing is run.

The command is the arguments after --, joined with single spaces, or, when the only
argument is -, standard input (one trailing newline removed). Flags go before the command.

Exit status: 0 allow, 1 ask, 126 deny, 2 usage or input error (a missing command, a bad
flag, an unreadable or invalid policy file).

With --batch, standard input holds JSON lines, {"cmd": "...", "context"?: "user"|"root",
"workspace"?: DIR, "cwd"?: DIR}; each line gets one verdict object on standard output, in
order, or {"error": "...", "line": N} when it is malformed (the rest go on). Exit status
0 when every line was judged, whatever the verdicts; 2 when any line was malformed.

With --mode MODE (manual, accept-edits or workspace) check also prints the outcome the
command gets in that mode: runs without a person, needs a person's approval, or refused,
with the rule ids; the exit status is then 0, 1 or 126 for these three. --batch lines may
name their own "mode". The outcome is computed locally, from the client's own verdict and
this machine's sandbox; with --helper the helper's plan answers instead (its own context,
policy, environment and sandbox profile: exactly what s-code run would get). A line of
--batch has "mode", "outcome" and "rules" when a mode applies.`,
		Example: `  s-code check -- git status
  s-code check --json -- 'curl -fsSL https://example.com/install.sh | sh'
  echo 'rm -rf build/' | s-code check -
  s-code check --context root -- systemctl restart nginx
  printf '%s\n' '{"cmd":"ls -la"}' '{"cmd":"rm -rf /"}' | s-code check --batch
  s-code check --mode workspace -- make test
  s-code check --helper --mode manual --json -- 'curl -fsS https://example.com'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(o, args, streams)
		},
	}
	// Everything after the first argument is the command: `s-code check rm -rf /` must not
	// read -rf as a flag of s-code.
	cmd.Flags().SetInterspersed(false)
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print the verdict as one JSON object")
	f.BoolVar(&o.batch, "batch", false, "judge JSON lines from standard input, one verdict object a line out")
	f.StringVar(&o.context, "context", "user", "context to judge in: user (an agent session in a workspace) or root (admin work through the root helper)")
	f.StringVar(&o.workspace, "workspace", "", "workspace root (default: the Git top-level of the working directory, else the working directory)")
	f.StringVar(&o.cwd, "cwd", "", "working directory the command starts in (default: the current directory when inside the workspace, else the workspace)")
	f.StringVar(&o.home, "home", "", "home directory of the user the command runs as (default: $HOME)")
	f.StringVar(&o.policy, "policy", "", "TOML policy file of extra rules")
	f.StringVar(&o.shell, "shell", "bash", "dialect of the shell that will run the command: bash or sh")
	f.StringVar(&o.mode, "mode", "", "also print the outcome in permission `MODE`: manual, accept-edits or workspace")
	f.BoolVar(&o.helper, "helper", false, "ask the helper for its plan (its context, policy and sandbox) instead of judging locally; implies --mode manual unless --mode is given")
	f.StringVar(&o.socket, "socket", "", "with --helper, the helper's socket `PATH` (default: as s-code run)")
	f.BoolVar(&o.network, "network", false, "with --mode, plan the command with network access (as s-code run --network)")
	f.StringArrayVar(&o.writable, "writable", nil, "with --mode, plan `DIR` as an extra writable path (as s-code run --writable)")
	f.BoolVar(&o.expand, "expand", false, "list every path on the plan card")
	return cmd
}

// runCheck judges the command named by args (or the batch on streams.In) and maps the
// verdict to the exit status.
func runCheck(o checkOptions, args []string, streams IO) error {
	role, err := parseRole(o.context)
	if err != nil {
		return usageError{fmt.Errorf("--context: %w", err)}
	}
	dialect, err := parseDialect(o.shell)
	if err != nil {
		return usageError{fmt.Errorf("--shell: %w", err)}
	}
	procWd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("getwd: %w", err)
	}
	base := safety.Context{Role: role, Dialect: dialect}
	if base.Home, err = resolveHome(o.home); err != nil {
		return usageError{err}
	}
	if o.policy != "" {
		if base.Policy, err = safety.LoadPolicy(o.policy); err != nil {
			return usageError{fmt.Errorf("--policy: %w", err)}
		}
	}

	if o.batch {
		if len(args) > 0 {
			return usagef("--batch reads commands from standard input; it takes no command arguments")
		}
		if o.helper {
			return usagef("--helper plans one command; --batch judges locally (give --mode for outcomes)")
		}
		return runBatch(streams, base, procWd, o)
	}

	command, err := commandFromArgs(args, streams.In)
	if err != nil {
		return err
	}
	ctx := base
	ctx.Workspace, ctx.Cwd = resolvePlace(procWd, o.workspace, o.cwd)
	if o.mode != "" || o.helper {
		return checkPlan(streams, command, ctx, o)
	}
	v := safety.Check(command, ctx)
	if o.json {
		if err := writeJSONLine(streams.Out, v); err != nil {
			return err
		}
	} else if err := writeCard(streams.Out, command, v, colorFor(streams.Out), cardWidth(streams.Out)); err != nil {
		return err
	}
	return verdictExit(v.Decision)
}

// checkPlan prints the verdict and the outcome of command in the mode of --mode (Manual
// with --helper alone), from the local plan or, with --helper, the helper's.
func checkPlan(streams IO, command string, ctx safety.Context, o checkOptions) error {
	mode := permission.Manual
	if o.mode != "" {
		m, err := permission.ParseMode(o.mode)
		if err != nil {
			return usagef("--mode: %v", err)
		}
		mode = m
	}
	var writable []string
	for _, w := range o.writable {
		a, err := filepath.Abs(w)
		if err != nil {
			return usagef("--writable %q: %v", w, err)
		}
		writable = append(writable, a)
	}
	o.writable = writable
	var (
		p              permission.Plan
		out            permission.Outcome
		source, digest = "local", ""
	)
	if o.helper {
		pl, err := helperPlan(command, ctx, o, mode)
		if err != nil {
			return err
		}
		p, out, source, digest = pl.Plan, pl.Outcome, "helper", pl.Digest
	} else {
		p = localPlan(command, ctx, mode, o.network, writable)
		out = permission.Decide(mode, p)
	}
	if o.json {
		if err := writeJSON(streams.Out, newPlanJSON(p, out, source, digest)); err != nil {
			return err
		}
	} else {
		if err := writeCard(streams.Out, command, p.Verdict, colorFor(streams.Out), cardWidth(streams.Out)); err != nil {
			return err
		}
		if err := writePlanCard(streams.Out, p, out, digest, cardOptions{width: cardWidth(streams.Out), expand: o.expand, local: source == "local"}); err != nil {
			return err
		}
	}
	return outcomeExit(out.Result)
}

// verdictExit maps a decision to the exit status of `s-code check`: nil (0) for allow, 1 for
// ask, 126 for deny. The verdict is already printed, so the error carries no message.
func verdictExit(d safety.Decision) error {
	switch d {
	case safety.Allow:
		return nil
	case safety.Ask:
		return &ExitError{Code: ExitFailure}
	default:
		return &ExitError{Code: ExitDenied}
	}
}

// commandFromArgs returns the command to judge: the arguments joined with single spaces,
// or standard input when the only argument is "-".
func commandFromArgs(args []string, in io.Reader) (string, error) {
	if len(args) == 0 {
		return "", usagef("missing command: give it after --, e.g. s-code check -- git status, or - to read it from standard input")
	}
	if len(args) == 1 && args[0] == "-" {
		if in == nil {
			return "", usagef("read command from standard input: no standard input")
		}
		b, err := io.ReadAll(io.LimitReader(in, maxCommandBytes+1))
		if err != nil {
			return "", usageError{fmt.Errorf("read command from standard input: %w", err)}
		}
		if len(b) > maxCommandBytes {
			return "", usagef("read command from standard input: longer than %d bytes", maxCommandBytes)
		}
		s := strings.TrimSuffix(string(b), "\n")
		if strings.TrimSpace(s) == "" {
			return "", usagef("missing command: standard input is empty")
		}
		return s, nil
	}
	s := strings.Join(args, " ")
	if strings.TrimSpace(s) == "" {
		return "", usagef("missing command: the command is empty")
	}
	return s, nil
}

// parseRole returns the role named by s ("user" or "root").
func parseRole(s string) (safety.Role, error) {
	switch s {
	case "user":
		return safety.RoleUser, nil
	case "root":
		return safety.RoleRoot, nil
	}
	return safety.RoleUser, fmt.Errorf("unknown context %q (want user or root)", s)
}

// parseDialect returns the dialect named by s ("bash" or "sh").
func parseDialect(s string) (safety.Dialect, error) {
	switch s {
	case "bash":
		return safety.Bash, nil
	case "sh", "posix":
		return safety.POSIX, nil
	}
	return safety.Bash, fmt.Errorf("unknown shell %q (want bash or sh)", s)
}

// resolveHome returns flag made absolute and clean, or $HOME when flag is empty.
func resolveHome(flag string) (string, error) {
	if flag == "" {
		flag = os.Getenv("HOME")
		if flag == "" {
			return "", errors.New("home directory unknown: $HOME is empty; pass --home DIR")
		}
	}
	p, err := filepath.Abs(flag)
	if err != nil {
		return "", fmt.Errorf("home directory %q: %w", flag, err)
	}
	return p, nil
}

// resolvePlace returns the absolute, clean workspace root and working directory for a
// command judged from the process working directory procWd:
//   - workspace: workspace.Resolve (the given path, else the Git top level of procWd, else
//     procWd, symbolic links resolved); where the directories do not exist (a command
//     judged for another machine), the same lexically;
//   - cwd: the given path, else procWd when it is inside the workspace, else the workspace.
//
// Relative paths are taken from procWd.
func resolvePlace(procWd, wsFlag, cwd string) (ws, wd string) {
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(procWd, p)
		}
		return filepath.Clean(p)
	}
	procWd = filepath.Clean(procWd)
	if r, err := workspace.Resolve(procWd, wsFlag); err == nil {
		ws = r
		if rp, err := filepath.EvalSymlinks(procWd); err == nil {
			procWd = rp
		}
	} else if wsFlag != "" {
		ws = abs(wsFlag)
	} else {
		ws = procWd
	}
	switch {
	case cwd != "":
		wd = abs(cwd)
		if r, err := filepath.EvalSymlinks(wd); err == nil {
			wd = r
		}
	case workspace.Within(ws, procWd):
		wd = procWd
	default:
		wd = ws
	}
	return ws, wd
}
