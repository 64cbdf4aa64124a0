//go:build linux || darwin

package wsfs

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Dir is a directory of the workspace opened from the root's handle without following a
// symlink in any component. Entries are read and opened relative to its own descriptor, so
// a walk never leaves the directory it started in. Close it when done.
type Dir struct {
	f   *os.File
	rel string // clean path relative to the root; "" for the root itself
}

// OpenDir opens the directory p (relative to the root, or absolute inside it; "" or "."
// for the root itself). Errors are *PathError wrapping ErrSymlink, ErrEscape,
// ErrInvalidPath, ErrNotExist or ErrNotRegular (not a directory).
func (r *Root) OpenDir(p string) (*Dir, error) {
	rel := ""
	if p != "" && p != "." && p != "./" && p != r.path && p != r.given {
		q := p
		for len(q) > 1 && q[len(q)-1] == '/' {
			q = q[:len(q)-1] // a directory may be named with a trailing slash
		}
		var err error
		if rel, err = r.Rel(q); err != nil {
			return nil, err
		}
	}
	fd, _, err := r.openDir(p, rel, false)
	if err != nil {
		return nil, err
	}
	return &Dir{f: os.NewFile(uintptr(fd), r.Abs(rel)), rel: rel}, nil
}

// Rel returns the directory's path relative to the root ("" for the root).
func (d *Dir) Rel() string { return d.rel }

// Join returns the root-relative path of the entry name of d.
func (d *Dir) Join(name string) string {
	if d.rel == "" {
		return name
	}
	return d.rel + "/" + name
}

// ReadDir returns every entry of the directory in directory order. An entry's Type is the
// kind of the entry itself (a symlink is reported as a symlink, never followed).
func (d *Dir) ReadDir() ([]fs.DirEntry, error) {
	if _, err := d.f.Seek(0, 0); err != nil {
		return nil, fmt.Errorf("path %q: rewind directory: %w", d.rel, err)
	}
	ents, err := d.f.ReadDir(-1)
	if err != nil {
		return ents, fmt.Errorf("path %q: read directory: %w", d.rel, err)
	}
	return ents, nil
}

// Lstat returns the Info and file mode type bits (fs.ModeDir, fs.ModeSymlink, ...) of the
// entry name of d, without following it.
func (d *Dir) Lstat(name string) (Info, fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.f.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, 0, fmt.Errorf("path %q: fstatat: %w", d.Join(name), err)
	}
	var mode fs.FileMode
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode = fs.ModeDir
	case unix.S_IFLNK:
		mode = fs.ModeSymlink
	case unix.S_IFREG:
	default:
		mode = fs.ModeIrregular
	}
	return infoOf(&st), mode, nil
}

// OpenDir opens the subdirectory name of d (one component) without following a symlink.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	p := d.Join(name)
	if err := oneComponent(p, name); err != nil {
		return nil, err
	}
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, classify(int(d.f.Fd()), p, name, false, err)
	}
	return &Dir{f: os.NewFile(uintptr(fd), p), rel: p}, nil
}

// ReadFile returns the bytes of the regular file name of d (one component), read without
// following a symlink; errors as Root.ReadFile, ErrNotExist for a missing file.
func (d *Dir) ReadFile(name string, max int64) ([]byte, Info, error) {
	p := d.Join(name)
	if err := oneComponent(p, name); err != nil {
		return nil, Info{}, err
	}
	data, info, err := readAt(int(d.f.Fd()), p, name, max)
	if err == nil && !info.Exists {
		return nil, info, &PathError{Path: p, Reason: "does not exist", Err: ErrNotExist}
	}
	return data, info, err
}

// Close releases the directory's descriptor.
func (d *Dir) Close() error { return d.f.Close() }

// oneComponent refuses a name that is not exactly one path component.
func oneComponent(p, name string) error {
	if name == "" || name == "." || name == ".." || containsSlashOrNUL(name) {
		return &PathError{Path: p, Component: name, Reason: "is not a single path component", Err: ErrInvalidPath}
	}
	return nil
}

func containsSlashOrNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' || s[i] == 0 {
			return true
		}
	}
	return false
}
