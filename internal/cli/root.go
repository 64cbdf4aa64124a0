package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/s-code-dev/s-code/internal/version"
)

// Exit statuses shared by every s-code command.
const (
	ExitOK       = 0   // success; for check, allow
	ExitFailure  = 1   // the command's own failure; for check, ask
	ExitUsage    = 2   // bad flags, arguments or input
	ExitDenied   = 126 // refused by ShellSafety or a helper (bash's "cannot execute")
	exitInternal = 1
)

// ExitError carries a specific exit status out of a command. Err, when set, is printed
// to stderr as "s-code: <err>"; a nil Err prints nothing (the command already spoke).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks an error as the caller's mistake (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns an error that exits with status 2.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// IO is the standard streams a command reads and writes.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// NewRoot returns the s-code command tree writing to streams.
func NewRoot(streams IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "s-code",
		Short: "S-Code: the tools-and-permissions runtime of a coding agent",
		Long: `S-Code judges every shell command an agent proposes (allow, ask or deny), runs the
allowed ones in privilege-separated helpers, reads and patches workspace files by revision,
and inspects Git through a hardened host git.`,
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// `s-code --version` prints what `s-code version` prints, as the helpers' --version does.
	root.SetVersionTemplate("s-code {{.Version}}\n")
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newVersionCmd(streams),
		newAuditCmd(streams),
		newReadCmd(streams),
		newPatchCmd(streams),
		newUndoCmd(streams),
		newCheckCmd(streams),
		newGitCmd(streams),
		newRunCmd(streams),
		newApprovalsCmd(streams),
		newSandboxCmd(streams),
		newMCPCmd(streams),
		newStatusCmd(streams),
		newCacheCmd(streams),
		newMCPServersCmd(streams),
		newTermCmd(streams),
		newHooksCmd(streams),
	)
	strictCompletion(root)
	return root
}

// strictCompletion makes `s-code completion SHELL` refuse a shell it has no script for
// (exit 2) instead of printing its help and exiting 0, which cobra's default command does.
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sub := range c.Commands() {
			shells = append(shells, sub.Name())
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return usagef("completion: no script for the shell %q: give one of %s", args[0], strings.Join(shells, ", "))
		}
	}
}

func newVersionCmd(streams IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the s-code version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(streams.Out, "s-code %s\n", version.Version)
			return err
		},
	}
}

// Main runs the s-code command line args (without the program name) and returns the exit
// status: 0 on success, 2 for usage errors, the ExitError's code where a command set one,
// 1 for any other error. It is the only entry point cmd/agent calls.
func Main(ctx context.Context, args []string, streams IO) int {
	root := NewRoot(streams)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(streams.Err, "s-code: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(streams.Err, "s-code: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		// Point at the help of the command that failed (cobra returns the root for an
		// unknown command), not always at the root's.
		path := root.CommandPath()
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(streams.Err, "Run '%s --help' for usage.\n", path)
		return ExitUsage
	}
	return exitInternal
}

// isCobraUsage reports whether err is one of cobra's own argument errors. Cobra returns
// these as plain fmt errors with no type to test, so this one place reads their text; every
// error of ours is typed (usageError, ExitError).
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
