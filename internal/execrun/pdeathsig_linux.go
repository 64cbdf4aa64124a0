package execrun

import "syscall"

// setParentDeathSignal makes the kernel send SIGKILL to the command's first process when the
// helper dies without cleaning up (SIGKILL, a crash): prctl(2) PR_SET_PDEATHSIG. Processes
// that command started and that left its process group are not covered; under systemd the
// unit's KillMode ends them.
func setParentDeathSignal(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}
