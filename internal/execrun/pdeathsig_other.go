//go:build unix && !linux

package execrun

import "syscall"

// setParentDeathSignal does nothing: only Linux has a parent-death signal (prctl(2)
// PR_SET_PDEATHSIG). On macOS launchd ends a LaunchAgent's processes when it stops.
func setParentDeathSignal(*syscall.SysProcAttr) {}
