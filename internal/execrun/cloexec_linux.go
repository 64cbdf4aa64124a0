package execrun

import "golang.org/x/sys/unix"

// MarkInheritedCloseOnExec sets close-on-exec on every descriptor from 3 up, so that
// descriptors this process inherited without it (Go opens its own with O_CLOEXEC) never
// reach a command. It uses close_range(2) with CLOSE_RANGE_CLOEXEC (Linux 5.11) and falls
// back to walking /proc/self/fd.
func MarkInheritedCloseOnExec() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	return markCloseOnExecByList("/proc/self/fd")
}
