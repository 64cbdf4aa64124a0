//go:build !unix

package sandbox

import (
	"errors"
	"time"
)

// MaxCheckEntries bounds the directory entries QuarantineGit reads in one workspace.
const MaxCheckEntries = 500_000

// ErrCheckIncomplete means QuarantineGit stopped before it had read the whole workspace.
var ErrCheckIncomplete = errors.New("the post-run check of Git directories stopped early")

// QuarantineSuffix is inserted between a quarantined entry's name and the check's tag.
const QuarantineSuffix = ".s-code-quarantine-"

// Since returns errors.ErrUnsupported: there is no sandbox on this system.
func Since(string) (time.Time, error) { return time.Time{}, errors.ErrUnsupported }

// QuarantineGit returns errors.ErrUnsupported: there is no sandbox on this system.
func QuarantineGit(string, time.Time, string) ([]string, error) { return nil, errors.ErrUnsupported }

// Quarantine returns errors.ErrUnsupported: there is no sandbox on this system.
func Quarantine(string, time.Time, string) ([]string, error) { return nil, errors.ErrUnsupported }

// QuarantineControl returns errors.ErrUnsupported: there is no sandbox on this system.
func QuarantineControl(string, time.Time, string) ([]string, error) {
	return nil, errors.ErrUnsupported
}
