//go:build unix

package turns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Lock waits for the workspace's exclusive lock, an flock(2) on ".lock" in the records
// directory (created 0700 if absent), and returns the function that releases it. Every
// s-code process applying or undoing in the workspace holds it for the whole operation, so
// two patches sharing a turn cannot lose each other's undo entries and two writers sending
// the same expected revision cannot both pass the check (flock(2): the lock belongs to the
// open file description, so it also excludes other handles in the same process).
func (s *Store) Lock() (unlock func(), err error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("turn records: mkdir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, lockName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("turn records: open lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("flock %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}
