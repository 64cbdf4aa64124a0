//go:build !linux && !darwin

package wsfs

import "io/fs"

// Root is a workspace directory handle; on this system every operation returns
// ErrUnsupported.
type Root struct{ path string }

// Open returns ErrUnsupported on this system.
func Open(string) (*Root, error) { return nil, ErrUnsupported }

// Path returns the workspace root path.
func (r *Root) Path() string { return r.path }

// Close returns ErrUnsupported on this system.
func (r *Root) Close() error { return ErrUnsupported }

// Rel returns ErrUnsupported on this system.
func (r *Root) Rel(string) (string, error) { return "", ErrUnsupported }

// Abs returns the complete path of rel.
func (r *Root) Abs(rel string) string { return r.path + "/" + rel }

// ReadFile returns ErrUnsupported on this system.
func (r *Root) ReadFile(string, int64) ([]byte, Info, error) { return nil, Info{}, ErrUnsupported }

// CheckWritable returns ErrUnsupported on this system.
func (r *Root) CheckWritable(string) (string, error) { return "", ErrUnsupported }

// WriteFile returns ErrUnsupported on this system.
func (r *Root) WriteFile(string, []byte, WriteOptions) error { return ErrUnsupported }

// Remove returns ErrUnsupported on this system.
func (r *Root) Remove(string, WriteOptions) error { return ErrUnsupported }

// FoldsCase returns ErrUnsupported on this system.
func (r *Root) FoldsCase(string) (bool, error) { return false, ErrUnsupported }

// Staged is a staged write; on this system none can exist.
type Staged struct{}

// Stage returns ErrUnsupported on this system.
func (r *Root) Stage(string, []byte, WriteOptions) (*Staged, error) { return nil, ErrUnsupported }

// Commit returns ErrUnsupported on this system.
func (s *Staged) Commit() error { return ErrUnsupported }

// Abort does nothing on this system.
func (s *Staged) Abort() {}

// Rename returns ErrUnsupported on this system.
func (s *Staged) Rename() error { return ErrUnsupported }

// Sync returns ErrUnsupported on this system.
func (s *Staged) Sync() error { return ErrUnsupported }

// StageUnsynced returns ErrUnsupported on this system.
func (r *Root) StageUnsynced(string, []byte, WriteOptions) (*Staged, error) {
	return nil, ErrUnsupported
}

// SyncTemp returns ErrUnsupported on this system.
func (s *Staged) SyncTemp() error { return ErrUnsupported }

// ReadFileInto returns ErrUnsupported.
func (r *Root) ReadFileInto(string, int64, []byte) ([]byte, Info, error) {
	return nil, Info{}, ErrUnsupported
}

// Dir is a workspace directory; on this system every operation returns ErrUnsupported.
type Dir struct{}

// OpenDir returns ErrUnsupported.
func (r *Root) OpenDir(string) (*Dir, error) { return nil, ErrUnsupported }

// Rel returns "".
func (d *Dir) Rel() string { return "" }

// Join returns name.
func (d *Dir) Join(name string) string { return name }

// ReadDir returns ErrUnsupported.
func (d *Dir) ReadDir() ([]fs.DirEntry, error) { return nil, ErrUnsupported }

// Lstat returns ErrUnsupported.
func (d *Dir) Lstat(string) (Info, fs.FileMode, error) { return Info{}, 0, ErrUnsupported }

// OpenDir returns ErrUnsupported.
func (d *Dir) OpenDir(string) (*Dir, error) { return nil, ErrUnsupported }

// ReadFile returns ErrUnsupported.
func (d *Dir) ReadFile(string, int64) ([]byte, Info, error) { return nil, Info{}, ErrUnsupported }

// Close returns ErrUnsupported.
func (d *Dir) Close() error { return ErrUnsupported }
