//go:build unix

package rootpolicy

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a file or directory not owned by uid 0 or writable by group or others.
func checkOwner(path string, fi fs.FileInfo) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return &UnsafeFileError{Path: path, Reason: "a symbolic link"}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &UnsafeFileError{Path: path, Reason: "owner unknown"}
	}
	if st.Uid != 0 {
		return &UnsafeFileError{Path: path, Reason: fmt.Sprintf("owned by uid %d", st.Uid)}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &UnsafeFileError{Path: path, Reason: fmt.Sprintf("mode %v is writable by group or others", fi.Mode().Perm())}
	}
	return nil
}

// openNoFollow opens path for reading without following a final symbolic link.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &UnsafeFileError{Path: path, Reason: "a symbolic link"}
		}
		return nil, fmt.Errorf("open policy: %w", err)
	}
	return f, nil
}
