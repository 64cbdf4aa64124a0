//go:build unix

package cli

import (
	"fmt"
	"syscall"
)

// execLauncher replaces the s-code process with the sandbox launcher, so that the command's
// exit status, signals and terminal are its own.
func execLauncher(launcher string, argv, env []string) error {
	if err := syscall.Exec(launcher, argv, env); err != nil {
		return &ExitError{Code: ExitDenied, Err: fmt.Errorf("execve %s: %w", launcher, err)}
	}
	return nil
}
