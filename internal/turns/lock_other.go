//go:build !unix

package turns

import (
	"errors"
	"fmt"
)

// Lock is not available on this system: it returns an error wrapping errors.ErrUnsupported.
func (s *Store) Lock() (unlock func(), err error) {
	return nil, fmt.Errorf("turn records lock: %w", errors.ErrUnsupported)
}
