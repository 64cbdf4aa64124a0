//go:build unix

package gitsafe

import (
	"fmt"
	"os"
	"syscall"
)

// checkOwner returns a *LayoutError unless path (not followed if a symlink) is owned by the
// effective uid, as git's safe.directory check requires (CVE-2022-24765).
func checkOwner(path string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return &LayoutError{Rule: RuleForeignOwner, Path: path, Reason: "cannot read the owner", Err: err}
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return &LayoutError{Rule: RuleForeignOwner, Path: path, Reason: fmt.Sprintf("owned by uid %d, not by uid %d (CVE-2022-24765)", st.Uid, uid)}
	}
	return nil
}

// fileID returns "DEV:INO" of fi.
func fileID(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return "?"
}

// unixWritable reports whether this process may create entries in dir.
func unixWritable(dir string) bool {
	return syscall.Access(dir, 0x2|0x1) == nil // W_OK|X_OK
}
