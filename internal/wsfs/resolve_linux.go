package wsfs

import "golang.org/x/sys/unix"

// openat2 opens path beneath dirfd with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
// RESOLVE_NO_MAGICLINKS (openat2(2), Linux 5.6): the kernel refuses any symlink, any
// magic link and any escape from dirfd, atomically with the lookup.
func openat2(dirfd int, path string, flags int) (int, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	// EAGAIN: a concurrent rename or mount raced a RESOLVE_* lookup; the kernel asks the
	// caller to retry. Bounded, so a hostile renamer cannot spin us forever.
	var fd int
	var err error
	for range 128 {
		fd, err = unix.Openat2(dirfd, path, &how)
		if err != unix.EINTR && err != unix.EAGAIN {
			break
		}
	}
	return fd, err
}

// startWriteback asks the kernel to start writing fd's dirty pages now
// (sync_file_range(2), SYNC_FILE_RANGE_WRITE), so that a later fsync mostly waits for I/O
// already in flight. Best effort: an error only loses the head start.
func startWriteback(fd int) { unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE) }
