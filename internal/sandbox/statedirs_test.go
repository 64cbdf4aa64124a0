package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/s-code-dev/s-code/audit"
)

// TestStateDirCandidates checks which directories a profile hides, from the environment of
// the helper: the runtime directory, the XDG and default state and configuration
// directories of S-Code, the sockets named by S_CODE_*_SOCKET, and the fixed system ones
// (the root helper's audit directory among them).
func TestStateDirCandidates(t *testing.T) {
	env := map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000", "XDG_STATE_HOME": "/x/state", "XDG_CONFIG_HOME": "relative",
		"S_CODE_ROOT_SOCKET": "/srv/sc/root.sock", "S_CODE_USER_SOCKET": "/tmp/u.sock"}
	got := stateDirCandidates(func(k string) string { return env[k] }, "/home/ada")
	for _, want := range []string{"/run/user/1000", "/x/state/s-code", "/home/ada/.local/state/s-code", "/home/ada/.config/s-code",
		"/run/s-code", "/etc/s-code", audit.RootDir, "/srv/sc", "/tmp/u.sock"} {
		if !slices.Contains(got, want) {
			t.Errorf("candidates %q lack %s", got, want)
		}
	}
	if slices.Contains(got, "relative/s-code") || slices.ContainsFunc(got, func(p string) bool { return !filepath.IsAbs(p) }) {
		t.Errorf("a relative XDG value was used: %q", got)
	}
}

// TestNewProfileHides checks that state directories become hidden and denied paths, and that
// one holding the workspace or the cache namespace is left out (it cannot be hidden without
// them).
func TestNewProfileHides(t *testing.T) {
	h := testHost()
	h.StateDirs = []string{"/run/user/1000", "/home/ada/.local/state/s-code", filepath.Dir(h.Workspace), "/etc/s-code"}
	p, err := NewProfile(h, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/run/user/1000", "/home/ada/.local/state/s-code", "/etc/s-code"} {
		if !slices.Contains(p.HiddenPaths, want) || !slices.Contains(p.DeniedPaths, want) {
			t.Errorf("%s not hidden and denied: hidden %q denied %q", want, p.HiddenPaths, p.DeniedPaths)
		}
	}
	if slices.Contains(p.HiddenPaths, filepath.Dir(h.Workspace)) {
		t.Errorf("the directory holding the workspace is hidden: %q", p.HiddenPaths)
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseProfile(b)
	if err != nil || !slices.Equal(q.HiddenPaths, p.HiddenPaths) {
		t.Fatalf("round trip: %v %q", err, q.HiddenPaths)
	}
	// Discover finds the ones that exist.
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(filepath.Join(home, ".config", "s-code"), 0o755)
	os.MkdirAll(ws, 0o755)
	rt := t.TempDir()
	d, err := Discover(func(k string) string {
		return map[string]string{"HOME": home, "XDG_RUNTIME_DIR": rt, CacheDirEnv: t.TempDir()}[k]
	}, ws)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(d.StateDirs, filepath.Join(home, ".config", "s-code")) || !slices.Contains(d.StateDirs, rt) || slices.Contains(d.StateDirs, filepath.Join(home, ".local", "state", "s-code")) {
		t.Errorf("discovered state directories %q", d.StateDirs)
	}
}

// TestToolRootsRefuseWideGoRoots checks that a GOROOT naming the file system root, the home
// directory, a directory above it, the workspace or /tmp never becomes a read-only root, and
// that a real toolchain directory does.
func TestToolRootsRefuseWideGoRoots(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	ws := filepath.Join(home, "src", "ws")
	sdk := filepath.Join(home, "sdk", "go1.26")
	for _, d := range []string{ws, sdk} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home, _ = filepath.EvalSymlinks(home)
	ws, _ = filepath.EvalSymlinks(ws)
	sdk, _ = filepath.EvalSymlinks(sdk)
	for _, goroot := range []string{"/", home, filepath.Dir(home), ws, "/tmp", sdk} {
		roots := toolRoots(func(k string) string {
			if k == "GOROOT" {
				return goroot
			}
			return ""
		}, home, ws)
		if slices.Contains(roots, goroot) {
			t.Errorf("GOROOT=%s became a read-only root: %q", goroot, roots)
		}
	}
	// A toolchain directory outside those is granted (t.TempDir is in /tmp, shared scratch
	// space: a system directory stands in for it).
	toolchain, err := filepath.EvalSymlinks("/usr/share")
	if err != nil {
		t.Skip("no /usr/share")
	}
	roots := toolRoots(func(k string) string {
		if k == "GOROOT" {
			return toolchain
		}
		return ""
	}, home, ws)
	if !slices.Contains(roots, toolchain) {
		t.Errorf("GOROOT %s was not granted: %q", toolchain, roots)
	}
	if slices.Contains(roots, sdk) {
		t.Errorf("a GOROOT in shared scratch space was granted: %q", roots)
	}
}
