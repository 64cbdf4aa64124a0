package gitsafe

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/testenv"
)

var ctx = context.Background()

// dirtyRepo returns newRepo with a modified, an added, a renamed, an untracked and an
// ignored file.
func dirtyRepo(t *testing.T) string {
	t.Helper()
	ws := newRepo(t)
	writeFile(t, filepath.Join(ws, ".gitignore"), "*.log\n")
	gitIn(t, ws, "add", ".gitignore")
	gitIn(t, ws, "commit", "-q", "-m", "ignore logs")
	writeFile(t, filepath.Join(ws, "a.txt"), "one\n2\nthree\nfour\nfive\n")
	writeFile(t, filepath.Join(ws, "c.txt"), "new\n")
	gitIn(t, ws, "add", "c.txt")
	gitIn(t, ws, "mv", "b.txt", "bee.txt")
	writeFile(t, filepath.Join(ws, "u v.txt"), "untracked\n")
	writeFile(t, filepath.Join(ws, "x.log"), "ignored\n")
	return ws
}

func TestStatus(t *testing.T) {
	ws := dirtyRepo(t)
	r := openRepo(t, ws)
	head := strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD"))
	tests := []struct {
		name  string
		opts  StatusOptions
		want  []string // "kind xy path [orig]"
		trunc bool
	}{
		{"default", StatusOptions{}, []string{"changed .M a.txt", "renamed R. bee.txt b.txt", "changed A. c.txt", "untracked u v.txt"}, false},
		{"ignored", StatusOptions{Ignored: true}, []string{"changed .M a.txt", "renamed R. bee.txt b.txt", "changed A. c.txt", "untracked u v.txt", "ignored x.log"}, false},
		{"no untracked", StatusOptions{Untracked: "no"}, []string{"changed .M a.txt", "renamed R. bee.txt b.txt", "changed A. c.txt"}, false},
		{"paths", StatusOptions{Paths: []string{"a.txt", "u v.txt"}}, []string{"changed .M a.txt", "untracked u v.txt"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := r.Status(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if st.Branch.Head != "main" || st.Branch.OID != head {
				t.Errorf("branch = %+v, want main at %s", st.Branch, head)
			}
			var got []string
			for _, e := range st.Entries {
				s := strings.TrimSpace(strings.Join([]string{e.Kind, e.XY, e.Path, e.OrigPath}, " "))
				got = append(got, strings.Join(strings.Fields(strings.ReplaceAll(s, "  ", " ")), " "))
			}
			want := tc.want
			for i := range want {
				want[i] = strings.Join(strings.Fields(want[i]), " ")
			}
			if !reflect.DeepEqual(got, want) || st.Truncated != tc.trunc {
				t.Errorf("entries = %q (truncated %v), want %q", got, st.Truncated, want)
			}
		})
	}
	if _, err := r.Status(ctx, StatusOptions{Untracked: "bogus"}); !errors.As(err, new(*ArgError)) {
		t.Errorf("bad untracked mode: err = %v, want *ArgError", err)
	}
}

func TestStatusUnmerged(t *testing.T) {
	ws := newRepo(t)
	gitIn(t, ws, "checkout", "-q", "-b", "side")
	writeFile(t, filepath.Join(ws, "b.txt"), "side\n")
	gitIn(t, ws, "commit", "-q", "-am", "side")
	gitIn(t, ws, "checkout", "-q", "main")
	writeFile(t, filepath.Join(ws, "b.txt"), "main\n")
	gitIn(t, ws, "commit", "-q", "-am", "main")
	gitTry(ws, "merge", "-q", "side")
	st, err := openRepo(t, ws).Status(ctx, StatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Entries) != 1 || st.Entries[0].Kind != KindUnmerged || st.Entries[0].XY != "UU" || st.Entries[0].Path != "b.txt" || len(st.Entries[0].Objects) != 3 {
		t.Errorf("entries = %+v, want one unmerged b.txt", st.Entries)
	}
}

func TestDiff(t *testing.T) {
	ws := dirtyRepo(t)
	writeFile(t, filepath.Join(ws, "bin.dat"), "\x00\x01\x02")
	gitIn(t, ws, "add", "bin.dat")
	r := openRepo(t, ws)
	tests := []struct {
		name  string
		opts  DiffOptions
		plain []string // the same diff from plain git
		files []FileStat
	}{
		{"worktree", DiffOptions{}, []string{"diff"}, []FileStat{{Path: "a.txt", Added: 1}}},
		{"staged", DiffOptions{Staged: true}, []string{"diff", "--cached"},
			[]FileStat{{Path: "bee.txt", OrigPath: "b.txt"}, {Path: "bin.dat", Binary: true}, {Path: "c.txt", Added: 1}}},
		{"against HEAD, paths", DiffOptions{Revisions: []string{"HEAD"}, Paths: []string{"a.txt", "c.txt"}}, []string{"diff", "HEAD", "--", "a.txt", "c.txt"},
			[]FileStat{{Path: "a.txt", Added: 1}, {Path: "c.txt", Added: 1}}},
		{"two revisions", DiffOptions{Revisions: []string{"HEAD~2", "HEAD~1"}}, []string{"diff", "HEAD~2", "HEAD~1"},
			[]FileStat{{Path: "a.txt", Added: 2, Deleted: 1}}},
		{"range", DiffOptions{Revisions: []string{"HEAD~2..HEAD~1"}}, []string{"diff", "HEAD~2..HEAD~1"},
			[]FileStat{{Path: "a.txt", Added: 2, Deleted: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := r.Diff(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Files, tc.files) {
				t.Errorf("files = %+v, want %+v", d.Files, tc.files)
			}
			if want := gitIn(t, ws, tc.plain...); d.Patch != want {
				t.Errorf("patch differs from plain git:\n%s\nwant:\n%s", d.Patch, want)
			}
			if d.Truncated {
				t.Error("truncated")
			}
		})
	}
	var ge *GitError
	if _, err := r.Diff(ctx, DiffOptions{Revisions: []string{"no-such-revision"}}); !errors.As(err, &ge) || ge.ExitCode != 128 {
		t.Errorf("unknown revision: err = %v, want *GitError 128", err)
	}
}

func TestLog(t *testing.T) {
	ws := newRepo(t)
	r := openRepo(t, ws)
	hashes := strings.Fields(gitIn(t, ws, "log", "--format=%H"))
	tests := []struct {
		name     string
		opts     LogOptions
		subjects []string
	}{
		{"all", LogOptions{}, []string{"change a", "first commit"}},
		{"count", LogOptions{Count: 1}, []string{"change a"}},
		{"skip", LogOptions{Skip: 1}, []string{"first commit"}},
		{"range", LogOptions{Revisions: []string{"HEAD~1..HEAD"}}, []string{"change a"}},
		{"paths", LogOptions{Paths: []string{"docs"}}, []string{"first commit"}},
		{"path that looks like an option", LogOptions{Paths: []string{"--output=x"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := r.Log(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range l.Commits {
				got = append(got, c.Subject)
			}
			if !reflect.DeepEqual(got, tc.subjects) {
				t.Errorf("subjects = %q, want %q", got, tc.subjects)
			}
		})
	}
	l, err := r.Log(ctx, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := l.Commits[1]
	date := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600))
	if first.Hash != hashes[1] || len(first.Parents) != 0 || first.Body != "The body\nof the first." ||
		first.Author.Name != "Ada Author" || first.Author.Email != "ada@example.com" || !first.Author.Date.Equal(date) ||
		first.Committer.Name != "Cy Committer" {
		t.Errorf("first commit = %+v", first)
	}
	if got := l.Commits[0].Parents; !reflect.DeepEqual(got, []string{hashes[1]}) {
		t.Errorf("parents = %v, want %v", got, hashes[1:])
	}
}

func TestShow(t *testing.T) {
	ws := newRepo(t)
	r := openRepo(t, ws)
	s, err := r.Show(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if s.Type != TypeCommit || s.Commit.Subject != "change a" || len(s.Diff.Files) != 1 || s.Diff.Files[0].Path != "a.txt" ||
		!strings.HasPrefix(s.Diff.Patch, "diff --git a/a.txt b/a.txt\n") {
		t.Errorf("show HEAD = %+v %+v", s, s.Diff)
	}
	s, err = r.Show(ctx, "HEAD~1:a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if s.Type != TypeBlob || s.Content != "one\ntwo\nthree\n" || s.Size != 14 || s.Binary || s.Truncated {
		t.Errorf("show blob = %+v", s)
	}
	s, err = r.Show(ctx, "HEAD:")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range s.Entries {
		names = append(names, e.Mode+" "+e.Name)
	}
	if s.Type != TypeTree || !reflect.DeepEqual(names, []string{"100644 a.txt", "100644 b.txt", "40000 docs"}) {
		t.Errorf("show tree = %+v", s)
	}
	var oe *ObjectError
	if _, err := r.Show(ctx, "HEAD:nope"); !errors.As(err, &oe) || oe.Reason != "missing" {
		t.Errorf("missing object: err = %v", err)
	}
}

func TestBlame(t *testing.T) {
	ws := newRepo(t)
	r := openRepo(t, ws)
	hashes := strings.Fields(gitIn(t, ws, "log", "--format=%H"))
	b, err := r.Blame(ctx, BlameOptions{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range b.Lines {
		got = append(got, l.Commit[:7]+" "+l.Content)
	}
	want := []string{hashes[1][:7] + " one", hashes[0][:7] + " 2", hashes[1][:7] + " three", hashes[0][:7] + " four"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blame = %q, want %q", got, want)
	}
	if c := b.Commits[hashes[1]]; c.Author.Name != "Ada Author" || c.Summary != "first commit" || c.Filename != "a.txt" {
		t.Errorf("commit = %+v", c)
	}
	b, err = r.Blame(ctx, BlameOptions{Revision: "HEAD~1", Path: "a.txt", Lines: []LineRange{{2, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Lines) != 2 || b.Lines[0].Line != 2 || b.Lines[0].Content != "two" || b.Lines[1].Content != "three" {
		t.Errorf("blame range = %+v", b.Lines)
	}
	if _, err := r.Blame(ctx, BlameOptions{Path: "a.txt", Lines: []LineRange{{3, 2}}}); !errors.As(err, new(*ArgError)) {
		t.Errorf("bad range: err = %v", err)
	}
}

// TestArgumentInjection passes option-looking revisions and paths to every tool: they are
// refused or placed after "--", and no file is written.
func TestArgumentInjection(t *testing.T) {
	ws := newRepo(t)
	r := openRepo(t, ws)
	out := filepath.Join(t.TempDir(), "written")
	opt := "--output=" + out
	tests := []struct {
		name    string
		call    func() error
		refused bool
	}{
		{"diff revision", func() error { _, err := r.Diff(ctx, DiffOptions{Revisions: []string{opt}}); return err }, true},
		{"diff path", func() error { _, err := r.Diff(ctx, DiffOptions{Paths: []string{opt}}); return err }, false},
		{"log revision", func() error { _, err := r.Log(ctx, LogOptions{Revisions: []string{opt}}); return err }, true},
		{"log path", func() error { _, err := r.Log(ctx, LogOptions{Paths: []string{opt}}); return err }, false},
		{"show", func() error { _, err := r.Show(ctx, opt); return err }, true},
		{"show newline", func() error { _, err := r.Show(ctx, "HEAD\nHEAD:a.txt"); return err }, true},
		{"blame revision", func() error {
			_, err := r.Blame(ctx, BlameOptions{Revision: "--contents=/etc/passwd", Path: "a.txt"})
			return err
		}, true},
		{"blame path", func() error { _, err := r.Blame(ctx, BlameOptions{Path: opt}); return err }, false},
		{"status path", func() error { _, err := r.Status(ctx, StatusOptions{Paths: []string{opt}}); return err }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if tc.refused != errors.As(err, new(*ArgError)) {
				t.Errorf("err = %v, want refused %v", err, tc.refused)
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Errorf("git wrote %s", out)
			}
		})
	}
}

func TestOutputCap(t *testing.T) {
	ws := newRepo(t)
	var big strings.Builder
	for i := 0; i < 2000; i++ {
		big.WriteString("line of text\n")
	}
	writeFile(t, filepath.Join(ws, "a.txt"), big.String())
	for i := 0; i < 50; i++ {
		writeFile(t, filepath.Join(ws, "untracked", strings.Repeat("u", 10)+string(rune('a'+i%26))+string(rune('a'+i/26))), "x")
	}
	r, err := Open(ws, Options{MaxOutput: 300})
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Diff(ctx, DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Truncated || len(d.Patch) > 300 || len(d.Files) != 1 {
		t.Errorf("diff: truncated %v, %d bytes, files %+v", d.Truncated, len(d.Patch), d.Files)
	}
	st, err := r.Status(ctx, StatusOptions{Untracked: "all"})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Truncated || len(st.Entries) == 0 || len(st.Entries) >= 51 {
		t.Errorf("status: truncated %v, %d entries", st.Truncated, len(st.Entries))
	}
	for _, e := range st.Entries {
		if e.Kind == KindUntracked && len(e.Path) != len("untracked/uuuuuuuuuuaa") {
			t.Errorf("partial entry %q", e.Path)
		}
	}
	r.maxOutput = 100
	l, err := r.Log(ctx, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Truncated || len(l.Commits) != 0 {
		t.Errorf("log: truncated %v, %d commits", l.Truncated, len(l.Commits))
	}
}

func TestTimeout(t *testing.T) {
	ws := newRepo(t)
	// A "git" that hangs and leaves a grandchild holding its output open: the timeout must
	// kill the whole process group.
	slow := filepath.Join(t.TempDir(), "git")
	writeFile(t, slow, "#!/bin/sh\nsleep 60 &\nsleep 60\n")
	if err := os.Chmod(slow, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ws, Options{Git: slow, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = r.Run(ctx, []byte("HEAD\n"), "cat-file", "--batch")
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to stop", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Status(cctx, StatusOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestLookGit(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "bin", "git")
	writeFile(t, fake, "#!/bin/sh\n")
	noexec := filepath.Join(dir, "noexec", "git")
	writeFile(t, noexec, "#!/bin/sh\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	tests := []struct {
		name, path, want string
	}{
		{"empty", "", ""},
		{"relative and empty entries skipped", "bin::./bin:", ""},
		{"not executable skipped", filepath.Dir(noexec) + ":" + filepath.Dir(fake), fake},
		{"absolute", "/nonexistent:" + filepath.Dir(fake), fake},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LookGit(tc.path)
			if tc.want == "" {
				if !errors.Is(err, ErrGitNotFound) {
					t.Errorf("LookGit(%q) = %q, %v; want ErrGitNotFound", tc.path, got, err)
				}
				return
			}
			if got != tc.want || err != nil {
				t.Errorf("LookGit(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
			}
		})
	}
}

// TestHostileEnvironmentOutput: with every git variable of the environment pointing at a
// marker, plain git runs it, and the tools' results are still those of the repository.
func TestHostileEnvironmentOutput(t *testing.T) {
	testenv.RequireTool(t, "git")
	m := newMarker(t)
	ws := dirtyRepo(t)
	hostileEnv(t, m)
	control := exec.Command("git", "status")
	control.Dir = ws
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_DIR=") && !strings.HasPrefix(kv, "GIT_WORK_TREE=") {
			control.Env = append(control.Env, kv)
		}
	}
	out, _ := control.CombinedOutput()
	if !m.ran(t) {
		t.Fatalf("control: plain git status in the hostile environment did not run the marker:\n%s", out)
	}
	os.Remove(os.Getenv("GIT_TRACE"))
	r := openRepo(t, ws)
	st, err := r.Status(ctx, StatusOptions{})
	if err != nil || len(st.Entries) != 4 || st.Entries[0].Path != "a.txt" {
		t.Errorf("status = %+v, %v", st, err)
	}
	d, err := r.Diff(ctx, DiffOptions{})
	if err != nil || !strings.HasPrefix(d.Patch, "diff --git a/a.txt b/a.txt\n") || !strings.Contains(d.Patch, "\n+five\n") {
		t.Errorf("diff = %+v, %v", d, err)
	}
	l, err := r.Log(ctx, LogOptions{})
	if err != nil || len(l.Commits) != 3 {
		t.Errorf("log = %+v, %v", l, err)
	}
	s, err := r.Show(ctx, "HEAD:a.txt")
	if err != nil || s.Content != "one\n2\nthree\nfour\n" {
		t.Errorf("show = %+v, %v", s, err)
	}
	b, err := r.Blame(ctx, BlameOptions{Path: "a.txt"})
	if err != nil || len(b.Lines) != 5 {
		t.Errorf("blame = %+v, %v", b, err)
	}
	if m.ran(t) {
		t.Error("the marker program ran")
	}
	if _, err := os.Stat(os.Getenv("GIT_TRACE")); err == nil {
		t.Error("GIT_TRACE was honoured")
	}
}

// TestCheckEveryOperation: a setting added after a successful operation refuses the next
// one (nothing is cached between operations).
func TestCheckEveryOperation(t *testing.T) {
	m := newMarker(t)
	ws := newRepo(t)
	r := openRepo(t, ws)
	if _, err := r.Status(ctx, StatusOptions{}); err != nil {
		t.Fatal(err)
	}
	gitIn(t, ws, "config", "core.fsmonitor", m.script)
	var ce *ConfigError
	if _, err := r.Status(ctx, StatusOptions{}); !errors.As(err, &ce) {
		t.Errorf("after adding core.fsmonitor: err = %v, want *ConfigError", err)
	}
	if m.ran(t) {
		t.Error("the marker program ran")
	}
}

// TestGitFileInsideWorkspace: a .git file naming a gitdir inside the workspace is used.
func TestGitFileInsideWorkspace(t *testing.T) {
	ws := newRepo(t)
	if err := os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, ".repo")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, ".git"), "gitdir: .repo\n")
	l, err := openRepo(t, ws).Log(ctx, LogOptions{})
	if err != nil || len(l.Commits) != 2 {
		t.Fatalf("log = %+v, %v", l, err)
	}
}
