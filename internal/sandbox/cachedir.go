package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// WorkspaceMarker is the file in each cache namespace that names the workspace it belongs to
// (its canonical path and a newline). Prepare rewrites it before every command, so its
// modification time is when the workspace last ran a sandboxed command.
const WorkspaceMarker = ".s-code-workspace"

// maxMarker is the most bytes of a workspace marker read: a path, not a file's contents.
const maxMarker = 4096

// recordWorkspace writes p's workspace into its namespace's marker. It replaces whatever is
// there (a symbolic link planted by a sandboxed command is removed, never followed). Failing
// to write it loses only bookkeeping (cache list shows the workspace as unknown), so the
// caller ignores the error.
func recordWorkspace(p Profile) error {
	if p.Workspace == "" {
		return errors.New("profile has no workspace")
	}
	marker := filepath.Join(p.CacheNamespace, WorkspaceMarker)
	if err := os.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, p.Workspace+"\n")
	return errors.Join(err, f.Close())
}

// CacheEntry is one workspace's cache namespace beneath the cache root, as ListCaches finds it.
type CacheEntry struct {
	// Name is the namespace's directory name (Namespace of its workspace).
	Name string `json:"name"`
	// Path is the namespace's directory.
	Path string `json:"path"`
	// Workspace is the workspace the namespace belongs to, from its marker; empty when
	// unknown (a namespace made before markers, or a marker that does not match the
	// namespace's name: Namespace(Workspace) must equal Name).
	Workspace string `json:"workspace"`
	// Missing reports whether Workspace is known and no longer exists as a directory.
	Missing bool `json:"missing"`
	// Bytes is the total size of the regular files in the namespace.
	Bytes int64 `json:"bytes"`
	// LastUsed is when a command last ran in the workspace (the marker's modification
	// time), or without a marker the newest modification time of the namespace's top-level
	// entries.
	LastUsed time.Time `json:"last_used"`
}

// ListCaches returns the cache namespaces beneath root (see CacheRoot), sorted by name. A
// missing root is no caches. Entries that are not directories (or are symbolic links) are
// skipped: nothing S-Code made.
func ListCaches(root string) ([]CacheEntry, error) {
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return []CacheEntry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list caches: %w", err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("list caches: %w", err)
	}
	defer r.Close()
	out := []CacheEntry{}
	for _, de := range des {
		if !de.IsDir() { // DirEntry types come from lstat: a symlink is not a directory
			continue
		}
		e := CacheEntry{Name: de.Name(), Path: filepath.Join(root, de.Name())}
		if err := e.read(r); err != nil {
			return nil, fmt.Errorf("list caches: %s: %w", e.Path, err)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// read fills in the workspace, size and last use of e from the namespace in r.
func (e *CacheEntry) read(r *os.Root) error {
	ns, err := r.OpenRoot(e.Name)
	if err != nil {
		return err
	}
	defer ns.Close()
	if fi, err := ns.Lstat(WorkspaceMarker); err == nil && fi.Mode().IsRegular() && fi.Size() <= maxMarker {
		if b, err := ns.ReadFile(WorkspaceMarker); err == nil {
			ws := strings.TrimSuffix(string(b), "\n")
			// A marker a sandboxed command rewrote to name another workspace does not match
			// this namespace's name: the workspace stays unknown.
			if filepath.IsAbs(ws) && Namespace(ws) == e.Name {
				e.Workspace = ws
				e.LastUsed = fi.ModTime()
			}
		}
	}
	if e.Workspace != "" {
		fi, err := os.Stat(e.Workspace)
		e.Missing = errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || err == nil && !fi.IsDir()
	}
	return fs.WalkDir(ns.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable directory: count what can be read
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if info.Mode().IsRegular() {
			e.Bytes += info.Size()
		}
		if e.Workspace == "" && path != "." && !strings.Contains(path, "/") && info.ModTime().After(e.LastUsed) {
			e.LastUsed = info.ModTime()
		}
		return nil
	})
}

// RemoveCache deletes the cache namespace name beneath root, with everything in it. Go's
// module cache makes its directories read-only, so each directory is first made writable
// by its owner. Every step goes through an os.Root on root: a symbolic link inside the
// namespace (a sandboxed command can make one) is never followed out of the cache root.
func RemoveCache(root, name string) error {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return fmt.Errorf("remove cache: %q is not a cache namespace name", name)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("remove cache: %w", err)
	}
	defer r.Close()
	fi, err := r.Lstat(name)
	if err != nil {
		return fmt.Errorf("remove cache: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("remove cache: %s is not a directory (mode %v)", filepath.Join(root, name), fi.Mode())
	}
	ns, err := r.OpenRoot(name)
	if err != nil {
		return fmt.Errorf("remove cache: %w", err)
	}
	// Best effort: a directory that cannot be made writable makes RemoveAll report it.
	fs.WalkDir(ns.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			ns.Chmod(path, 0o700) // before WalkDir reads it, so a 0500 directory is readable too
		}
		return nil
	})
	ns.Close()
	if err := r.RemoveAll(name); err != nil {
		return fmt.Errorf("remove cache %s: %w", filepath.Join(root, name), err)
	}
	return nil
}
