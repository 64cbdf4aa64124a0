package sandbox

import "golang.org/x/sys/unix"

// openBeneath opens the directory rel beneath the directory dirfd for reading, following no
// symbolic link in any component and never leaving dirfd (openat2(2) RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS).
func openBeneath(dirfd int, rel string) (int, error) {
	return unix.Openat2(dirfd, rel, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}
