//go:build !unix

package cli

import (
	"errors"
	"syscall"
)

// execLauncher fails: this system has no sandbox launcher.
func execLauncher(launcher string, argv, env []string, attr *syscall.SysProcAttr) error {
	return &ExitError{Code: ExitDenied, Err: errors.New("s-code sandbox: running commands is not supported on this operating system")}
}
