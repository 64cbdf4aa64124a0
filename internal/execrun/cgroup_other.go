//go:build !linux

package execrun

import (
	"syscall"
	"time"
)

// commandCgroup is Linux's cgroup v2 of one command; elsewhere there is none.
type commandCgroup struct{}

// CommandCgroups reports false: only Linux has cgroups.
func CommandCgroups() bool { return false }

// newCommandCgroup returns nil: only Linux has cgroups.
func newCommandCgroup() *commandCgroup { return nil }

func (*commandCgroup) apply(*syscall.SysProcAttr) {}

func (*commandCgroup) kill(time.Duration) bool { return true }

func (*commandCgroup) remove() {}
