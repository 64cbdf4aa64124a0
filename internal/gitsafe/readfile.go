package gitsafe

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// maxRepoFile is the most Check reads of one repository file (.git file, commondir,
// alternates, a configuration file): far above any real one, and a bound on what a
// prepared repository can make the check hold in memory.
const maxRepoFile = 4 << 20

// errNotRegular is wrapped by readRepoFile's error for a FIFO, device, socket or directory.
var errNotRegular = errors.New("not a regular file")

// errTooLarge is wrapped by readRepoFile's error for a file over maxRepoFile bytes.
var errTooLarge = errors.New("file too large")

// readRepoFile returns the contents of path, a file of the repository that Check must read
// before git runs. A symlink is followed (as git does), but the file must be a regular file
// of at most maxRepoFile bytes: it is opened without blocking, so a FIFO planted as
// .git/config cannot stall the check, and a link to /dev/zero cannot fill memory. A missing
// file gives an error wrapping fs.ErrNotExist.
func readRepoFile(path string) ([]byte, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("fstat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", errNotRegular, fi.Mode().Type())}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRepoFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxRepoFile {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (over %d bytes)", errTooLarge, maxRepoFile)}
	}
	return data, nil
}
