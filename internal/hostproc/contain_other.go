//go:build !linux

package hostproc

import (
	"errors"
	"syscall"
)

// Containment names how a host process and its children are held together.
const (
	ContainCgroup  = "cgroup"  // a cgroup v2 of its own (Linux only)
	ContainSession = "session" // its own session and process group only (children that call setsid escape)
)

// cgroupRoot fails: cgroups are Linux's.
func cgroupRoot() (string, error) { return "", errors.New("cgroup: not on this system") }

func newCgroup(string) (int, error) { return -1, errors.New("cgroup: not on this system") }

// sysProcAttr starts the process as the leader of a new session (and process group), with
// a controlling terminal when tty.
func sysProcAttr(tty bool, _ int, _ bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: tty}
}

// members returns the session leader while it lives: this system offers no cheap list of a
// session's processes here, so the process group signal is what reaches the rest.
func members(sid int, _ string) []int {
	if syscall.Kill(sid, 0) == nil {
		return []int{sid}
	}
	return nil
}

func signalAll(sid int, _ string, sig syscall.Signal) {
	_ = syscall.Kill(-sid, sig)
	_ = syscall.Kill(sid, sig)
}

func killAll(sid int, dir string) { signalAll(sid, dir, syscall.SIGKILL) }

func removeCgroup(string, int) {}
