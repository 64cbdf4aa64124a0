package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Within reports whether path is root or lies beneath it. Both must be absolute and clean
// (filepath.Clean); a relative or empty argument is never within anything, so a caller that
// forgot to resolve a path fails closed. It does no I/O: resolve symbolic links first.
func Within(root, path string) bool {
	if !filepath.IsAbs(root) || !filepath.IsAbs(path) || filepath.Clean(root) != root || filepath.Clean(path) != path {
		return false
	}
	if root == "/" || root == path {
		return true
	}
	return strings.HasPrefix(path, root+"/")
}

// Resolve returns the workspace root for the working directory cwd: override when it is not
// empty, else the nearest directory at or above cwd that holds a .git directory or file (the
// Git top level, found without running git), else cwd itself. The walk stops below the home
// directory ($HOME, when cwd lies beneath it), so that a home directory kept in Git
// (dotfiles) does not make the whole home the workspace. The result is absolute, clean,
// with symbolic links resolved, and an existing directory. cwd must be absolute; a relative
// override is taken relative to cwd. It fails with a wrapped fs error when a directory
// does not exist or is not a directory.
func Resolve(cwd, override string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("workspace: working directory %q is not absolute", cwd)
	}
	if override != "" {
		if !filepath.IsAbs(override) {
			override = filepath.Join(cwd, override)
		}
		return resolveDir("workspace", override)
	}
	wd, err := resolveDir("working directory", cwd)
	if err != nil {
		return "", err
	}
	stop := ""
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		if h, err := filepath.EvalSymlinks(home); err == nil && h != wd && Within(h, wd) {
			stop = h
		}
	}
	for dir := wd; dir != stop; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir, nil
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.ENOTDIR) {
			return "", fmt.Errorf("workspace: look for .git in %s: %w", dir, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return wd, nil
}

// resolveDir returns p (absolute) with symbolic links resolved, cleaned, checked to be an
// existing directory.
func resolveDir(what, p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("workspace: %s %s: %w", what, p, err)
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", fmt.Errorf("workspace: %s %s: %w", what, p, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("workspace: %s %s is not a directory", what, p)
	}
	return filepath.Clean(r), nil
}
