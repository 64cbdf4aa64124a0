package launch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// gitEnv is the environment the Git tests give git, in and out of the sandbox.
var gitEnv = []string{"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com", "GIT_CONFIG_NOSYSTEM=1"}

// newGitFixture returns a fixture whose workspace is a real repository with one commit on
// main and a nested repository vendor/lib with one commit, both made outside the sandbox.
func newGitFixture(t *testing.T) *fixture {
	t.Helper()
	git := testenv.RequireTool(t, "git")
	f := newFixture(t, false)
	if err := os.RemoveAll(filepath.Join(f.ws, ".git")); err != nil {
		t.Fatal(err)
	}
	f.env = append(f.env, gitEnv...)
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = dir, append(slices.Clone(gitEnv), "HOME="+f.home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	lib := filepath.Join(f.ws, "vendor", "lib")
	write(t, filepath.Join(lib, "a.txt"), "a\n")
	run(lib, "init", "-q", "-b", "main")
	run(lib, "add", ".")
	run(lib, "commit", "-qm", "lib")
	write(t, filepath.Join(f.ws, ".gitignore"), "vendor/\n")
	run(f.ws, "init", "-q", "-b", "main")
	run(f.ws, "add", ".")
	run(f.ws, "commit", "-qm", "first")
	return f
}

// since returns the post-run check's mark for a command about to start under f, after
// preparing its cache namespace.
func (f *fixture) since(t *testing.T) time.Time {
	t.Helper()
	if err := sandbox.Prepare(f.profile); err != nil {
		t.Fatal(err)
	}
	return f.mark(t)
}

// mark returns the post-run check's mark after making the Git placeholders, as
// sandbox.Runner.CheckedCommandFor does.
func (f *fixture) mark(t *testing.T) time.Time {
	t.Helper()
	if err := sandbox.MakeGitPlaceholders(f.profile); err != nil {
		t.Fatal(err)
	}
	s, err := sandbox.Since(f.profile.CacheNamespace)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ordinaryGitWork is what TestGitOrdinaryWork runs in the sandbox, and what it prints.
const ordinaryGitWork = `set -e
echo two >> README; git add README; git commit -qm two
git checkout -qb feature; echo f > f.txt; git add f.txt; git commit -qm feat
echo wip >> README; git stash -q; git stash list | grep -q WIP; git stash pop -q; git checkout -q -- README
git checkout -q main; echo m > m.txt; git add m.txt; git commit -qm main2
git checkout -q feature; git rebase -q main
git checkout -q main; git merge -q --no-edit feature
git status --porcelain
git log --format=%s
cd vendor/lib; echo b >> a.txt; git commit -qam lib2; git checkout -qb topic; git log --format=%s -1`

// TestGitOrdinaryWork checks that git add, commit, checkout -b, stash, merge and rebase work
// in the sandbox, in the workspace's repository and in a nested one, and that the post-run
// check then finds nothing to quarantine; as root and as uid 65534 (whose launcher gets its
// mount namespace through a user namespace).
func TestGitOrdinaryWork(t *testing.T) {
	requireLandlock(t)
	for _, user := range []string{"root", "uid 65534"} {
		t.Run(user, func(t *testing.T) {
			f := newGitFixture(t)
			f.profile.Protection = sandbox.ProtectionMountNamespace
			var out []byte
			var err error
			var since time.Time
			if user == "root" {
				since = f.since(t)
				var s string
				s, err = f.sh(t, ordinaryGitWork)
				out = []byte(s)
			} else {
				testenv.RequireRoot(t)
				bin := testenv.PublicExecutable(t)
				f.profile.ReadOnlyRoots = append(f.profile.ReadOnlyRoots, filepath.Dir(bin))
				for d := filepath.Dir(f.ws); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
					os.Chmod(d, 0o755)
				}
				if err := sandbox.Prepare(f.profile); err != nil {
					t.Fatal(err)
				}
				if err := sandbox.MakeGitPlaceholders(f.profile); err != nil {
					t.Fatal(err)
				}
				for _, root := range []string{f.ws, f.home, f.cacheRoot} {
					filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
				}
				since = f.mark(t) // after the chown, which sets the ctime
				profile, merr := f.profile.Marshal()
				if merr != nil {
					t.Fatal(merr)
				}
				cmd := exec.Command(bin, "sh", "-c", ordinaryGitWork)
				cmd.Env = append(slices.Clone(f.env), driverEnv+"="+string(profile))
				cmd.Dir = f.ws
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
				out, err = cmd.CombinedOutput()
			}
			if err != nil {
				t.Fatalf("ordinary Git work in the sandbox: %v\n%s", err, out)
			}
			if got := strings.Fields(string(out)); !slices.Equal(got, []string{"feat", "main2", "two", "first", "lib2"}) {
				t.Fatalf("history after the work: %q", out)
			}
			q, err := sandbox.QuarantineGit(f.ws, since, "t")
			if err != nil || len(q) != 0 {
				t.Fatalf("post-run check after ordinary work quarantined %v (%v); want nothing", q, err)
			}
		})
	}
}

// gitAttacks are commands that try to leave something in a Git directory that a tool
// outside the sandbox would run or follow. Each writes EVIL into what it plants; harm is the
// path (relative to the workspace) that must not hold EVIL once the command has ended and
// the post-run check has run, and quarantined is what the check must have moved aside when
// the write was not refused (empty: the write must be refused).
var gitAttacks = []struct {
	name, script string
	harm         string
	// quarantined per layout: mount-namespace, landlock-entries ("" = refused).
	mount, entries string
}{
	{"config fsmonitor", `git config core.fsmonitor EVIL`, ".git/config", "", ""},
	{"config by rename", `printf '[core]\n\tfsmonitor = EVIL\n' > c && mv -f c .git/config`, ".git/config", "", ""},
	{"config.worktree", `printf '[core]\n\tfsmonitor = EVIL\n' > .git/config.worktree`, ".git/config.worktree", ".git/config.worktree", ""},
	{"hook", `echo EVIL > .git/hooks/pre-commit`, ".git/hooks/pre-commit", "", ""},
	{"hooks dir replaced", `rm -rf .git/hooks; mkdir .git/hooks; echo EVIL > .git/hooks/pre-commit`, ".git/hooks/pre-commit", "", ""},
	{"info/attributes", `mkdir -p .git/info; echo '* filter=EVIL' > .git/info/attributes`, ".git/info/attributes", "", ""},
	{"commondir", `echo EVIL > .git/commondir`, ".git/commondir", ".git/commondir", ""},
	{"alternates", `echo EVIL > .git/objects/info/alternates`, ".git/objects/info/alternates", "", ".git/objects/info/alternates"},
	{"modules", `mkdir -p .git/modules/m && echo EVIL > .git/modules/m/config`, ".git/modules/m/config", "", ""},
	{"new top-level name", `echo EVIL > .git/evil`, ".git/evil", ".git/evil", ""},
	{"rebase todo with exec", `mkdir -p .git/rebase-merge && echo 'exec EVIL' > .git/rebase-merge/git-rebase-todo`, ".git/rebase-merge/git-rebase-todo", ".git/rebase-merge", ""},
	{"nested repository config", `git -C vendor/lib config core.fsmonitor EVIL`, "vendor/lib/.git/config", "vendor/lib/.git/config", "vendor/lib/.git/config"},
	{"nested repository hook", `echo EVIL > vendor/lib/.git/hooks/post-checkout`, "vendor/lib/.git/hooks/post-checkout", "vendor/lib/.git/hooks", "vendor/lib/.git/hooks"},
	{"new repository hook", `git init -q src/new && echo EVIL > src/new/.git/hooks/pre-commit`, "src/new/.git/hooks/pre-commit", "src/new/.git/hooks", "src/new/.git/hooks"},
	{"new bare repository", `git init -q --bare src/evil.git && git -C src/evil.git config core.fsmonitor EVIL`, "src/evil.git/config", "src/evil.git/config", "src/evil.git/config"},
	{"gitdir file", `echo 'gitdir: EVIL' > src/.git`, "src/.git", "src/.git", "src/.git"},
}

// TestGitAttacks runs each of gitAttacks under both layouts and checks that the write was
// refused or that the post-run check moved it aside, and that the repository still works.
func TestGitAttacks(t *testing.T) {
	requireLandlock(t)
	for _, layout := range layouts {
		t.Run(layout, func(t *testing.T) {
			for _, tt := range gitAttacks {
				t.Run(tt.name, func(t *testing.T) {
					f := newGitFixture(t)
					f.profile.Protection = layout
					before := existingPaths(t, f.ws)
					since := f.since(t)
					out, err := f.sh(t, tt.script)
					want := tt.mount
					if layout == sandbox.ProtectionLandlockEntries {
						want = tt.entries
					}
					if want == "" && err == nil {
						t.Errorf("the write was not refused: %s", out)
					}
					q, qerr := sandbox.QuarantineGit(f.ws, since, "t")
					if qerr != nil {
						t.Fatal(qerr)
					}
					if want != "" && !slices.Contains(q, want) {
						t.Errorf("quarantined %v, want %s among them (command: %v: %s)", q, want, err, out)
					}
					checkNoCollateral(t, q, want, before)
					checkHarmless(t, f.ws, tt.harm)
				})
			}
		})
	}
}

// existingPaths returns the workspace-relative paths beneath ws, before a command runs.
func existingPaths(t *testing.T, ws string) map[string]bool {
	t.Helper()
	m := map[string]bool{}
	filepath.Walk(ws, func(p string, _ os.FileInfo, _ error) error {
		if rel, err := filepath.Rel(ws, p); err == nil {
			m[rel] = true
		}
		return nil
	})
	return m
}

// checkNoCollateral fails t when the post-run check moved aside an entry that existed
// before the command, other than want (what the attack changed).
func checkNoCollateral(t *testing.T, q []string, want string, before map[string]bool) {
	t.Helper()
	for _, p := range q {
		if p != want && before[p] {
			t.Errorf("the post-run check moved aside %s, which the command did not change (all: %v)", p, q)
		}
	}
}

// checkHarmless fails t when the workspace path rel holds EVIL, or when the workspace's
// repository no longer works for git outside the sandbox.
func checkHarmless(t *testing.T, ws, rel string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(ws, rel)); err == nil && strings.Contains(string(b), "EVIL") {
		t.Errorf("%s holds what the command planted: %q", rel, b)
	}
	git := testenv.RequireTool(t, "git")
	cmd := exec.Command(git, "-c", "safe.directory=*", "status", "--porcelain")
	cmd.Dir, cmd.Env = ws, gitEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("git status outside the sandbox after the check: %v: %s", err, out)
	}
}

// TestGitAttacksOrdinaryUser runs the attacks that mounts cannot refuse as uid 65534 (whose
// launcher gets its mount namespace through a user namespace) and checks the post-run check.
func TestGitAttacksOrdinaryUser(t *testing.T) {
	testenv.RequireRoot(t)
	requireLandlock(t)
	bin := testenv.PublicExecutable(t)
	for _, tt := range gitAttacks {
		t.Run(tt.name, func(t *testing.T) {
			f := newGitFixture(t)
			f.profile.Protection = sandbox.ProtectionMountNamespace
			f.profile.ReadOnlyRoots = append(f.profile.ReadOnlyRoots, filepath.Dir(bin))
			for d := filepath.Dir(f.ws); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
				os.Chmod(d, 0o755)
			}
			if err := sandbox.Prepare(f.profile); err != nil {
				t.Fatal(err)
			}
			if err := sandbox.MakeGitPlaceholders(f.profile); err != nil {
				t.Fatal(err)
			}
			for _, root := range []string{f.ws, f.home, f.cacheRoot} {
				filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
			}
			before := existingPaths(t, f.ws)
			since := f.mark(t) // after the chown, which sets the ctime
			profile, err := f.profile.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "sh", "-c", tt.script)
			cmd.Env = append(slices.Clone(f.env), driverEnv+"="+string(profile))
			cmd.Dir = f.ws
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			out, err := cmd.CombinedOutput()
			if strings.Contains(string(out), "per-entry Landlock") {
				t.Fatalf("the launcher fell back to the per-entry layout: %s", out)
			}
			if tt.mount == "" && err == nil {
				t.Errorf("the write was not refused: %s", out)
			}
			q, qerr := sandbox.QuarantineGit(f.ws, since, "t")
			if qerr != nil {
				t.Fatal(qerr)
			}
			if tt.mount != "" && !slices.Contains(q, tt.mount) {
				t.Errorf("quarantined %v, want %s among them (command: %v: %s)", q, tt.mount, err, out)
			}
			checkNoCollateral(t, q, tt.mount, before)
			checkHarmless(t, f.ws, tt.harm)
		})
	}
}

// TestLinkedWorktree runs Git in a linked worktree whose Git directory lies outside the
// workspace: the sandbox grants exactly that directory and its common directory, read-only,
// so git log and status work, while the main worktree's files and a commit stay out of
// reach.
func TestLinkedWorktree(t *testing.T) {
	requireLandlock(t)
	git := testenv.RequireTool(t, "git")
	f := newFixture(t, false)
	base := filepath.Dir(f.ws)
	main := filepath.Join(base, "main")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = dir, append(slices.Clone(gitEnv), "HOME="+f.home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	write(t, filepath.Join(main, "secret.txt"), "main worktree file\n")
	run(main, "init", "-q", "-b", "main")
	run(main, "add", ".")
	run(main, "commit", "-qm", "first")
	wt := filepath.Join(base, "wt")
	run(main, "worktree", "add", "-q", "-b", "side", wt)
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return f.home
		case sandbox.CacheDirEnv:
			return f.cacheRoot
		case "PATH":
			return os.Getenv("PATH")
		}
		return ""
	}
	h, err := sandbox.Discover(getenv, wt)
	if err != nil {
		t.Fatal(err)
	}
	if f.profile, err = sandbox.NewProfile(h, false); err != nil {
		t.Fatal(err)
	}
	f.ws = f.profile.Workspace
	f.env = append(f.env, gitEnv...)
	if out, err := f.sh(t, `git log --format=%s && git rev-parse --abbrev-ref HEAD`); err != nil || strings.Fields(out)[0] != "first" {
		t.Fatalf("git log in the linked worktree: %v: %s", err, out)
	}
	for _, script := range []string{`cat ../main/secret.txt`, `echo x >> secret.txt && git commit -qam two`, `git config core.fsmonitor EVIL`} {
		if out, err := f.sh(t, script); err == nil {
			t.Errorf("%s: want failure, got success: %s", script, out)
		}
	}
}
