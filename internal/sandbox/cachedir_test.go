package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// prepared returns the prepared profile of workspace ws (created) with its caches under root.
func prepared(t *testing.T, base, ws, root string) Profile {
	t.Helper()
	h := testHost()
	h.Home, h.Workspace, h.CacheRoot = filepath.Join(base, "home"), ws, root
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := NewProfile(h, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := Prepare(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestListCaches: each namespace names its workspace (from the marker Prepare writes), its
// size and last use; a workspace that is gone is marked missing; a marker rewritten to name
// another workspace, a namespace without a marker, and a planted symlink leave the workspace
// unknown or are skipped.
func TestListCaches(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "cache")
	live := prepared(t, base, filepath.Join(base, "live"), root)
	gone := prepared(t, base, filepath.Join(base, "gone"), root)
	forged := prepared(t, base, filepath.Join(base, "forged"), root)
	if err := os.WriteFile(filepath.Join(live.CacheNamespace, "go", "blob"), make([]byte, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(base, "gone")); err != nil {
		t.Fatal(err)
	}
	// A sandboxed command in "forged" claims its cache belongs to "live".
	if err := os.WriteFile(filepath.Join(forged.CacheNamespace, WorkspaceMarker), []byte(live.Workspace+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "old-0123456789abcdef"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(root, "link-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	got, err := ListCaches(root)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]CacheEntry{}
	for _, e := range got {
		byName[e.Name] = e
	}
	if len(got) != 4 {
		t.Fatalf("ListCaches = %+v, want 4 entries (the symlink skipped)", got)
	}
	for _, tc := range []struct {
		p         Profile
		workspace string
		missing   bool
	}{
		{live, live.Workspace, false},
		{gone, gone.Workspace, true},
		{forged, "", false},
	} {
		e := byName[filepath.Base(tc.p.CacheNamespace)]
		if e.Workspace != tc.workspace || e.Missing != tc.missing || e.Path != tc.p.CacheNamespace {
			t.Errorf("%s: workspace %q missing %v, want %q %v", e.Name, e.Workspace, e.Missing, tc.workspace, tc.missing)
		}
		if e.LastUsed.IsZero() {
			t.Errorf("%s: no last use", e.Name)
		}
	}
	if e := byName[filepath.Base(live.CacheNamespace)]; e.Bytes < 1000 {
		t.Errorf("live: %d bytes, want at least 1000", e.Bytes)
	}
	if e := byName["old-0123456789abcdef"]; e.Workspace != "" || e.Missing {
		t.Errorf("old: %+v, want an unknown workspace", e)
	}
	if got, err := ListCaches(filepath.Join(base, "none")); err != nil || len(got) != 0 {
		t.Errorf("ListCaches(no root) = %v, %v", got, err)
	}
}

// TestRemoveCache: a namespace holding read-only directories (as Go's module cache makes
// them) is removed; a symbolic link inside it to a directory outside is removed as a link,
// and what it points to stays; names that are not one namespace are refused.
func TestRemoveCache(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "cache")
	p := prepared(t, base, filepath.Join(base, "ws"), root)
	mod := filepath.Join(p.CacheNamespace, "go", "pkg", "mod", "example.com", "m@v1.0.0")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module m\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{mod, filepath.Dir(mod)} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(filepath.Join(outside, "keep"), 0o555); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(p.CacheNamespace, "tmp", "escape")); err != nil {
		t.Fatal(err)
	}
	if err := RemoveCache(root, filepath.Base(p.CacheNamespace)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p.CacheNamespace); !os.IsNotExist(err) {
		t.Fatalf("namespace still there: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(outside, "keep")); err != nil || fi.Mode().Perm() != 0o555 {
		t.Fatalf("the link's target was touched: %v %v", fi, err)
	}
	os.Chmod(filepath.Join(outside, "keep"), 0o755)
	for _, bad := range []string{"", ".", "..", "a/b", "../cache"} {
		if err := RemoveCache(root, bad); err == nil {
			t.Errorf("RemoveCache(%q) succeeded", bad)
		}
	}
}
