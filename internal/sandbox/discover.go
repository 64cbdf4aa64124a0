package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Discover returns the Host for the workspace dir: the canonical workspace (it must be an
// existing directory), the canonical tool cache root (see CacheRoot), and the system,
// toolchain and runtime roots and devices that exist on this machine. getenv reads the
// environment (os.Getenv in production). It reads the file system but changes nothing.
func Discover(getenv func(string) string, dir string) (Host, error) {
	return discover(getenv, dir, MountNamespaceUsable)
}

// discover is Discover with the mount-namespace probe given (a ProfileCache's reuses its
// answer).
func discover(getenv func(string) string, dir string, mountNamespaceUsable func() error) (Host, error) {
	var h Host
	h.Home = getenv("HOME")
	if h.Home == "" || !filepath.IsAbs(h.Home) {
		return Host{}, fmt.Errorf("home directory HOME=%q: %w", h.Home, ErrRelativePath)
	}
	h.Home = filepath.Clean(h.Home)
	ws, err := filepath.Abs(dir)
	if err != nil {
		return Host{}, fmt.Errorf("workspace %q: %w", dir, err)
	}
	ws, err = filepath.EvalSymlinks(ws)
	if err != nil {
		return Host{}, fmt.Errorf("workspace: %w", err)
	}
	fi, err := os.Stat(ws)
	if err != nil {
		return Host{}, fmt.Errorf("workspace: %w", err)
	}
	if !fi.IsDir() {
		return Host{}, fmt.Errorf("workspace %s: not a directory", ws)
	}
	h.Workspace = ws
	root, err := CacheRoot(getenv)
	if err != nil {
		return Host{}, err
	}
	if h.CacheRoot, err = Canonical(root); err != nil {
		return Host{}, err
	}
	h.SystemRoots = existing(systemRoots())
	h.ToolRoots = existing(toolRoots(getenv, h.Home, ws))
	var rt []string
	for _, c := range runtimeRootCandidates {
		rt = append(rt, filepath.Join(h.Home, c))
	}
	h.RuntimeRoots = existing(rt)
	cfg := []string{filepath.Join(h.Home, ".gitconfig"), filepath.Join(h.Home, ".config", "git")}
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		cfg = append(cfg, filepath.Join(x, "git"))
	}
	h.HomeConfigFiles = existing(cfg)
	h.Devices = existing(defaultDevices())
	h.SystemDenied = SystemDeniedPaths()
	h.MountNamespace = mountNamespaceUsable() == nil
	return h, nil
}

// ForWorkspace discovers the host (see Discover) and returns the sandbox profile for the
// workspace dir with network on or off.
func ForWorkspace(getenv func(string) string, dir string, network bool) (Profile, error) {
	h, err := Discover(getenv, dir)
	if err != nil {
		return Profile{}, err
	}
	return NewProfile(h, network)
}

// toolRoots returns the Go root of the go on PATH, the PATH directories outside the home
// directory and the workspace, and the Git directories of a linked worktree.
func toolRoots(getenv func(string) string, home, ws string) []string {
	var roots []string
	if goroot := getenv("GOROOT"); filepath.IsAbs(goroot) {
		roots = append(roots, goroot)
	}
	if p, err := exec.LookPath("go"); err == nil && filepath.IsAbs(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			roots = append(roots, filepath.Dir(filepath.Dir(r)))
		}
	}
	for _, d := range filepath.SplitList(getenv("PATH")) {
		if !filepath.IsAbs(d) {
			continue
		}
		r, err := filepath.EvalSymlinks(d)
		if err != nil || r == "/" || within(r, home) || within(home, r) || within(ws, r) || sharedScratch(r) {
			continue
		}
		roots = append(roots, r)
	}
	return append(roots, gitDirs(ws)...)
}

// sharedScratch reports whether dir lies in a directory every process shares for scratch
// or runtime files (/tmp, /var/tmp, /dev, /run): a PATH entry there is not a toolchain, and
// granting it would expose other programs' files.
func sharedScratch(dir string) bool {
	for _, d := range []string{"/tmp", "/var/tmp", "/dev", "/run"} {
		if within(d, dir) {
			return true
		}
	}
	return false
}

// gitDirs returns the Git directory and common directory of a linked worktree (a .git file
// holding "gitdir: PATH"), which lie outside the workspace; nil for an ordinary repository.
func gitDirs(ws string) []string {
	b, err := os.ReadFile(filepath.Join(ws, ".git"))
	if err != nil {
		return nil // a directory, or no repository: nothing outside the workspace
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return nil
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(ws, gd)
	}
	dirs := []string{gd}
	if c, err := os.ReadFile(filepath.Join(gd, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gd, cd)
		}
		dirs = append(dirs, filepath.Clean(cd))
	}
	var out []string
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			out = append(out, r)
		}
	}
	return out
}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}
