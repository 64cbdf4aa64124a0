//go:build unix

package audit

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock makes opening a FIFO return at once instead of waiting for a writer (fifo(7)).
const oNonBlock = syscall.O_NONBLOCK

// checkOwnerMode returns a *PermissionError when fi is not owned by the effective uid or
// grants any access to group or others.
func checkOwnerMode(path string, fi fs.FileInfo, wantDir bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &PermissionError{Path: path, Problem: "cannot read its owner"}
	}
	if wantDir && !fi.IsDir() {
		return &PermissionError{Path: path, Problem: "is not a directory"}
	}
	if !wantDir && !fi.Mode().IsRegular() {
		return &PermissionError{Path: path, Problem: "is not a regular file"}
	}
	if uid := uint32(os.Geteuid()); st.Uid != uid {
		return &PermissionError{Path: path, Problem: fmt.Sprintf("is owned by uid %d, not by uid %d", st.Uid, uid)}
	}
	if fi.Mode().Perm()&0o077 != 0 {
		want := "0600"
		if wantDir {
			want = "0700"
		}
		return &PermissionError{Path: path, Problem: fmt.Sprintf("has mode %04o; want %s (no access for group or others)", fi.Mode().Perm(), want)}
	}
	return nil
}

// lockDir takes an exclusive, non-blocking flock on the file lock in dir, so that one
// writer at a time extends the chain. The lock lasts until the returned file is closed.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return nil, fmt.Errorf("flock %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("flock %s: %w", path, err)
	}
	return f, nil
}

// fileOwner returns the uid that owns fi.
func fileOwner(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
