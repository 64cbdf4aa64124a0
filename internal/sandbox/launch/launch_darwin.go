package launch

import (
	"fmt"
	"os/exec"
	"syscall"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

// Exec runs argv under the Seatbelt profile generated from p (sandbox.Seatbelt) by
// exec'ing /usr/bin/sandbox-exec, named by absolute path and never looked up on PATH; it
// returns only on failure. Without sandbox-exec it fails with ErrUnconfined unless
// p.AllowUnconfined.
func Exec(p sandbox.Profile, argv, env []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return &ExitError{ExitNotFound, err}
	}
	f := sandbox.ProbeFeatures()
	if !f.Confines() {
		if !p.AllowUnconfined {
			return &ExitError{ExitCannotRun, fmt.Errorf("%w: %s", ErrUnconfined, f.Problem)}
		}
		err := syscall.Exec(path, argv, env)
		return &ExitError{ExitCannotRun, fmt.Errorf("execve %s: %w", path, err)}
	}
	args := append([]string{"sandbox-exec", "-p", sandbox.Seatbelt(p), path}, argv[1:]...)
	err = syscall.Exec(sandbox.SandboxExec, args, env)
	return &ExitError{ExitCannotRun, fmt.Errorf("execve %s: %w", sandbox.SandboxExec, err)}
}
