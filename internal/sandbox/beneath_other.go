//go:build unix && !linux

package sandbox

import "golang.org/x/sys/unix"

// openBeneath opens the directory rel beneath the directory dirfd for reading. Without
// openat2(2) only the last component is kept from being a symbolic link (O_NOFOLLOW); this
// system has no PID namespace either, so a process that outlived the command could race
// the post-run check (docs/sandbox.md).
func openBeneath(dirfd int, rel string) (int, error) {
	return unix.Openat(dirfd, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}
