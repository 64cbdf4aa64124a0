//go:build unix

package execrun

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// markCloseOnExecByList sets FD_CLOEXEC on every descriptor from 3 up listed in dir
// (/proc/self/fd, /dev/fd).
func markCloseOnExecByList(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("execrun: read %s: %w", dir, err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		// The descriptor of the directory listing itself is gone by now: EBADF is fine.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return fmt.Errorf("execrun: fcntl %d F_SETFD: %w", fd, err)
		}
	}
	return nil
}
