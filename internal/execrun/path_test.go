package execrun_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/execrun"
)

// TestCheckPathEntry checks each rule of CheckPathEntry on real directories.
func TestCheckPathEntry(t *testing.T) {
	base := t.TempDir()
	os.Chmod(base, 0o755)
	uid := os.Geteuid()
	ws := filepath.Join(base, "ws")
	mk := func(rel string, mode os.FileMode) string {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk("ws/bin", 0o755)
	good := mk("tools/bin", 0o755)
	groupW := mk("groupw", 0o775)
	otherW := mk("otherw", 0o757)
	mk("openparent", 0o777)
	underOpen := mk("openparent/bin", 0o755)
	mk("sticky", 0o777|os.ModeSticky)
	underSticky := mk("sticky/bin", 0o755)
	other := mk("other/bin", 0o755)
	otherUID := uid + 4242
	if uid == 0 {
		otherUID = 0
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(filepath.Join(ws, "bin"), link)
	goodLink := filepath.Join(base, "goodlink")
	os.Symlink(good, goodLink)

	cases := []struct {
		name, dir string
		uid       int
		want      string // resolved form; "" means refused
		reason    string // part of the refusal reason
	}{
		{"good", good, uid, good, ""},
		{"resolved form", goodLink, uid, good, ""},
		{"sticky parent", underSticky, uid, underSticky, ""},
		{"system directory", "/usr/bin", uid, "/usr/bin", ""},
		{"empty", "", uid, "", "empty"},
		{"relative", "bin", uid, "", "not absolute"},
		{"dot", ".", uid, "", "not absolute"},
		{"not clean", good + "/../bin", uid, "", "not clean"},
		{"trailing slash", good + "/", uid, "", "not clean"},
		{"missing", filepath.Join(base, "nope"), uid, "", "does not exist"},
		{"not a directory", file, uid, "", "not a directory"},
		{"inside the workspace", filepath.Join(ws, "bin"), uid, "", "inside the workspace"},
		{"the workspace itself", ws, uid, "", "inside the workspace"},
		{"link into the workspace", link, uid, "", "resolves to"},
		{"group-writable", groupW, uid, "", "writable by group or others"},
		{"other-writable", otherW, uid, "", "writable by group or others"},
		{"parent writable by others", underOpen, uid, "", "its parent"},
		{"owned by another user", other, otherUID, "", "owned by uid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := execrun.CheckPathEntry(tc.dir, ws, tc.uid)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("CheckPathEntry(%q) = %q, %v; want %q", tc.dir, got, err, tc.want)
				}
				return
			}
			var pe *execrun.PathEntryError
			if !errors.As(err, &pe) || got != "" || !strings.Contains(pe.Reason, tc.reason) || pe.Dir != tc.dir {
				t.Fatalf("CheckPathEntry(%q) = %q, %v; want a refusal with %q", tc.dir, got, err, tc.reason)
			}
		})
	}
	if _, err := execrun.CheckPathEntry(good, "", uid); err == nil {
		t.Error("an entry was accepted without a workspace")
	}

	t.Run("merge", func(t *testing.T) {
		caller := strings.Join([]string{"bin", "/usr/bin", good, goodLink, groupW, filepath.Join(ws, "bin"), "", underSticky}, ":")
		got, refused := execrun.MergePathReport(execrun.SafePath, caller, ws, uid)
		if want := execrun.SafePath + ":" + good + ":" + underSticky; got != want {
			t.Errorf("MergePath = %q, want %q", got, want)
		}
		var dirs []string
		for _, r := range refused {
			dirs = append(dirs, r.Dir)
			if r.Reason == "" {
				t.Errorf("%q refused without a reason", r.Dir)
			}
		}
		if want := []string{"bin", groupW, filepath.Join(ws, "bin"), ""}; strings.Join(dirs, "|") != strings.Join(want, "|") {
			t.Errorf("refused %q, want %q", dirs, want)
		}
		if got := execrun.MergePath(execrun.SafePath, "", ws, uid); got != execrun.SafePath {
			t.Errorf("no caller PATH: %q", got)
		}
		if execrun.ValidatePath(got) != nil {
			t.Errorf("merged PATH %q does not pass ValidatePath", got)
		}
	})
	t.Run("limits", func(t *testing.T) {
		long := strings.Repeat(good+":", execrun.MaxCallerPathEntries+3) + underSticky
		got, refused := execrun.MergePathReport(execrun.SafePath, long, ws, uid)
		if got != execrun.SafePath+":"+good || len(refused) != 4 {
			t.Errorf("past the entry limit: %q, %d refused", got, len(refused))
		}
		huge := strings.Repeat("/x", execrun.MaxCallerPathLen)
		if got, refused := execrun.MergePathReport(execrun.SafePath, huge, ws, uid); got != execrun.SafePath || len(refused) != 1 {
			t.Errorf("an over-long PATH: %q, %v", got, refused)
		}
	})
}
