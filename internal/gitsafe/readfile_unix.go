//go:build unix

package gitsafe

import (
	"os"
	"syscall"
)

// openNonBlocking opens path for reading with O_NONBLOCK, so that opening a FIFO without a
// writer returns at once (open(2), fifo(7)).
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
}
