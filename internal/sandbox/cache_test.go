package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPrepare checks that Prepare creates the namespace and its files, is idempotent, and
// refuses a namespace or npmrc that a command replaced with a symbolic link (it would
// otherwise truncate the link's target outside the sandbox).
func TestPrepare(t *testing.T) {
	base := t.TempDir()
	h := testHost()
	h.Home, h.Workspace, h.CacheRoot = filepath.Join(base, "home"), filepath.Join(base, "ws"), filepath.Join(base, "cache")
	p, err := NewProfile(h, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := Prepare(p); err != nil {
			t.Fatalf("Prepare #%d: %v", i+1, err)
		}
	}
	for _, c := range p.Caches {
		if fi, err := os.Stat(c.Path); err != nil || !fi.IsDir() {
			t.Errorf("cache %s: %v", c.Path, err)
		}
	}
	user, global := EmptyNpmrcs(p.CacheNamespace)
	victim := filepath.Join(base, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(user)
	if err := os.Symlink(victim, user); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(p); err == nil {
		t.Error("Prepare followed a symlinked npmrc")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the symlink target was changed: %q", b)
	}
	if _, err := os.Stat(global); err != nil {
		t.Errorf("global npmrc: %v", err)
	}
	// A namespace that is a symbolic link is refused.
	os.RemoveAll(p.CacheNamespace)
	if err := os.Symlink(base, p.CacheNamespace); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(p); err == nil {
		t.Error("Prepare accepted a symlinked namespace")
	}
}

// FuzzParseProfile checks that ParseProfile never panics and that a profile it accepts has
// only absolute, clean paths and a workspace.
func FuzzParseProfile(f *testing.F) {
	p, err := NewProfile(testHost(), false)
	if err != nil {
		f.Fatal(err)
	}
	b, _ := p.Marshal()
	f.Add(b)
	f.Add([]byte(`{"workspace":"/w","temp_dir":"/t"}`))
	f.Add([]byte(`{"workspace":"w"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := ParseProfile(in)
		if err != nil {
			return
		}
		if got.Workspace == "" {
			t.Fatal("accepted a profile without a workspace")
		}
		for _, group := range [][]string{{got.Workspace}, got.WritableRoots, got.ReadOnlyRoots, got.Devices, got.DeniedPaths, got.ProtectedPaths} {
			for _, path := range group {
				if !filepath.IsAbs(path) || filepath.Clean(path) != path {
					t.Fatalf("accepted path %q", path)
				}
			}
		}
	})
}
