package execrun

import (
	"errors"

	"golang.org/x/sys/unix"
)

// waitExited blocks until process pid has exited, without reaping it (waitid(2) with
// WNOWAIT): the zombie keeps its pid, which is the process group id, from being reused
// while the rest of the group is killed. It reports true (it waited).
func waitExited(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return true
		}
	}
}
