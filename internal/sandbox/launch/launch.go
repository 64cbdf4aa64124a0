package launch

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

// Exit statuses of the launcher, as bash uses them for a command it cannot run.
const (
	// ExitCannotRun means the launcher refused or failed to confine the command.
	ExitCannotRun = 126
	// ExitNotFound means the command was not found.
	ExitNotFound = 127
	// ExitUsage means the launcher was called with bad arguments.
	ExitUsage = 2
	// ExitOK is the status after -h or --help, which print the usage and run nothing.
	ExitOK = 0
)

// ExitStatus returns the exit status the launcher process ends with after Run returned err,
// printing err to stderr as "s-code-sandbox: err" unless it is the -h/--help request or the
// end of a command the launcher ran as its init (ErrCommandExited: the command's own status).
func ExitStatus(err error, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if !errors.Is(err, ErrCommandExited) {
		fmt.Fprintf(stderr, "%s: %v\n", sandbox.LauncherName, err)
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitCannotRun
}

// ErrUnsupported means this operating system has no sandbox launcher.
var ErrUnsupported = errors.New("sandbox launcher: not supported on this operating system")

// ErrUnconfined means the kernel cannot confine the command (no Landlock or no seccomp) and
// the profile does not carry a person's approval to run it unconfined.
var ErrUnconfined = errors.New("sandbox launcher: the kernel cannot confine this command and no person approved running it unconfined")

// ErrCommandExited is the error of a launcher that ran the command as its init (see
// sandbox.Profile.PIDNamespace) and saw it end: the ExitError carrying it holds the
// command's status, and nothing went wrong, so the launcher ends with that status silently.
var ErrCommandExited = errors.New("sandbox launcher: the command ended")

// ExitError is a launcher failure with the exit status the launcher process should end with.
type ExitError struct {
	Code int
	Err  error
}

// Error returns the message of the underlying error.
func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *ExitError) Unwrap() error { return e.Err }

// Main runs the launcher (Run) with args (without the program name) and returns the exit
// status its process should end with (see ExitStatus).
func Main(args []string, stderr io.Writer) int { return ExitStatus(Run(args, stderr), stderr) }

// Run is the launcher's main logic: it parses args (without the program name) as
//
//	--profile-json JSON | --profile FILE  -- COMMAND [ARG…]
//
// reads the sandbox profile, confines the process and execs COMMAND with the current
// environment. On success it does not return, or, as the init of the command's PID
// namespace, returns an ExitError wrapping ErrCommandExited with the command's status. Errors are *ExitError values carrying the
// exit status (126: cannot confine or run, 127: command not found, 2: usage).
func Run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet(sandbox.LauncherName, flag.ContinueOnError)
	fs.SetOutput(stderr)
	profileJSON := fs.String("profile-json", "", "the sandbox profile as JSON")
	profileFile := fs.String("profile", "", "a file holding the sandbox profile as JSON")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s --profile-json JSON | --profile FILE -- COMMAND [ARG...]\n", sandbox.LauncherName)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &ExitError{ExitOK, err} // -h, --help: the usage is printed; not an error
		}
		return &ExitError{ExitUsage, err}
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return &ExitError{ExitUsage, errors.New("usage: s-code-sandbox --profile-json JSON -- COMMAND [ARG...]")}
	}
	var raw []byte
	switch {
	case *profileJSON != "" && *profileFile != "":
		return &ExitError{ExitUsage, errors.New("give --profile-json or --profile, not both")}
	case *profileJSON != "":
		raw = []byte(*profileJSON)
	case *profileFile != "":
		b, err := os.ReadFile(*profileFile)
		if err != nil {
			return &ExitError{ExitUsage, fmt.Errorf("read profile: %w", err)}
		}
		raw = b
	default:
		return &ExitError{ExitUsage, errors.New("no sandbox profile: give --profile-json or --profile")}
	}
	p, err := sandbox.ParseProfile(raw)
	if err != nil {
		return &ExitError{ExitUsage, err}
	}
	return Exec(p, argv, os.Environ())
}
