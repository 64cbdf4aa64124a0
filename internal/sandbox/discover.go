package sandbox

import (
	"errors"
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
	return discover(getenv, dir, namespaceProbes{mount: MountNamespaceUsable, pid: PIDNamespaceUsable})
}

// namespaceProbes are MountNamespaceUsable and PIDNamespaceUsable, or a ProfileCache's
// reuse of their answers.
type namespaceProbes struct {
	mount, pid func() error
}

// discover is Discover with the namespace probes given.
func discover(getenv func(string) string, dir string, probes namespaceProbes) (Host, error) {
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
	gd, err := gitDirs(ws, h.Home, os.Geteuid())
	if err != nil {
		return Host{}, err
	}
	h.ToolRoots = append(h.ToolRoots, gd...)
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
	h.StateDirs = existing(stateDirCandidates(getenv, h.Home))
	h.MountNamespace = probes.mount() == nil
	h.PIDNamespace = probes.pid() == nil
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

// toolRoots returns the Go root named by GOROOT (when it holds bin/go and is neither the
// file system root nor the home directory or above it) and that of the go on PATH, and the
// PATH directories outside the home directory and the workspace.
func toolRoots(getenv func(string) string, home, ws string) []string {
	var roots []string
	// A Go root is granted as a whole, so it must be a toolchain's own directory: never the
	// file system root, the home directory or a directory above it (a GOROOT of "/" or a go
	// binary in /bin or ~/bin would make everything readable), the workspace or shared
	// scratch space.
	goRoot := func(r string) {
		r, err := filepath.EvalSymlinks(r)
		if err != nil || r == "/" || within(r, home) || within(r, ws) || within(ws, r) || sharedScratch(r) {
			return
		}
		roots = append(roots, r)
	}
	if goroot := getenv("GOROOT"); filepath.IsAbs(goroot) {
		goRoot(filepath.Clean(goroot))
	}
	if p, err := exec.LookPath("go"); err == nil && filepath.IsAbs(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			goRoot(filepath.Dir(filepath.Dir(r)))
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
	return roots
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

// ErrGitDirRefused means the workspace's .git file names a Git directory outside the
// workspace that the sandbox will not grant: not a Git directory, not owned by the user, or
// one whose grant would open more than the repository (the home directory or above it).
var ErrGitDirRefused = errors.New("the Git directory named by the workspace's .git file cannot be granted")

// gitDirs returns the Git directory and common directory of a linked worktree or a
// submodule checkout (a .git regular file holding "gitdir: PATH") when they lie outside the
// workspace: read-only roots, granted exactly (symbolic links resolved) and only after
// checking that each is a directory owned by the user uid, shaped as a Git directory (HEAD,
// and objects and refs or a commondir), and neither the home directory nor above it. A
// file naming anything else fails with ErrGitDirRefused, so that a file in the workspace can
// never add a root of its choosing to the profile. A .git directory, a .git symbolic link
// (never followed) and no .git give nil, and so does a Git directory inside the workspace.
func gitDirs(ws, home string, uid int) ([]string, error) {
	gitFile := filepath.Join(ws, ".git")
	fi, err := os.Lstat(gitFile)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	b, err := os.ReadFile(gitFile)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrGitDirRefused, gitFile, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	gd, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return nil, fmt.Errorf("%w: %s does not start with \"gitdir: \"", ErrGitDirRefused, gitFile)
	}
	gd = strings.TrimSpace(gd)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(ws, gd)
	}
	gitDir, err := checkGitDir(ws, home, uid, gd, "gitdir")
	if err != nil || gitDir == "" {
		return nil, err
	}
	dirs := []string{gitDir}
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(gitDir, cd)
		}
		common, err := checkGitDir(ws, home, uid, cd, "commondir")
		if err != nil {
			return nil, err
		}
		if common != "" {
			dirs = append(dirs, common)
		}
	}
	return dirs, nil
}

// checkGitDir resolves dir (named by what, for messages) and returns it when it may be
// granted (see gitDirs), "" when it lies inside the workspace (nothing to grant).
func checkGitDir(ws, home string, uid int, dir, what string) (string, error) {
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %s %s: %w", ErrGitDirRefused, what, dir, err)
	}
	if within(ws, r) {
		return "", nil
	}
	if r == "/" || within(r, home) || within(r, ws) {
		return "", fmt.Errorf("%w: %s %s is or contains the home directory or the workspace; only a repository's own Git directory is granted", ErrGitDirRefused, what, r)
	}
	fi, err := os.Lstat(r)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%w: %s %s is not a directory", ErrGitDirRefused, what, r)
	}
	if owner, ok := fileOwner(fi); !ok || owner != uid {
		return "", fmt.Errorf("%w: %s %s is owned by uid %d, not by the user (uid %d)", ErrGitDirRefused, what, r, owner, uid)
	}
	has := func(name string, dir bool) bool {
		fi, err := os.Lstat(filepath.Join(r, name))
		return err == nil && fi.IsDir() == dir && fi.Mode()&os.ModeSymlink == 0
	}
	if !has("HEAD", false) || !(has("commondir", false) || (has("objects", true) && has("refs", true))) {
		return "", fmt.Errorf("%w: %s %s is not a Git directory (it needs HEAD, and objects and refs or a commondir)", ErrGitDirRefused, what, r)
	}
	return r, nil
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
