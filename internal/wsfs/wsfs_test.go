//go:build linux || darwin

package wsfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// modes runs f with openat2 resolution (Linux) and with the per-component O_NOFOLLOW walk
// that kernels without openat2 (ENOSYS) and macOS use.
func modes(t *testing.T, f func(t *testing.T, walk bool)) {
	t.Helper()
	if runtime.GOOS == "linux" {
		t.Run("openat2", func(t *testing.T) { f(t, false) })
	}
	t.Run("walk", func(t *testing.T) { f(t, true) })
}

// layout makes a workspace ws and an outside directory out holding secret.txt, and opens
// ws as a Root in the given mode.
func layout(t *testing.T, walk bool) (r *Root, ws, out string) {
	t.Helper()
	base := t.TempDir()
	ws, out = filepath.Join(base, "ws"), filepath.Join(base, "out")
	for _, d := range []string{ws, out, filepath.Join(ws, "dir")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(out, "secret.txt"), "outside\n")
	write(t, filepath.Join(ws, "dir", "in.txt"), "inside\n")
	r, err := Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	r.walkOnly.Store(walk)
	t.Cleanup(func() { r.Close() })
	return r, r.Path(), out
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestSymlinkLayouts covers the layouts of the symlink CVE class: every read and write
// through them is refused naming the component, and nothing outside changes.
func TestSymlinkLayouts(t *testing.T) {
	modes(t, func(t *testing.T, walk bool) {
		tests := []struct {
			name      string
			setup     func(t *testing.T, ws, out string)
			path      string
			component string
		}{
			{"link in the last component", func(t *testing.T, ws, out string) {
				symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(ws, "notes.md"))
			}, "notes.md", "notes.md"},
			{"relative link in the last component", func(t *testing.T, ws, out string) {
				symlink(t, "../out/secret.txt", filepath.Join(ws, "notes.md"))
			}, "notes.md", "notes.md"},
			{"dangling link to outside", func(t *testing.T, ws, out string) {
				symlink(t, filepath.Join(out, "created-by-write.txt"), filepath.Join(ws, "new.md"))
			}, "new.md", "new.md"},
			{"linked directory", func(t *testing.T, ws, out string) {
				symlink(t, out, filepath.Join(ws, "linked"))
			}, "linked/secret.txt", "linked"},
			{"linked directory deeper", func(t *testing.T, ws, out string) {
				symlink(t, out, filepath.Join(ws, "dir", "linked"))
			}, "dir/linked/secret.txt", "linked"},
			{"link to /", func(t *testing.T, ws, out string) {
				symlink(t, "/", filepath.Join(ws, "root"))
			}, "root%OUT%/secret.txt", "root"},
			{"link inside the workspace", func(t *testing.T, ws, out string) {
				symlink(t, "dir/in.txt", filepath.Join(ws, "alias.txt"))
			}, "alias.txt", "alias.txt"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r, ws, out := layout(t, walk)
				tc.setup(t, ws, out)
				before := snapshot(t, out)
				path := strings.ReplaceAll(tc.path, "%OUT%", out)

				_, _, err := r.ReadFile(path, 0)
				wantSymlink(t, "ReadFile", err, tc.component)
				err = r.WriteFile(path, []byte("pwned\n"), WriteOptions{MkdirParents: true})
				wantSymlink(t, "WriteFile", err, tc.component)
				err = r.Remove(path, WriteOptions{})
				wantSymlink(t, "Remove", err, tc.component)

				if after := snapshot(t, out); !equalSnap(before, after) {
					t.Errorf("outside directory changed:\nbefore %v\nafter  %v", before, after)
				}
			})
		}
	})
}

func wantSymlink(t *testing.T, op string, err error, component string) {
	t.Helper()
	var pe *PathError
	if !errors.Is(err, ErrSymlink) || !errors.As(err, &pe) {
		t.Fatalf("%s: error %v, want ErrSymlink", op, err)
	}
	if pe.Component != component {
		t.Errorf("%s: component %q, want %q (%v)", op, pe.Component, component, err)
	}
}

type entry struct {
	name  string
	data  string
	mtime int64
}

// snapshot lists dir recursively with contents and mtimes (without following links).
func snapshot(t *testing.T, dir string) []entry {
	t.Helper()
	var out []entry
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		e := entry{name: p, mtime: info.ModTime().UnixNano()}
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.data = string(b)
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalSnap(a, b []entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPathRefusals(t *testing.T) {
	modes(t, func(t *testing.T, walk bool) {
		r, ws, out := layout(t, walk)
		tests := []struct {
			name      string
			path      string
			want      error
			component string
		}{
			{"dotdot above the root", "../out/secret.txt", ErrEscape, ".."},
			{"dotdot inside then above", "dir/../../out/secret.txt", ErrEscape, ".."},
			{"absolute outside", filepath.Join(out, "secret.txt"), ErrEscape, ""},
			{"empty", "", ErrInvalidPath, ""},
			{"the root itself", ".", ErrInvalidPath, ""},
			{"the root, absolute", ws, ErrInvalidPath, ""},
			{"NUL", "a\x00b", ErrInvalidPath, ""},
			{"trailing slash on a file", "dir/in.txt/", ErrInvalidPath, ""},
			{"trailing slash, absolute", filepath.Join(ws, "dir", "in.txt") + "/", ErrInvalidPath, ""},
			{"trailing slash on a directory", "dir/", ErrInvalidPath, ""},
			{"missing", "dir/nope.txt", ErrNotExist, "nope.txt"},
			{"missing directory", "nodir/x.txt", ErrNotExist, "nodir"},
			{"file used as directory", "dir/in.txt/x", ErrNotRegular, "in.txt"},
			{"a directory", "dir", ErrNotRegular, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, _, err := r.ReadFile(tc.path, 0)
				var pe *PathError
				if !errors.Is(err, tc.want) || !errors.As(err, &pe) {
					t.Fatalf("ReadFile(%q) error %v, want %v", tc.path, err, tc.want)
				}
				if pe.Component != tc.component {
					t.Errorf("component %q, want %q (%v)", pe.Component, tc.component, err)
				}
			})
		}
		// A name ending in a slash names a directory: no file is created under it.
		for _, p := range []string{"new/", "newdir/x/"} {
			if err := r.WriteFile(p, []byte("x"), WriteOptions{MkdirParents: true}); !errors.Is(err, ErrInvalidPath) {
				t.Errorf("WriteFile(%q) = %v, want ErrInvalidPath", p, err)
			}
			if _, err := os.Lstat(filepath.Join(ws, strings.Split(p, "/")[0])); err == nil {
				t.Errorf("WriteFile(%q) created %s", p, strings.Split(p, "/")[0])
			}
		}
		// Absolute paths inside the root and lexical ".." that stay inside are accepted.
		for _, p := range []string{filepath.Join(ws, "dir", "in.txt"), "dir/../dir/./in.txt"} {
			if b, _, err := r.ReadFile(p, 0); err != nil || string(b) != "inside\n" {
				t.Errorf("ReadFile(%q) = %q, %v", p, b, err)
			}
		}
	})
}

func TestProtected(t *testing.T) {
	r, _, _ := layout(t, false)
	for _, p := range []string{".git/config", ".GIT/hooks/pre-commit", "sub/.git/config", ".claude/settings.json",
		".codex/config.toml", ".gemini/settings.json", ".Cursor/rules", ".vscode/tasks.json", ".mcp.json", "pkg/.MCP.json",
		// The rest of ShellSafety's control-file list: the file tools protect the same names.
		".idea/workspace.xml", ".envrc", ".husky/pre-commit", ".devcontainer/devcontainer.json"} {
		t.Run(p, func(t *testing.T) {
			err := r.WriteFile(p, []byte("x"), WriteOptions{MkdirParents: true})
			if !errors.Is(err, ErrProtected) {
				t.Fatalf("WriteFile(%q) = %v, want ErrProtected", p, err)
			}
			if _, err := os.Lstat(filepath.Join(r.Path(), filepath.Dir(p))); p != ".mcp.json" && p != ".envrc" && filepath.Dir(p) != "." && err == nil && filepath.Dir(p) != "pkg" {
				t.Errorf("WriteFile(%q) created its directory", p)
			}
		})
	}
	for _, p := range []string{"git/config", ".github/workflows/ci.yml", "a.gitignore", "mcp.json", "docs/.vscodeignore"} {
		if _, ok := ProtectedComponent(p); ok {
			t.Errorf("ProtectedComponent(%q) = true, want false", p)
		}
	}
}

func TestWriteFile(t *testing.T) {
	modes(t, func(t *testing.T, walk bool) {
		r, ws, _ := layout(t, walk)
		p := filepath.Join(ws, "dir", "in.txt")
		if err := os.Chmod(p, 0o600); err != nil {
			t.Fatal(err)
		}
		var seen []byte
		err := r.WriteFile("dir/in.txt", []byte("new\n"), WriteOptions{Check: func(cur []byte, info Info) error {
			seen = cur
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if string(seen) != "inside\n" {
			t.Errorf("Check saw %q", seen)
		}
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("mode after write = %v, %v; want 0600 kept", st.Mode(), err)
		}
		if b, _ := os.ReadFile(p); string(b) != "new\n" {
			t.Errorf("content %q", b)
		}
		// A refusing Check leaves the file alone.
		errNo := errors.New("no")
		if err := r.WriteFile("dir/in.txt", []byte("x"), WriteOptions{Check: func([]byte, Info) error { return errNo }}); !errors.Is(err, errNo) {
			t.Errorf("refused write = %v", err)
		}
		if b, _ := os.ReadFile(p); string(b) != "new\n" {
			t.Errorf("content after refused write %q", b)
		}
		// New file in new directories.
		if err := r.WriteFile("a/b/c.txt", []byte("c\n"), WriteOptions{MkdirParents: true}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "a/b/c.txt")); string(b) != "c\n" {
			t.Errorf("new file %q", b)
		}
		// No temporary file is left behind.
		ents, _ := os.ReadDir(filepath.Join(ws, "dir"))
		if len(ents) != 1 {
			t.Errorf("dir holds %v", ents)
		}
		// Remove.
		if err := r.Remove("a/b/c.txt", WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(ws, "a/b/c.txt")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after Remove: %v", err)
		}
	})
}

func TestDurabilityError(t *testing.T) {
	r, ws, _ := layout(t, false)
	errSync := errors.New("injected fsync failure")
	r.syncDir = func(int) error { return errSync }
	err := r.WriteFile("dir/in.txt", []byte("new\n"), WriteOptions{})
	var de *DurabilityError
	if !errors.As(err, &de) || !errors.Is(err, errSync) {
		t.Fatalf("WriteFile = %v, want *DurabilityError", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "dir/in.txt")); string(b) != "new\n" {
		t.Errorf("content %q: the file must be written", b)
	}
}

// TestParentSwappedBetweenCheckAndUse swaps the parent directory for a symlink to the
// outside directory after the final check and before the rename: the write lands in the
// directory that was checked (now moved aside), never outside.
func TestParentSwappedBetweenCheckAndUse(t *testing.T) {
	modes(t, func(t *testing.T, walk bool) {
		r, ws, out := layout(t, walk)
		before := snapshot(t, out)
		err := r.WriteFile("dir/secret.txt", []byte("pwned\n"), WriteOptions{Check: func([]byte, Info) error {
			if err := os.Rename(filepath.Join(ws, "dir"), filepath.Join(ws, "moved")); err != nil {
				return err
			}
			return os.Symlink(out, filepath.Join(ws, "dir"))
		}})
		if err != nil {
			t.Fatalf("WriteFile: %v", err)
		}
		if after := snapshot(t, out); !equalSnap(before, after) {
			t.Fatalf("outside directory changed: %v", after)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "moved", "secret.txt")); string(b) != "pwned\n" {
			t.Errorf("the write did not land in the checked directory: %q", b)
		}
		// The next operation sees the link and refuses it.
		_, _, err = r.ReadFile("dir/secret.txt", 0)
		wantSymlink(t, "ReadFile after swap", err, "dir")
	})
}

func TestFoldsCase(t *testing.T) {
	r, ws, _ := layout(t, false)
	write(t, filepath.Join(ws, "Readme.md"), "x")
	write(t, filepath.Join(ws, "123"), "x")
	got, err := r.FoldsCase("Readme.md")
	if err != nil || got {
		t.Fatalf("FoldsCase on a case-sensitive directory = %v, %v", got, err)
	}
	if got, err := r.FoldsCase("123"); err != nil || got {
		t.Fatalf("FoldsCase on a name without letters = %v, %v", got, err)
	}
	// A distinct file under the swapped name: still case-sensitive.
	write(t, filepath.Join(ws, "rEADME.MD"), "y")
	if got, _ := r.FoldsCase("Readme.md"); got {
		t.Errorf("two distinct files reported as folding")
	}
	// The probe's own logic on a real directory: a hard link under the swapped name is what
	// a case-insensitive lookup returns (the same inode), so the probe must say it folds.
	os.Remove(filepath.Join(ws, "rEADME.MD"))
	if err := os.Link(filepath.Join(ws, "Readme.md"), filepath.Join(ws, "rEADME.MD")); err != nil {
		t.Fatal(err)
	}
	if got, err := r.FoldsCase("Readme.md"); err != nil || !got {
		t.Errorf("FoldsCase with a same-inode swapped name = %v, %v; want true", got, err)
	}
}

func TestReadFileLimit(t *testing.T) {
	r, ws, _ := layout(t, false)
	write(t, filepath.Join(ws, "big"), string(bytes.Repeat([]byte("x"), 100)))
	if _, _, err := r.ReadFile("big", 99); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile over the limit = %v", err)
	}
	if b, _, err := r.ReadFile("big", 100); err != nil || len(b) != 100 {
		t.Errorf("ReadFile at the limit = %d, %v", len(b), err)
	}
}

// TestOpenat2Missing: where openat2 reports ENOSYS (Linux before 5.6, macOS), the root
// switches to the O_NOFOLLOW walk for good, and still refuses symlinks.
func TestOpenat2Missing(t *testing.T) {
	r, ws, out := layout(t, false)
	calls := 0
	r.openat2Fn = func(int, string, int) (int, error) { calls++; return -1, unix.ENOSYS }
	symlink(t, out, filepath.Join(ws, "linked"))
	if b, _, err := r.ReadFile("dir/in.txt", 0); err != nil || string(b) != "inside\n" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if !r.walkOnly.Load() {
		t.Fatal("ENOSYS did not switch the root to the walk")
	}
	_, _, err := r.ReadFile("linked/secret.txt", 0)
	wantSymlink(t, "ReadFile", err, "linked")
	if calls != 1 {
		t.Errorf("openat2 called %d times, want once", calls)
	}
}

// TestOpenThroughSymlink: a workspace opened through a symlinked path (as /tmp is on macOS,
// or a working directory reached through a link) accepts absolute paths under that path as
// well as under the canonical one, and still refuses paths that leave it.
func TestOpenThroughSymlink(t *testing.T) {
	_, ws, out := layout(t, false)
	link := filepath.Join(t.TempDir(), "link")
	symlink(t, ws, link)
	r, err := Open(link)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	for _, p := range []string{filepath.Join(link, "dir", "in.txt"), filepath.Join(ws, "dir", "in.txt"), link + "//dir/./in.txt"} {
		if b, _, err := r.ReadFile(p, 0); err != nil || string(b) != "inside\n" {
			t.Errorf("ReadFile(%q) = %q, %v", p, b, err)
		}
	}
	for _, tc := range []struct {
		path string
		want error
	}{
		{link + "/../out/secret.txt", ErrEscape},
		{link, ErrInvalidPath},
		{link + "/dir/in.txt/", ErrInvalidPath},
		{link + "x/dir/in.txt", ErrEscape},
		{filepath.Join(out, "secret.txt"), ErrEscape},
	} {
		if _, _, err := r.ReadFile(tc.path, 0); !errors.Is(err, tc.want) {
			t.Errorf("ReadFile(%q) = %v, want %v", tc.path, err, tc.want)
		}
	}
}
