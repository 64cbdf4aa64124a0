//go:build unix

package gitsafe

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes cmd the leader of a new process group, so that a timeout can kill
// git together with anything it started.
func setProcessGroup(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return nil
}

// killProcessGroup sends SIGKILL to cmd's whole process group.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
