package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// CacheDirEnv names the variable that moves the tool-dependencies directory.
const CacheDirEnv = "S_CODE_TOOL_CACHE_DIR"

// CacheRoot returns the directory beneath which each workspace gets its dependency cache
// namespace: $S_CODE_TOOL_CACHE_DIR when set (it must be absolute, else ErrRelativePath),
// else $XDG_CACHE_HOME/s-code/tool-dependencies (a relative XDG_CACHE_HOME is ignored, as
// the XDG Base Directory Specification says), else ~/.cache/s-code/tool-dependencies.
// getenv reads the environment (os.Getenv in production). The result is clean but not yet
// canonical; see Canonical.
func CacheRoot(getenv func(string) string) (string, error) {
	if d := getenv(CacheDirEnv); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("%s=%q: %w; give an absolute directory outside the workspace", CacheDirEnv, d, ErrRelativePath)
		}
		return filepath.Clean(d), nil
	}
	if x := getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "s-code", "tool-dependencies"), nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", fmt.Errorf("tool cache directory: HOME=%q: %w", home, ErrRelativePath)
	}
	return filepath.Join(home, ".cache", "s-code", "tool-dependencies"), nil
}

// Namespace returns the name of the cache namespace of the canonical workspace ws: a
// readable form of its base name and the first 16 hex digits of the SHA-256 of the whole
// path, so that two workspaces never share a namespace and a symlinked path to one
// workspace (once made canonical) maps to the same one.
func Namespace(ws string) string {
	sum := sha256.Sum256([]byte(ws))
	base := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, filepath.Base(ws))
	base = strings.TrimLeft(base, ".")
	if len(base) > 32 {
		base = base[:32]
	}
	if base == "" {
		base = "workspace"
	}
	return base + "-" + hex.EncodeToString(sum[:8])
}

// Canonical returns path made absolute with symbolic links resolved in its longest existing
// prefix; the missing rest is appended as is. It fails only when the working directory or
// an existing component cannot be read.
func Canonical(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("absolute path of %q: %w", path, err)
	}
	rest := ""
	cur := abs
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolve %q: %w", cur, err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// Prepare creates the profile's cache namespace, its cache directories, its temporary
// directory (all mode 0700) and the empty npm configuration files, so that the launcher can
// grant them. It is idempotent; a namespace path that exists as a symbolic link or not as a
// directory is refused.
func Prepare(p Profile) error {
	if p.CacheNamespace == "" {
		return errors.New("prepare sandbox: profile has no cache namespace")
	}
	if err := os.MkdirAll(filepath.Dir(p.CacheNamespace), 0o700); err != nil {
		return fmt.Errorf("prepare sandbox: %w", err)
	}
	if err := os.Mkdir(p.CacheNamespace, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("prepare sandbox: %w", err)
	}
	fi, err := os.Lstat(p.CacheNamespace)
	if err != nil {
		return fmt.Errorf("prepare sandbox: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("prepare sandbox: %s is not a directory (mode %v)", p.CacheNamespace, fi.Mode())
	}
	dirs := []string{p.TempDir}
	for _, c := range p.Caches {
		dirs = append(dirs, c.Path)
	}
	for _, d := range dirs {
		if !within(p.CacheNamespace, d) {
			return fmt.Errorf("prepare sandbox: %s lies outside the cache namespace %s", d, p.CacheNamespace)
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("prepare sandbox: %w", err)
		}
	}
	// Bookkeeping for `s-code cache list`: which workspace, last used. Not a reason to
	// refuse the command when it cannot be written.
	_ = recordWorkspace(p)
	user, global := EmptyNpmrcs(p.CacheNamespace)
	for _, npmrc := range []string{user, global} {
		f, err := os.OpenFile(npmrc, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return fmt.Errorf("prepare sandbox: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("prepare sandbox: %w", err)
		}
	}
	return nil
}
