//go:build unix

package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// execLauncher runs the sandbox launcher. With no process attributes it replaces the s-code
// process with the launcher, so that the command's exit status, signals and terminal are its
// own. With attributes (a new user namespace for the launcher's mount namespace, see
// sandbox.LauncherSysProcAttr) the launcher must be a child: s-code starts it, forwards
// SIGTERM and SIGHUP to it (SIGINT and SIGQUIT from the terminal reach it directly, and
// s-code ignores them meanwhile), and ends with its exit status (128+N for signal N).
func execLauncher(launcher string, argv, env []string, attr *syscall.SysProcAttr) error {
	if attr == nil {
		if err := syscall.Exec(launcher, argv, env); err != nil {
			return &ExitError{Code: ExitDenied, Err: fmt.Errorf("execve %s: %w", launcher, err)}
		}
		return nil
	}
	cmd := exec.Command(launcher)
	cmd.Args, cmd.Env, cmd.SysProcAttr = argv, env, attr
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return &ExitError{Code: ExitDenied, Err: fmt.Errorf("start %s: %w", launcher, err)}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGTERM || s == syscall.SIGHUP {
					cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &ExitError{Code: 128 + int(ws.Signal())}
		}
		return &ExitError{Code: ee.ExitCode()}
	}
	return &ExitError{Code: ExitDenied, Err: fmt.Errorf("wait %s: %w", launcher, err)}
}
