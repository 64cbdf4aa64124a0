//go:build !unix

package sandbox

import "os"

// fileOwner reports false: this system has no uid owners.
func fileOwner(os.FileInfo) (int, bool) { return -1, false }
