//go:build !unix

package gitsafe

import (
	"fmt"
	"os"
)

// openNonBlocking fails closed where a non-blocking open is not known to be available.
func openNonBlocking(path string) (*os.File, error) {
	return nil, fmt.Errorf("open %s: %w", path, ErrUnsupported)
}
