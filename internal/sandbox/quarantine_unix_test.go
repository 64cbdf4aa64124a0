//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestQuarantineGitNeverLeavesTheWorkspace checks that the post-run check follows no
// symbolic link: a link to a repository outside the workspace, written by the command, is
// itself moved aside, while the outside repository's new config is left alone.
func TestQuarantineGitNeverLeavesTheWorkspace(t *testing.T) {
	base := t.TempDir()
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(ws, "sub"), filepath.Join(outside, ".git", "objects"), filepath.Join(outside, ".git", "refs"), filepath.Join(base, "cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	since, err := Since(filepath.Join(base, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"HEAD": "ref: refs/heads/main\n", "config": "[core]\n\tfsmonitor = x\n"} {
		if err := os.WriteFile(filepath.Join(outside, ".git", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"out": outside, "sub/.git": filepath.Join(outside, ".git")} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	q, err := QuarantineGit(ws, since, "t")
	if err != nil || !slices.Equal(q, []string{"sub/.git"}) {
		t.Fatalf("QuarantineGit = %v, %v; want [sub/.git]", q, err)
	}
	if _, err := os.Stat(filepath.Join(outside, ".git", "config")); err != nil {
		t.Fatalf("the outside repository was touched: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "sub", ".git"+QuarantineSuffix+"t")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was not renamed aside: %v", err)
	}
}
