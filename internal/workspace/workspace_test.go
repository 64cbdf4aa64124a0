package workspace_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/internal/workspace"
)

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		root, path string
		want       bool
	}{
		{"/a", "/a", true},
		{"/a", "/a/b", true},
		{"/a", "/ab", false},
		{"/a/b", "/a", false},
		{"/", "/x", true},
		{"", "/x", false},
		{"a", "a/b", false},
		{"/a/", "/a/b", false}, // not clean
		{"/a", "/a/../b", false},
	} {
		if got := workspace.Within(tc.root, tc.path); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.root, tc.path, got, tc.want)
		}
	}
}

// real returns p with symbolic links resolved (t.TempDir may sit below a link).
func real(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolveGitTopLevel(t *testing.T) {
	git := testenv.RequireTool(t, "git")
	repo := real(t, t.TempDir())
	if out, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	plain := real(t, t.TempDir())
	other := real(t, t.TempDir())
	// A linked worktree has a .git file.
	wt := filepath.Join(real(t, t.TempDir()), "wt")
	if err := os.MkdirAll(filepath.Join(wt, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+repo+"/.git/worktrees/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cwd, override, want string
	}{
		{"repo-root", repo, "", repo},
		{"subdir", sub, "", repo},
		{"through-link", link, "", repo},
		{"not-a-repo", plain, "", plain},
		{"override", sub, other, other},
		{"relative-override", sub, "..", filepath.Join(repo, "a")},
		{"git-file", filepath.Join(wt, "src"), "", wt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := workspace.Resolve(tc.cwd, tc.override)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Resolve(%q, %q) = %q, want %q", tc.cwd, tc.override, got, tc.want)
			}
		})
	}
	if _, err := workspace.Resolve("rel/dir", ""); err == nil {
		t.Error("Resolve of a relative cwd: no error")
	}
	if _, err := workspace.Resolve(filepath.Join(plain, "missing"), ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Resolve of a missing cwd: %v, want not-exist", err)
	}
}

// TestResolveStopsBelowHome: a home directory kept in Git does not make the home the
// workspace of a project below it.
func TestResolveStopsBelowHome(t *testing.T) {
	home := real(t, t.TempDir())
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(home, "proj", "src")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := workspace.Resolve(proj, "")
	if err != nil {
		t.Fatal(err)
	}
	if got != proj {
		t.Errorf("Resolve = %q, want the cwd %q (the walk stops below the home)", got, proj)
	}
}

// TestValidateRefuses covers every rule of Validate with a real directory.
func TestValidateRefuses(t *testing.T) {
	git := testenv.RequireTool(t, "git")
	home := real(t, t.TempDir())
	repo := filepath.Join(home, "src", "repo")
	if out, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	bare := filepath.Join(home, "src", "bare.git")
	if out, err := exec.Command(git, "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v: %s", err, out)
	}
	// A separate Git directory named by a gitdir: line.
	sep := filepath.Join(home, "src", "sepgit")
	if out, err := exec.Command(git, "init", "-q", "--separate-git-dir", sep, filepath.Join(home, "src", "sepwt")).CombinedOutput(); err != nil {
		t.Fatalf("git init --separate-git-dir: %v: %s", err, out)
	}
	state := filepath.Join(home, "var", "s-code-state")
	mk := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk(state)
	uid := os.Geteuid()
	v := workspace.Validation{Home: home, UID: uid, State: []string{state}}
	for _, tc := range []struct {
		name, dir, rule string
	}{
		{"root", "/", workspace.RuleRoot},
		{"home", home, workspace.RuleHome},
		{"above-home", filepath.Dir(home), workspace.RuleHome},
		{"dot-git", filepath.Join(repo, ".git"), workspace.RuleGitDir},
		{"in-dot-git", filepath.Join(repo, ".git", "hooks"), workspace.RuleGitDir},
		{"bare-repo", bare, workspace.RuleGitDir},
		{"in-bare-repo", filepath.Join(bare, "refs"), workspace.RuleGitDir},
		{"gitdir-line", sep, workspace.RuleGitDir},
		{"state", state, workspace.RuleState},
		{"in-state", mk(filepath.Join(state, "audit")), workspace.RuleState},
		{"holds-state", filepath.Join(home, "var"), workspace.RuleState},
		{"relative", "src/repo", workspace.RuleNotResolved},
		{"missing", filepath.Join(home, "nope"), workspace.RuleNotResolved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRule(t, workspace.Validate(tc.dir, v), tc.rule)
		})
	}
	for _, ct := range workspace.ConfigTrees {
		t.Run("config-tree/"+ct.Rel, func(t *testing.T) {
			d := mk(filepath.Join(home, ct.Rel))
			checkRule(t, workspace.Validate(d, v), workspace.RuleConfigTree)
			checkRule(t, workspace.Validate(mk(filepath.Join(d, "inner")), v), workspace.RuleConfigTree)
		})
	}
	// A configuration tree that is a symbolic link (GNU Stow, chezmoi and yadm setups link
	// ~/.config into a dotfiles repository): its target, and what lies inside it, are the
	// tree, and an extra writable path or a workspace there would make it writable.
	t.Run("config-tree-symlinked", func(t *testing.T) {
		h := real(t, t.TempDir())
		dots := mk(filepath.Join(real(t, t.TempDir()), "dotfiles", "config"))
		mk(filepath.Join(dots, "systemd", "user"))
		if err := os.Symlink(dots, filepath.Join(h, ".config")); err != nil {
			t.Fatal(err)
		}
		sv := workspace.Validation{Home: h, UID: uid}
		checkRule(t, workspace.Validate(dots, sv), workspace.RuleConfigTree)
		checkRule(t, workspace.Validate(filepath.Join(dots, "systemd", "user"), sv), workspace.RuleConfigTree)
		checkRule(t, workspace.Validate(filepath.Join(h, ".config"), sv), workspace.RuleConfigTree)
		// The repository holding it stays a workspace (only the linked tree is refused).
		if err := workspace.Validate(filepath.Dir(dots), sv); err != nil {
			t.Errorf("Validate(%s) = %v, want nil", filepath.Dir(dots), err)
		}
	})
	t.Run("other-owner", func(t *testing.T) {
		d := mk(filepath.Join(home, "src", "theirs"))
		other := workspace.Validation{Home: home, UID: uid + 1}
		checkRule(t, workspace.Validate(d, other), workspace.RuleOtherOwner)
	})
	t.Run("symlink-into-git-dir", func(t *testing.T) {
		l := filepath.Join(home, "src", "innocent")
		if err := os.Symlink(filepath.Join(repo, ".git"), l); err != nil {
			t.Fatal(err)
		}
		checkRule(t, workspace.Validate(l, v), workspace.RuleGitDir)
	})
	t.Run("accepted", func(t *testing.T) {
		for _, d := range []string{repo, mk(filepath.Join(repo, "sub")), filepath.Join(home, "src", "sepwt")} {
			if err := workspace.Validate(d, v); err != nil {
				t.Errorf("Validate(%s) = %v, want nil", d, err)
			}
		}
	})
	t.Run("root-helper", func(t *testing.T) {
		if err := workspace.Validate("/", workspace.Validation{UID: -1, AllowRoot: true}); err != nil {
			t.Errorf("Validate(/) for the root helper = %v, want nil", err)
		}
	})
}

func checkRule(t *testing.T, err error, rule string) {
	t.Helper()
	var we *workspace.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v, want a *workspace.Error with rule %s", err, rule)
	}
	if we.Rule != rule {
		t.Fatalf("rule %s (%v), want %s", we.Rule, err, rule)
	}
	if we.Reason == "" {
		t.Fatal("empty reason")
	}
}

func TestStateDirs(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": "/x/state", "XDG_RUNTIME_DIR": "/run/user/7", "XDG_CACHE_HOME": "rel", "S_CODE_TOOL_CACHE_DIR": "/c"}
	got := workspace.StateDirs(func(k string) string { return env[k] }, "/home/u")
	want := map[string]bool{"/x/state/s-code": true, "/run/user/7/s-code": true, "/home/u/.cache/s-code": true, "/home/u/.config/s-code": true, "/c": true, "/var/log/s-code": true, "/run/s-code": true, "/etc/s-code": true}
	if len(got) != len(want) {
		t.Fatalf("StateDirs = %v", got)
	}
	for _, d := range got {
		if !want[d] {
			t.Errorf("unexpected state dir %s", d)
		}
	}
}
