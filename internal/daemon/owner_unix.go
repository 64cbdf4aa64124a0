//go:build unix

package daemon

import (
	"io/fs"
	"syscall"
)

// fileOwner returns the uid that owns fi's file.
func fileOwner(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}
