//go:build !unix

package audit

import (
	"fmt"
	"io/fs"
	"os"
)

const oNoFollow = 0

const oNonBlock = 0

func checkOwnerMode(path string, fi fs.FileInfo, wantDir bool) error {
	return fmt.Errorf("check owner of %s: %w", path, ErrUnsupported)
}

func lockDir(path string) (*os.File, error) {
	return nil, fmt.Errorf("lock %s: %w", path, ErrUnsupported)
}

// fileOwner reports false: no owner can be read here.
func fileOwner(fs.FileInfo) (uint32, bool) { return 0, false }
