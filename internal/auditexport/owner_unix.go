//go:build unix

package auditexport

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

// oSecretFile opens a credential file without following a symbolic link or blocking on a FIFO.
const oSecretFile = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
