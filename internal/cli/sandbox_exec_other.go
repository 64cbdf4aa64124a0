//go:build !unix

package cli

import "errors"

// execLauncher fails: this system has no sandbox launcher.
func execLauncher(launcher string, argv, env []string) error {
	return &ExitError{Code: ExitDenied, Err: errors.New("s-code sandbox: running commands is not supported on this operating system")}
}
