//go:build !linux && !darwin

package launch

import "github.com/s-code-dev/s-code/internal/sandbox"

// Exec fails with ErrUnsupported: this operating system has no sandbox launcher.
func Exec(p sandbox.Profile, argv, env []string) error {
	return &ExitError{ExitCannotRun, ErrUnsupported}
}
