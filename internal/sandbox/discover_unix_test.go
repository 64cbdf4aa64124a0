//go:build unix

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// TestWorkspaceFilesNeverWiden checks that what the workspace holds (a .git file naming a
// gitdir, a .git symbolic link, GOROOT pointing at the root) adds no root to the profile
// but the Git directories of a real linked worktree, each granted exactly, and that every
// other gitdir is refused with ErrGitDirRefused and a message that names it.
func TestWorkspaceFilesNeverWiden(t *testing.T) {
	git := testenv.RequireTool(t, "git")
	base := t.TempDir()
	home := filepath.Join(base, "home")
	main := filepath.Join(base, "main")
	for _, d := range []string{home, main, filepath.Join(base, "cache"), filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitRun := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@e", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@e"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(main, "f"), []byte("f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(main, "init", "-q", "-b", "main")
	gitRun(main, "add", ".")
	gitRun(main, "commit", "-qm", "one")
	linked := filepath.Join(base, "linked")
	gitRun(main, "worktree", "add", "-q", linked)
	mainGit, _ := filepath.EvalSymlinks(filepath.Join(main, ".git"))

	getenv := func(goroot string) func(string) string {
		return func(k string) string {
			switch k {
			case "HOME":
				return home
			case CacheDirEnv:
				return filepath.Join(base, "cache")
			case "GOROOT":
				return goroot
			}
			return ""
		}
	}
	t.Run("linked worktree: exactly its Git directories", func(t *testing.T) {
		h, err := Discover(getenv(""), linked)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{filepath.Join(mainGit, "worktrees", "linked"), mainGit} {
			if !slices.Contains(h.ToolRoots, want) {
				t.Errorf("tool roots %v lack %s", h.ToolRoots, want)
			}
		}
		if slices.Contains(h.ToolRoots, main) || slices.Contains(h.ToolRoots, base) {
			t.Errorf("tool roots %v grant more than the Git directories", h.ToolRoots)
		}
	})

	notGit := filepath.Join(base, "notgit")
	if err := os.MkdirAll(filepath.Join(notGit, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	refused := []struct{ name, gitFile string }{
		{"home directory", "gitdir: " + home + "\n"},
		{"above home", "gitdir: " + base + "\n"},
		{"file system root", "gitdir: /\n"},
		{"credential store", "gitdir: " + filepath.Join(home, ".ssh") + "\n"},
		{"not a Git directory", "gitdir: " + notGit + "\n"},
		{"missing", "gitdir: " + filepath.Join(base, "nothing") + "\n"},
		{"not a gitdir line", "[core]\n"},
	}
	if os.Geteuid() == 0 {
		foreign := filepath.Join(base, "foreign.git")
		gitRun(base, "init", "-q", "--bare", foreign)
		filepath.Walk(foreign, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
		refused = append(refused, struct{ name, gitFile string }{"owned by another user", "gitdir: " + foreign + "\n"})
	}
	for _, tt := range refused {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, ".git"), []byte(tt.gitFile), 0o644); err != nil {
				t.Fatal(err)
			}
			h, err := Discover(getenv(""), ws)
			if !errors.Is(err, ErrGitDirRefused) {
				t.Fatalf("Discover = %v, %v; want ErrGitDirRefused", h.ToolRoots, err)
			}
		})
	}
	t.Run("commondir naming the home directory is refused", func(t *testing.T) {
		wt := filepath.Join(base, "evil-wt")
		if err := os.MkdirAll(wt, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wt, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wt, "commondir"), []byte(home+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		ws := filepath.Join(t.TempDir(), "ws")
		os.MkdirAll(ws, 0o755)
		os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+wt+"\n"), 0o644)
		if _, err := Discover(getenv(""), ws); !errors.Is(err, ErrGitDirRefused) {
			t.Fatalf("Discover = %v; want ErrGitDirRefused", err)
		}
	})
	t.Run("a .git symbolic link and GOROOT=/ grant nothing", func(t *testing.T) {
		ws := filepath.Join(t.TempDir(), "ws")
		os.MkdirAll(ws, 0o755)
		if err := os.Symlink(mainGit, filepath.Join(ws, ".git")); err != nil {
			t.Fatal(err)
		}
		h, err := Discover(getenv("/"), ws)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range h.ToolRoots {
			if Within(r, mainGit) || r == "/" {
				t.Errorf("tool root %s comes from the workspace or GOROOT", r)
			}
		}
	})
}
