package gitsafe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Default limits of a Repo; Options overrides them.
const (
	// DefaultMaxOutput is the most bytes of a git command's standard output a tool keeps
	// (4 MiB); what is beyond it is dropped and the result's Truncated flag is set.
	DefaultMaxOutput = 4 << 20
	// DefaultTimeout is how long one git command may run before its process group is
	// killed.
	DefaultTimeout = 30 * time.Second
	// maxStderr is how many bytes of git's standard error are kept for error messages.
	maxStderr = 16 << 10
)

// ErrGitNotFound is returned when no absolute entry of PATH holds an executable git.
var ErrGitNotFound = errors.New("git not found in an absolute PATH entry")

// ErrUnsupported is returned on systems where gitsafe cannot confine git's processes or
// check file ownership.
var ErrUnsupported = errors.New("gitsafe: unsupported on this operating system")

// ErrTimeout is wrapped by the error of a git command that ran longer than its timeout.
var ErrTimeout = errors.New("git command timed out")

// GitError is a git command that exited with a non-zero status. Stderr holds (the first
// 16 KiB of) what git printed on standard error.
type GitError struct {
	Args     []string // the git subcommand and its arguments, without the hardening prefix
	ExitCode int
	Stderr   string
}

// Error returns "git SUBCOMMAND: " and git's message (or the exit status).
func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.ExitCode)
	}
	sub := ""
	if len(e.Args) > 0 {
		sub = e.Args[0]
	}
	return fmt.Sprintf("git %s: %s", sub, msg)
}

// LookGit returns the absolute path of the git executable found in the first absolute entry
// of the list path (a PATH value) that holds one. Empty and relative entries are skipped,
// so a "." or "" in PATH can never select a git planted in the workspace. It returns
// ErrGitNotFound when no entry holds an executable regular file named git.
func LookGit(path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, "git")
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		return p, nil
	}
	return "", ErrGitNotFound
}

// overrides are the -c settings given to every git command. Command-line configuration
// outranks the repository's own, so each of these holds even if a setting slipped past
// Check. Each names a program git could otherwise start, or a behaviour that writes.
var overrides = []string{
	"core.hooksPath=/dev/null",        // no hooks (githooks(5))
	"core.fsmonitor=false",            // no fsmonitor hook or daemon
	"core.pager=cat",                  // no pager (also --no-pager and GIT_PAGER)
	"core.editor=false",               // no editor
	"sequence.editor=false",           //
	"core.askPass=",                   // no askpass program
	"core.sshCommand=false",           // no ssh wrapper
	"core.gitProxy=",                  // no git:// proxy command
	"core.alternateRefsCommand=",      // no alternate refs command
	"credential.helper=",              // empty value resets the helper list
	"protocol.allow=never",            // no transport at all (lazy fetches of promisor remotes)
	"submodule.recurse=false",         // never recurse into submodules
	"diff.submodule=short",            // never open a submodule's repository for a diff
	"status.submoduleSummary=false",   //
	"diff.external=",                  // no external diff (also --no-ext-diff)
	"commit.gpgSign=false",            // no signing
	"tag.gpgSign=false",               //
	"log.showSignature=false",         // no gpg to verify signatures
	"gpg.program=false",               //
	"maintenance.auto=false",          // no automatic maintenance
	"gc.auto=0",                       // no automatic gc
	"gc.autoDetach=false",             //
	"safe.bareRepository=explicit",    // never pick up a bare repository by discovery
	"color.ui=false",                  // plain output
	"diff.noprefix=false",             // a/ and b/ prefixes, as the parsers expect
	"diff.mnemonicPrefix=false",       //
	"blame.ignoreRevsFile=",           // no revision list read from a path the repo names
	"core.excludesFile=",              // no ignore, attributes or mailmap file from a path the
	"core.attributesFile=",            // repo names: it could be a FIFO or /dev/zero outside
	"mailmap.file=",                   // the workspace (the in-tree files still apply)
	"blame.markIgnoredLines=false",    //
	"blame.markUnblamableLines=false", //
}

// diffCommands are the git subcommands that can show a diff: each gets --no-ext-diff and
// --no-textconv so that no diff driver program runs (git-diff(1), gitattributes(5)).
var diffCommands = map[string]bool{"diff": true, "log": true, "show": true, "diff-tree": true}

// env returns the environment of every git command, built from nothing: no inherited GIT_*
// variable (GIT_DIR, GIT_CONFIG_*, GIT_EXEC_PATH, GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND …), no
// user or system configuration, no pager, no prompts, no optional locks, the repository
// pinned to the checked directories (pin.go) and the work tree.
func (r *Repo) env(p *pinned) []string {
	gitBin := filepath.Dir(r.git)
	path := gitBin
	for _, d := range []string{"/usr/bin", "/bin"} {
		if d != gitBin {
			path += ":" + d
		}
	}
	return []string{
		"PATH=" + path,
		// HOME is a non-directory: neither ~/.gitconfig nor ~/.config/git/{config,attributes,ignore}
		// can exist under it, and XDG_CONFIG_HOME is not passed.
		"HOME=/dev/null",
		"LC_ALL=C",
		"LANG=C",
		"TZ=UTC",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"GIT_NO_LAZY_FETCH=1",
		"GIT_PROTOCOL_FROM_USER=0",
		"GIT_DIR=" + p.gitDir,
		"GIT_COMMON_DIR=" + p.commonDir,
		"GIT_WORK_TREE=" + r.workspace,
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(r.workspace),
	}
}

// argv returns git's full argument list for the subcommand args: the hardening prefix,
// the subcommand, and --no-ext-diff --no-textconv where the subcommand can show a diff.
func argv(args []string) []string {
	out := make([]string, 0, 2*len(overrides)+len(args)+4)
	out = append(out, "--no-pager", "--no-replace-objects")
	for _, o := range overrides {
		out = append(out, "-c", o)
	}
	if len(args) == 0 {
		return out
	}
	out = append(out, args[0])
	if diffCommands[args[0]] {
		out = append(out, "--no-ext-diff", "--no-textconv")
	}
	if args[0] == "blame" {
		out = append(out, "--no-textconv")
	}
	return append(out, args[1:]...)
}

// output is what one git command printed.
type output struct {
	stdout    []byte
	truncated bool // stdout reached the cap; the rest was dropped and the process killed
}

// capWriter keeps the first max bytes written to it and notes whether more came; once full
// it calls full (once), which stops the process.
type capWriter struct {
	buf       bytes.Buffer
	max       int
	truncated bool
	full      func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room < len(p) {
		if room > 0 {
			w.buf.Write(p[:room])
		}
		if !w.truncated {
			w.truncated = true
			if w.full != nil {
				w.full()
			}
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}

// Run checks the repository (Check) and then runs the git subcommand args[0] with
// arguments args[1:] through the hardened runner, with stdin as its standard input (nil for
// none; a byte slice, so that no copying goroutine can outlive a killed git). It returns the standard output, capped at the Repo's MaxOutput (truncated reports
// the cap was reached). It returns a *ConfigError or *LayoutError when the repository is
// refused, a *GitError when git exits non-zero, and an error wrapping ErrTimeout or the
// context's error when the command was stopped. Arguments are passed as they are: callers
// put anything a user chose after "--end-of-options" or "--".
func (r *Repo) Run(ctx context.Context, stdin []byte, args ...string) (stdout []byte, truncated bool, err error) {
	out, err := r.run(ctx, stdin, args)
	if err != nil {
		return nil, false, err
	}
	return out.stdout, out.truncated, nil
}

func (r *Repo) run(ctx context.Context, stdin []byte, args []string) (*output, error) {
	if len(args) == 0 {
		return nil, errors.New("gitsafe: no git subcommand")
	}
	l, err := r.check()
	if err != nil {
		return nil, err
	}
	if r.afterCheck != nil {
		r.afterCheck()
	}
	p, err := pinLayout(l)
	if err != nil {
		return nil, err
	}
	defer p.release()
	out, err := r.runPinned(ctx, p, stdin, args)
	if verr := p.verify(l); verr != nil {
		return nil, verr
	}
	return out, err
}

// runPinned runs git on the pinned view p of the checked repository.
func (r *Repo) runPinned(ctx context.Context, p *pinned, stdin []byte, args []string) (*output, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, r.timeout, ErrTimeout)
	defer cancel()

	cmd := exec.CommandContext(ctx, r.git, argv(args)...)
	cmd.Env = r.env(p)
	cmd.Dir = r.workspace
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := setProcessGroup(cmd); err != nil {
		return nil, err
	}
	cmd.Cancel = func() error { return killProcessGroup(cmd) }
	cmd.WaitDelay = time.Second
	stop := make(chan struct{}, 1)
	out := &capWriter{max: r.maxOutput, full: func() { stop <- struct{}{} }}
	errw := &capWriter{max: maxStderr}
	cmd.Stdout = out
	cmd.Stderr = errw

	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start git %s: %w", args[0], err)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waitErr:
	case <-stop:
		// Output cap reached: nothing more is wanted, stop git and its children.
		_ = killProcessGroup(cmd)
		werr = <-waitErr
		return &output{stdout: out.buf.Bytes(), truncated: true}, nil
	}
	if out.truncated {
		return &output{stdout: out.buf.Bytes(), truncated: true}, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], context.Cause(ctx))
	}
	if werr != nil {
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			return nil, &GitError{Args: args, ExitCode: ee.ExitCode(), Stderr: errw.buf.String()}
		}
		return nil, fmt.Errorf("git %s: %w", args[0], werr)
	}
	return &output{stdout: out.buf.Bytes()}, nil
}
