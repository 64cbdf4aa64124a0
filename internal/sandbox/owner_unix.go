//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

// fileOwner returns the uid that owns the file fi describes, and whether it could tell.
func fileOwner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, false
	}
	return int(st.Uid), true
}
