package wsfs

import "golang.org/x/sys/unix"

// openat2 does not exist on macOS: resolution always uses the per-component O_NOFOLLOW walk.
func openat2(int, string, int) (int, error) { return -1, unix.ENOSYS }

// startWriteback does nothing on macOS (no sync_file_range); the fsync does all the work.
func startWriteback(int) {}
