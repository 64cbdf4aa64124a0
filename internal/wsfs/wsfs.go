package wsfs

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/s-code-dev/s-code/safety"
)

// ErrUnsupported is returned by every operation on systems without a resolver (neither
// Linux nor macOS): the file tools refuse to run rather than resolve paths unsafely.
var ErrUnsupported = errors.New("wsfs: workspace file access is not supported on this system")

// Sentinel errors, matched with errors.Is. The typed errors below wrap them.
var (
	// ErrSymlink: a component of the path is a symbolic link.
	ErrSymlink = errors.New("symlink in path")
	// ErrEscape: the path leaves the workspace (a ".." above the root, an absolute path
	// elsewhere).
	ErrEscape = errors.New("path leaves the workspace")
	// ErrProtected: a write into .git or an agent or IDE control file.
	ErrProtected = errors.New("protected path")
	// ErrInvalidPath: an empty path, a NUL byte, or the workspace root itself.
	ErrInvalidPath = errors.New("invalid path")
	// ErrNotRegular: the path names something other than a regular file (a directory, a
	// device, a FIFO, a socket).
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the caller's limit.
	ErrTooLarge = errors.New("file too large")
	// ErrNotExist: the file (or a directory on its path) does not exist.
	ErrNotExist = errors.New("file does not exist")
	// ErrConflict: the final check before a write found content other than expected.
	ErrConflict = errors.New("file changed before the write")
)

// PathError is a refusal of one path, naming the component at fault. It wraps one of
// ErrSymlink, ErrEscape, ErrProtected, ErrInvalidPath, ErrNotRegular or ErrNotExist.
type PathError struct {
	Path      string // the path as given
	Component string // the offending component; empty when the whole path is at fault
	Reason    string // e.g. "is a symlink"
	Err       error  // the sentinel
}

func (e *PathError) Error() string {
	if e.Component == "" {
		return fmt.Sprintf("path %q: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("path %q: component %q %s", e.Path, e.Component, e.Reason)
}

func (e *PathError) Unwrap() error { return e.Err }

// DurabilityError reports that a file was renamed into place but the fsync of its
// directory failed: the new content is visible, but may not survive a crash. Callers must
// treat it as an error that nevertheless wrote the file.
type DurabilityError struct {
	Path string
	Err  error
}

func (e *DurabilityError) Error() string {
	return fmt.Sprintf("%s: written but durability unconfirmed: fsync directory: %v", e.Path, e.Err)
}

func (e *DurabilityError) Unwrap() error { return e.Err }

// Info describes a resolved file, taken with fstat on the same descriptor its bytes were
// read from.
type Info struct {
	Exists bool
	Dev    uint64
	Ino    uint64
	Mode   uint32 // permission bits (0o777 mask)
	Uid    int
	Gid    int
	Nlink  uint64
	Size   int64 // bytes
	// ModTime is the last modification time in nanoseconds since the Unix epoch.
	ModTime int64
}

// ProtectedComponent returns the first component of the clean relative path rel that the
// file tools must never write, and reports whether there is one: Git's metadata (".git")
// and the agent, editor and tool control files of safety.ControlFileNames (".claude",
// ".vscode", ".mcp.json", ".envrc", …), at any depth, in any letter case (macOS and
// Windows volumes usually fold case). Changing one of them makes an agent, an editor or
// Git run commands (CVE-2025-59536, CVE-2025-54136 class).
func ProtectedComponent(rel string) (string, bool) {
	names := append([]string{".git"}, safety.ControlFileNames()...)
	for _, c := range strings.Split(rel, "/") {
		for _, p := range names {
			if strings.EqualFold(c, p) {
				return c, true
			}
		}
	}
	return "", false
}

// cleanRel turns a path given by a caller into a clean path relative to root (an absolute,
// clean directory). It refuses empty paths, NUL bytes, the root itself, a path ending in a
// slash, and paths that leave the root, naming the component at fault.
func cleanRel(root, p string) (string, error) {
	if p == "" {
		return "", &PathError{Path: p, Reason: "is empty", Err: ErrInvalidPath}
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Path: p, Reason: "contains a NUL byte", Err: ErrInvalidPath}
	}
	rel := p
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		if c == root {
			return "", &PathError{Path: p, Reason: "is the workspace root, not a file", Err: ErrInvalidPath}
		}
		prefix := root
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if !strings.HasPrefix(c, prefix) {
			return "", &PathError{Path: p, Reason: fmt.Sprintf("is outside the workspace %s", root), Err: ErrEscape}
		}
		rel = c[len(prefix):]
	}
	// Walk the components lexically; a ".." may not climb above the root.
	var out []string
	for _, c := range strings.Split(rel, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			if len(out) == 0 {
				return "", &PathError{Path: p, Component: "..", Reason: "leaves the workspace", Err: ErrEscape}
			}
			out = out[:len(out)-1]
		default:
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "", &PathError{Path: p, Reason: "is the workspace root, not a file", Err: ErrInvalidPath}
	}
	// A trailing slash names a directory (POSIX.1-2017 4.13 Pathname Resolution): "a.txt/"
	// must not read a.txt, nor "new/" create a file named new.
	if strings.HasSuffix(p, "/") {
		return "", &PathError{Path: p, Reason: "ends with a slash, so it names a directory, not a file", Err: ErrInvalidPath}
	}
	return strings.Join(out, "/"), nil
}

// splitRel returns the directory part ("" for the root) and the last component of a clean
// relative path.
func splitRel(rel string) (dir, base string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// WriteOptions tune WriteFile.
type WriteOptions struct {
	// Perm is the permission of a new file (and of a file whose current mode is unknown).
	// An existing file keeps its own mode and, when running as root, its owner.
	Perm uint32
	// MkdirParents creates missing parent directories (0755), each relative to its parent's
	// handle, never through a symlink.
	MkdirParents bool
	// Check, when set, is called with the file's current bytes and info (Exists false for a
	// missing file), read through the same directory handle the write will use, just before
	// the write; a non-nil error aborts the write and is returned as is.
	Check func(current []byte, info Info) error
	// MaxCheckSize bounds the bytes read for Check; larger files fail with ErrTooLarge.
	MaxCheckSize int64
}
