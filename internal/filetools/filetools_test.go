package filetools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

type env struct {
	t     *testing.T
	ws    string
	root  *wsfs.Root
	store *turns.Store
	app   *Applier
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvAt(t, filepath.Join(t.TempDir(), "ws"))
}

func newEnvAt(t *testing.T, ws string) *env {
	t.Helper()
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := wsfs.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	store := turns.Open(filepath.Join(t.TempDir(), "turns"), root.Path())
	return &env{t: t, ws: root.Path(), root: root, store: store, app: &Applier{Root: root, Turns: store}}
}

func (e *env) write(rel, s string) string {
	e.t.Helper()
	p := filepath.Join(e.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return Revision([]byte(s))
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.ws, rel))
	if errors.Is(err, os.ErrNotExist) {
		return "<absent>"
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// apply decodes req (a Go value marshalled to JSON) and applies it as turn.
func (e *env) apply(req any, turn string) (*Result, error) {
	e.t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := patch.Decode(b)
	if err != nil {
		return nil, err
	}
	return e.app.Apply(r, turn)
}

type m = map[string]any

func TestApplyEnvelope(t *testing.T) {
	e := newEnv(t)
	ra := e.write("a.txt", "one\ntwo\nthree\n")
	rb := e.write("src/b.go", "package b\n\nfunc F() int { return 1 }\n")
	res, err := e.apply(m{"files": []m{
		{"path": "a.txt", "expected_revision": ra, "edits": []m{{"start_line": 2, "end_line": 2, "new_text": "TWO"}}},
		{"path": "src/b.go", "expected_revision": rb, "edits": []m{{"old_text": "return 1", "new_text": "return 2"}}},
		{"path": "new/dir/c.txt", "expected_revision": nil, "content": "fresh\n"},
	}}, "t1")
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := map[string]string{"a.txt": "one\nTWO\nthree\n", "src/b.go": "package b\n\nfunc F() int { return 2 }\n", "new/dir/c.txt": "fresh\n"}
	for p, w := range want {
		if got := e.read(p); got != w {
			t.Errorf("%s = %q, want %q", p, got, w)
		}
	}
	if len(res.Applied) != 3 || res.Turn != "t1" {
		t.Fatalf("result = %+v", res)
	}
	for _, a := range res.Applied {
		if a.Revision != Revision([]byte(want[a.Path])) {
			t.Errorf("%s: revision %s, want that of the new content", a.Path, a.Revision)
		}
		if a.Created != (a.Path == "new/dir/c.txt") {
			t.Errorf("%s: created = %v", a.Path, a.Created)
		}
	}
	rec, err := e.store.Load("t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Files) != 3 || !rec.Files[2].NewFile {
		t.Fatalf("record = %+v", rec.Files)
	}
	if orig, err := e.store.Original(&rec.Files[0]); err != nil || string(orig) != "one\ntwo\nthree\n" {
		t.Errorf("original of a.txt = %q, %v", orig, err)
	}
	for _, f := range rec.Files {
		if f.State != turns.StateApplied {
			t.Errorf("%s: state %s", f.Path, f.State)
		}
	}
}

func TestApplyPatchForm(t *testing.T) {
	e := newEnv(t)
	ra := e.write("a.py", "def f():\n    return 1\n\ndef g():\n    return 1\n")
	text := "*** Begin Patch\n*** Update File: a.py\n@@\n def g():\n-    return 1\n+    return 2\n*** Add File: b.py\n+print('b')\n*** End Patch\n"
	if _, err := e.apply(m{"patch": text, "revisions": m{"a.py": ra, "b.py": nil}}, "t1"); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got := e.read("a.py"); got != "def f():\n    return 1\n\ndef g():\n    return 2\n" {
		t.Errorf("a.py = %q", got)
	}
	if got := e.read("b.py"); got != "print('b')\n" {
		t.Errorf("b.py = %q", got)
	}
}

func TestApplyLegacy(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "x\n")
	sum := fmt.Sprintf("%x", sha256sum("x\n"))
	if _, err := e.apply(m{"path": "a.txt", "expected_sha256": sum, "content": "y\n"}, "t1"); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got := e.read("a.txt"); got != "y\n" {
		t.Errorf("a.txt = %q", got)
	}
	_, err := e.apply(m{"path": "a.txt", "expected_sha256": sum, "content": "z\n"}, "t2")
	if !errors.Is(err, ErrStale) {
		t.Errorf("stale sha256: %v", err)
	}
}

// TestPreflightRefusals: one bad file refuses the whole batch; nothing is written and no
// turn record is left.
func TestPreflightRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(e *env) []m // returns the files of the batch after a.txt's good edit
		want  error
		code  string
	}{
		{"stale revision", func(e *env) []m {
			e.write("b.txt", "b\n")
			return []m{{"path": "b.txt", "expected_revision": Revision([]byte("old\n")), "content": "x"}}
		}, ErrStale, "stale_revision"},
		{"new file exists", func(e *env) []m {
			e.write("b.txt", "b\n")
			return []m{{"path": "b.txt", "expected_revision": nil, "content": "x"}}
		}, ErrStale, "stale_revision"},
		{"expected file missing", func(e *env) []m {
			return []m{{"path": "b.txt", "expected_revision": Revision([]byte("b\n")), "content": "x"}}
		}, ErrStale, "stale_revision"},
		{"protected .git", func(e *env) []m {
			return []m{{"path": ".git/hooks/pre-commit", "expected_revision": nil, "content": "#!/bin/sh\n"}}
		}, wsfs.ErrProtected, "protected_path"},
		{"protected .vscode any case", func(e *env) []m {
			return []m{{"path": ".VSCode/tasks.json", "expected_revision": nil, "content": "{}"}}
		}, wsfs.ErrProtected, "protected_path"},
		{"protected .mcp.json", func(e *env) []m {
			return []m{{"path": ".mcp.json", "expected_revision": nil, "content": "{}"}}
		}, wsfs.ErrProtected, "protected_path"},
		{"symlink to outside", func(e *env) []m {
			out := filepath.Join(e.t.TempDir(), "bashrc")
			os.WriteFile(out, []byte("rc\n"), 0o644)
			os.Symlink(out, filepath.Join(e.ws, "notes.md"))
			return []m{{"path": "notes.md", "expected_revision": Revision([]byte("rc\n")), "content": "pwned"}}
		}, wsfs.ErrSymlink, "symlink"},
		{"escape", func(e *env) []m {
			return []m{{"path": "../x.txt", "expected_revision": nil, "content": "x"}}
		}, wsfs.ErrEscape, "outside_workspace"},
		{"a directory", func(e *env) []m {
			os.Mkdir(filepath.Join(e.ws, "d"), 0o755)
			return []m{{"path": "d", "expected_revision": nil, "content": "x"}}
		}, wsfs.ErrNotRegular, "not_regular_file"},
		{"same file twice after cleaning", func(e *env) []m {
			return []m{{"path": "./a.txt", "expected_revision": Revision([]byte("a\n")), "content": "x"}}
		}, patch.ErrDuplicatePath, "duplicate_path"},
		{"hard-link alias", func(e *env) []m {
			if err := os.Link(filepath.Join(e.ws, "a.txt"), filepath.Join(e.ws, "hard.txt")); err != nil {
				e.t.Fatal(err)
			}
			return []m{{"path": "hard.txt", "expected_revision": Revision([]byte("a\n")), "content": "x"}}
		}, ErrHardLink, "hard_link_alias"},
		{"new siblings differing in case", func(e *env) []m {
			return []m{{"path": "New.txt", "expected_revision": nil, "content": "1"}, {"path": "new.txt", "expected_revision": nil, "content": "2"}}
		}, ErrCaseAlias, "case_alias"},
		{"new directory differing in case", func(e *env) []m {
			return []m{{"path": "Pkg/x.go", "expected_revision": nil, "content": "1"}, {"path": "pkg/x.go", "expected_revision": nil, "content": "2"}}
		}, ErrCaseAlias, "case_alias"},
		{"case alias found by the probe", func(e *env) []m {
			// A same-inode name differing only in case is what a case-insensitive directory
			// shows; the probe (wsfs.Root.FoldsCase) must report it as a case alias.
			if err := os.Link(filepath.Join(e.ws, "a.txt"), filepath.Join(e.ws, "A.TXT")); err != nil {
				e.t.Fatal(err)
			}
			return []m{{"path": "A.TXT", "expected_revision": Revision([]byte("a\n")), "content": "x"}}
		}, ErrCaseAlias, "case_alias"},
		{"edit without match in a later file", func(e *env) []m {
			rb := e.write("b.txt", "b\n")
			return []m{{"path": "b.txt", "expected_revision": rb, "edits": []m{{"old_text": "zzz", "new_text": "y"}}}}
		}, patch.ErrNoMatch, "no_match"},
		{"line edit past the end", func(e *env) []m {
			rb := e.write("b.txt", "b\n")
			return []m{{"path": "b.txt", "expected_revision": rb, "edits": []m{{"start_line": 5, "end_line": 5, "new_text": "y"}}}}
		}, patch.ErrLineRange, "line_range"},
		{"patch update of crlf file", func(e *env) []m {
			return nil // replaced below by a patch-form request
		}, patch.ErrNeedsContent, "needs_content"},
		{"snapshots over 16 MiB", func(e *env) []m {
			big := strings.Repeat("x", 9<<20)
			r1, r2 := e.write("big1", big), e.write("big2", big)
			return []m{{"path": "big1", "expected_revision": r1, "content": "x"}, {"path": "big2", "expected_revision": r2, "content": "y"}}
		}, patch.ErrLimit, "limit"},
		{"results over 16 MiB", func(e *env) []m {
			r1 := e.write("big1", strings.Repeat("x", 10<<20)+"end\n")
			return []m{{"path": "big1", "expected_revision": r1, "edits": []m{{"old_text": "end", "new_text": "END"}}},
				{"path": "big2", "expected_revision": nil, "content": strings.Repeat("y", 7<<20)}}
		}, patch.ErrLimit, "limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ra := e.write("a.txt", "a\n")
			files := append([]m{{"path": "a.txt", "expected_revision": ra, "content": "A\n"}}, tc.setup(e)...)
			var req any = m{"files": files}
			if tc.code == "needs_content" {
				rc := e.write("c.txt", "x\r\ny\r\n")
				req = m{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: c.txt\n@@\n-x\n+X\n*** End Patch\n", "revisions": m{"a.txt": ra, "c.txt": rc}}
			}
			before := tree(t, e.ws)
			_, err := e.apply(req, "t1")
			if !errors.Is(err, tc.want) {
				t.Fatalf("Apply = %v, want %v", err, tc.want)
			}
			if got := Code(err); got != tc.code {
				t.Errorf("Code = %q, want %q", got, tc.code)
			}
			var be *BatchError
			if errors.As(err, &be) && (len(be.Applied) != 0 || be.Failed != "") {
				t.Errorf("preflight refusal lists applied %v, failed %q", be.Applied, be.Failed)
			}
			if after := tree(t, e.ws); after != before {
				t.Errorf("workspace changed:\nbefore %s\nafter  %s", before, after)
			}
			if _, err := e.store.Load("t1"); !errors.Is(err, turns.ErrNoTurn) {
				t.Errorf("a turn record was left: %v", err)
			}
		})
	}
}

// tree describes every entry under dir (name, mode, size, content hash, mtime).
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %s", Revision(data))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

func sha256sum(s string) [32]byte { return shaFull([]byte(s)) }

// failingCommits wraps the commits of a batch: the commit of failAt fails before touching
// the file, or, with durability, fails after the real commit as a failed directory fsync
// would, or, with mutate, runs after a concurrent change to the file.
type failingCommits struct {
	failAt     string
	durability bool
	mutate     func()
	calls      []string
}

var errInjected = errors.New("injected write failure")

func (w *failingCommits) hook(rel string, commit func() error) error {
	w.calls = append(w.calls, rel)
	if rel != w.failAt {
		return commit()
	}
	switch {
	case w.mutate != nil:
		w.mutate()
		return commit()
	case w.durability:
		if err := commit(); err != nil {
			return err
		}
		return &wsfs.DurabilityError{Path: rel, Err: errInjected}
	}
	return errInjected
}

func fiveFiles(e *env) (req m, orig map[string]string) {
	orig = map[string]string{}
	var files []m
	for i := 1; i <= 5; i++ {
		p := fmt.Sprintf("f%d.txt", i)
		orig[p] = fmt.Sprintf("file %d\n", i)
		files = append(files, m{"path": p, "expected_revision": e.write(p, orig[p]), "content": fmt.Sprintf("changed %d\n", i)})
	}
	files = append(files, m{"path": "new.txt", "expected_revision": nil, "content": "new\n"})
	orig["new.txt"] = "<absent>"
	return m{"files": []m{files[0], files[5], files[1], files[2], files[3], files[4]}}, orig
}

// TestWriteFailsMidBatch: the third write fails; the error lists exactly the two applied
// paths and the failed one, later files are not attempted, and undo restores the applied.
func TestWriteFailsMidBatch(t *testing.T) {
	e := newEnv(t)
	req, orig := fiveFiles(e)
	w := &failingCommits{failAt: "f2.txt"}
	e.app.commitHook = w.hook
	_, err := e.apply(req, "t1")
	var be *BatchError
	if !errors.As(err, &be) || !errors.Is(err, errInjected) || !errors.Is(err, ErrWrite) {
		t.Fatalf("Apply = %v, want a BatchError wrapping the injected failure", err)
	}
	if be.Code != "write_failed" || be.Failed != "f2.txt" || be.Written {
		t.Errorf("error = %+v", be)
	}
	if got := appliedPaths(be.Applied); got != "f1.txt,new.txt" {
		t.Errorf("applied = %s, want f1.txt,new.txt", got)
	}
	if strings.Join(w.calls, ",") != "f1.txt,new.txt,f2.txt" {
		t.Errorf("writes attempted: %v (later files must not be attempted)", w.calls)
	}
	if tmp := tempFiles(t, e.ws); len(tmp) != 0 {
		t.Errorf("staged temporary files left behind: %v", tmp)
	}
	want := map[string]string{"f1.txt": "changed 1\n", "new.txt": "new\n", "f2.txt": orig["f2.txt"], "f3.txt": orig["f3.txt"], "f5.txt": orig["f5.txt"]}
	for p, s := range want {
		if got := e.read(p); got != s {
			t.Errorf("%s = %q, want %q", p, got, s)
		}
	}
	rec, err := e.store.Load("t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Files) != 2 {
		t.Errorf("record holds %d files, want the 2 applied: %+v", len(rec.Files), rec.Files)
	}
	ur, err := Undo(e.root, e.store, "")
	if err != nil {
		t.Fatalf("Undo: %v", err)
	}
	if strings.Join(ur.Restored, ",") != "f1.txt" || strings.Join(ur.Deleted, ",") != "new.txt" {
		t.Errorf("undo = %+v", ur)
	}
	for p, s := range orig {
		if got := e.read(p); got != s {
			t.Errorf("after undo %s = %q, want %q", p, got, s)
		}
	}
}

func appliedPaths(a []Applied) string {
	var s []string
	for _, x := range a {
		s = append(s, x.Path)
	}
	return strings.Join(s, ",")
}

func TestDurabilityUnconfirmed(t *testing.T) {
	e := newEnv(t)
	req, _ := fiveFiles(e)
	e.app.commitHook = (&failingCommits{failAt: "f2.txt", durability: true}).hook
	_, err := e.apply(req, "t1")
	var be *BatchError
	if !errors.As(err, &be) {
		t.Fatalf("Apply = %v, want an error", err)
	}
	if be.Code != "durability_unconfirmed" || !be.Written || be.Failed != "f2.txt" || strings.Join(be.Unconfirmed, ",") != "f2.txt" {
		t.Errorf("error = %+v", be)
	}
	if got := appliedPaths(be.Applied); got != "f1.txt,new.txt,f2.txt" {
		t.Errorf("applied = %s: the written file belongs in the list", got)
	}
	if got := e.read("f2.txt"); got != "changed 2\n" {
		t.Errorf("f2.txt = %q", got)
	}
	if got := e.read("f3.txt"); got != "file 3\n" {
		t.Errorf("f3.txt = %q: later files must not be attempted", got)
	}
	rec, _ := e.store.Load("t1")
	if rec == nil || rec.File("f2.txt") == nil || rec.File("f2.txt").State != turns.StateApplied {
		t.Errorf("f2.txt must be recorded for undo: %+v", rec)
	}
}

// TestFinalRevisionCheck: a file changed between preflight and its write is not written,
// and leaves no pending entry in the record.
func TestFinalRevisionCheck(t *testing.T) {
	for _, first := range []bool{true, false} {
		t.Run(fmt.Sprintf("first=%v", first), func(t *testing.T) {
			e := newEnv(t)
			req, _ := fiveFiles(e)
			target := "f2.txt"
			if first {
				target = "f1.txt"
			}
			e.app.commitHook = (&failingCommits{failAt: target, mutate: func() { e.write(target, "someone else\n") }}).hook
			_, err := e.apply(req, "t1")
			if !errors.Is(err, ErrStale) || Code(err) != "stale_revision" {
				t.Fatalf("Apply = %v, want ErrStale", err)
			}
			if got := e.read(target); got != "someone else\n" {
				t.Errorf("%s = %q: the concurrent change must survive", target, got)
			}
			rec, err := e.store.Load("t1")
			if first {
				// Nothing was applied: no record at all.
				if !errors.Is(err, turns.ErrNoTurn) {
					t.Errorf("record left: %+v, %v", rec, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.File(target) != nil {
				t.Errorf("pending entry left for %s", target)
			}
			for _, f := range rec.Files {
				if f.State != turns.StateApplied {
					t.Errorf("%s: state %s", f.Path, f.State)
				}
			}
		})
	}
}

func TestUndo(t *testing.T) {
	e := newEnv(t)
	ra := e.write("a.txt", "a0\n")
	rb := e.write("b.txt", "b0\n")
	if _, err := e.apply(m{"files": []m{{"path": "a.txt", "expected_revision": ra, "content": "a1\n"}, {"path": "b.txt", "expected_revision": rb, "content": "b1\n"}}}, "t1"); err != nil {
		t.Fatal(err)
	}
	// A second change in the same turn: undo goes back to the turn's start.
	if _, err := e.apply(m{"files": []m{{"path": "a.txt", "expected_revision": Revision([]byte("a1\n")), "content": "a2\n"}, {"path": "c.txt", "expected_revision": nil, "content": "c\n"}}}, "t1"); err != nil {
		t.Fatal(err)
	}
	// Someone changes b.txt after the turn: undo must leave it alone.
	e.write("b.txt", "mine\n")
	res, err := Undo(e.root, e.store, "t1")
	if !errors.Is(err, ErrNotUndone) {
		t.Fatalf("Undo = %v, want ErrNotUndone for the changed file", err)
	}
	if strings.Join(res.Restored, ",") != "a.txt" || strings.Join(res.Deleted, ",") != "c.txt" || len(res.Skipped) != 1 || res.Skipped[0].Path != "b.txt" {
		t.Errorf("undo = %+v", res)
	}
	for p, s := range map[string]string{"a.txt": "a0\n", "b.txt": "mine\n", "c.txt": "<absent>"} {
		if got := e.read(p); got != s {
			t.Errorf("%s = %q, want %q", p, got, s)
		}
	}
	if _, err := Undo(e.root, e.store, "t1"); !errors.Is(err, turns.ErrNoTurn) {
		t.Errorf("second undo = %v, want ErrNoTurn", err)
	}
	if _, err := Undo(e.root, e.store, ""); !errors.Is(err, turns.ErrNoTurn) {
		t.Errorf("undo of the latest with none left = %v", err)
	}
	if _, err := e.apply(m{"files": []m{{"path": "a.txt", "expected_revision": Revision([]byte("a0\n")), "content": "x"}}}, "t1"); err == nil {
		t.Errorf("an undone turn id was reused")
	}
}

func TestUndoLatest(t *testing.T) {
	e := newEnv(t)
	ra := e.write("a.txt", "0\n")
	for i, turn := range []string{"t1", "t2"} {
		if _, err := e.apply(m{"files": []m{{"path": "a.txt", "expected_revision": ra, "content": fmt.Sprintf("%d\n", i+1)}}}, turn); err != nil {
			t.Fatal(err)
		}
		ra = Revision(fmt.Appendf(nil, "%d\n", i+1))
	}
	res, err := Undo(e.root, e.store, "")
	if err != nil || res.Turn != "t2" || e.read("a.txt") != "1\n" {
		t.Fatalf("undo latest = %+v, %v, a.txt %q", res, err, e.read("a.txt"))
	}
	res, err = Undo(e.root, e.store, "")
	if err != nil || res.Turn != "t1" || e.read("a.txt") != "0\n" {
		t.Fatalf("undo next = %+v, %v, a.txt %q", res, err, e.read("a.txt"))
	}
}

func TestApprovalTarget(t *testing.T) {
	e := newEnv(t)
	r, err := patch.Decode([]byte(`{"files":[{"path":"b.txt","expected_revision":null,"content":""},{"path":"./dir/../a \"q\".txt","expected_revision":null,"content":""}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApprovalTarget(e.root, r)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal([]string{e.ws + "/b.txt", e.ws + "/a \"q\".txt"})
	if got != string(want) {
		t.Errorf("ApprovalTarget = %s, want %s", got, want)
	}
	r.Files[0].Path = ".git/config"
	if _, err := ApprovalTarget(e.root, r); !errors.Is(err, wsfs.ErrProtected) {
		t.Errorf("ApprovalTarget of a protected path = %v", err)
	}
}

func TestRead(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "one\ntwo\r\nthree")
	long := strings.Repeat("é", MaxLineBytes)
	e.write("long.txt", "short\n"+long+"\n")
	e.write("bin", "abc\x00def")
	e.write("empty", "")
	big := bytes.Repeat([]byte("x"), MaxReadBytes+1)
	os.WriteFile(filepath.Join(e.ws, "big"), big, 0o644)

	res, err := Read(e.root, "a.txt", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "     1\tone\n     2\ttwo\n     3\tthree\n" || res.TotalLines != 3 || res.Truncated || res.Lines != 3 {
		t.Errorf("read = %+v", res)
	}
	if res.SHA256 != fmt.Sprintf("%x", shaFull([]byte("one\ntwo\r\nthree"))) || res.Revision != res.SHA256[:16] {
		t.Errorf("sha256 %s revision %s", res.SHA256, res.Revision)
	}
	res, err = Read(e.root, "a.txt", ReadOptions{Offset: 2, Limit: 1})
	if err != nil || res.Content != "     2\ttwo\n" || !res.Truncated || res.Offset != 2 || res.Lines != 1 {
		t.Errorf("read 2+1 = %+v, %v", res, err)
	}
	res, err = Read(e.root, "long.txt", ReadOptions{})
	if err != nil || res.CutLines != 1 || !res.Truncated || !strings.Contains(res.Content, "… [line cut: 4000 bytes]") {
		t.Errorf("long line: %+v, %v", res, err)
	}
	if res, err := Read(e.root, "empty", ReadOptions{}); err != nil || res.TotalLines != 0 || res.Content != "" {
		t.Errorf("empty: %+v, %v", res, err)
	}
	for _, tc := range []struct {
		path string
		opts ReadOptions
		want error
	}{
		{"bin", ReadOptions{}, ErrBinary},
		{"big", ReadOptions{}, wsfs.ErrTooLarge},
		{"a.txt", ReadOptions{Offset: 4}, ErrOffset},
		{"missing", ReadOptions{}, wsfs.ErrNotExist},
	} {
		if _, err := Read(e.root, tc.path, tc.opts); !errors.Is(err, tc.want) {
			t.Errorf("Read(%s, %+v) = %v, want %v", tc.path, tc.opts, err, tc.want)
		}
	}
}

// tempFiles lists the staged temporary files (".s-code-*.tmp") under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasPrefix(info.Name(), ".s-code-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestUndoPendingRecord: a crash between the pending record and its finalization leaves
// pending entries; undo restores those the turn wrote and skips those it never wrote.
func TestUndoPendingRecord(t *testing.T) {
	e := newEnv(t)
	req, orig := fiveFiles(e)
	if _, err := e.apply(req, "t1"); err != nil {
		t.Fatal(err)
	}
	rec, err := e.store.Load("t1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range rec.Files {
		rec.Files[i].State = turns.StatePending
	}
	if err := e.store.Save(rec); err != nil {
		t.Fatal(err)
	}
	// f3.txt was "never written": put its original back behind the record's back.
	e.write("f3.txt", orig["f3.txt"])
	res, err := Undo(e.root, e.store, "t1")
	if err != nil {
		t.Fatalf("Undo: %v", err)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Path != "f3.txt" || res.Skipped[0].Reason != "never written by the turn" {
		t.Errorf("skipped = %+v", res.Skipped)
	}
	for p, s := range orig {
		if got := e.read(p); got != s {
			t.Errorf("%s = %q, want %q", p, got, s)
		}
	}
}

// TestDirectorySyncFails: the directory fsync after f2.txt's rename fails (injected; the
// fsyncs run behind the renames). The batch is an error naming f2.txt as written but
// unconfirmed; renames stop once the failure is seen, so the applied list is a prefix of the
// batch that holds f2.txt, and exactly the applied files changed and are recorded.
func TestDirectorySyncFails(t *testing.T) {
	e := newEnv(t)
	req, orig := fiveFiles(e)
	e.app.syncHook = func(rel string, sync func() error) error {
		if err := sync(); err != nil {
			return err
		}
		if rel == "f2.txt" {
			return &wsfs.DurabilityError{Path: rel, Err: errInjected}
		}
		return nil
	}
	_, err := e.apply(req, "t1")
	var be *BatchError
	if !errors.As(err, &be) || !errors.Is(err, errInjected) {
		t.Fatalf("Apply = %v, want the injected fsync failure", err)
	}
	if be.Code != "durability_unconfirmed" || !be.Written || be.Failed != "f2.txt" || strings.Join(be.Unconfirmed, ",") != "f2.txt" {
		t.Errorf("error = %+v", be)
	}
	order := []string{"f1.txt", "new.txt", "f2.txt", "f3.txt", "f4.txt", "f5.txt"}
	got := appliedPaths(be.Applied)
	if !strings.HasPrefix(strings.Join(order, ","), got) || !strings.Contains(got, "f2.txt") {
		t.Fatalf("applied %q is not a prefix of the batch holding f2.txt", got)
	}
	rec, err := e.store.Load("t1")
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]bool{}
	for _, a := range be.Applied {
		applied[a.Path] = true
		if rec.File(a.Path) == nil {
			t.Errorf("%s applied but not recorded", a.Path)
		}
	}
	if len(rec.Files) != len(be.Applied) {
		t.Errorf("record holds %d files, %d applied", len(rec.Files), len(be.Applied))
	}
	for _, p := range order {
		changed := e.read(p) != orig[p]
		if changed != applied[p] {
			t.Errorf("%s: changed %v, applied %v", p, changed, applied[p])
		}
	}
	if tmp := tempFiles(t, e.ws); len(tmp) != 0 {
		t.Errorf("staged temporary files left behind: %v", tmp)
	}
}

// TestConcurrentApply runs batches at once, each through its own workspace handle and
// store (as separate s-code processes do): patches sharing one turn must all be in its
// undo record, and of writers sending the same expected revision exactly one may win.
func TestConcurrentApply(t *testing.T) {
	const writers = 8
	e := newEnv(t)
	appliers := make([]*Applier, writers)
	for i := range appliers {
		root, err := wsfs.Open(e.ws)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		appliers[i] = &Applier{Root: root, Turns: turns.Open(filepath.Dir(e.store.Dir()), root.Path())}
	}
	run := func(req func(i int) m, turn string) []error {
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			b, err := json.Marshal(req(i))
			if err != nil {
				t.Fatal(err)
			}
			r, err := patch.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { _, errs[i] = appliers[i].Apply(r, turn) })
		}
		wg.Wait()
		return errs
	}
	for round := range 5 {
		turn := fmt.Sprintf("shared-%d", round)
		revs := make([]string, writers)
		for i := range writers {
			revs[i] = e.write(fmt.Sprintf("f%d.txt", i), "orig\n")
		}
		for i, err := range run(func(i int) m {
			return m{"files": []m{{"path": fmt.Sprintf("f%d.txt", i), "expected_revision": revs[i], "content": "new\n"}}}
		}, turn) {
			if err != nil {
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
		}
		res, err := Undo(e.root, e.store, turn)
		if err != nil {
			t.Fatalf("round %d: undo: %v", round, err)
		}
		if len(res.Restored) != writers {
			t.Errorf("round %d: undo restored %d of %d files (%v): the turn record lost entries", round, len(res.Restored), writers, res.Restored)
		}

		rev := e.write("same.txt", "orig\n")
		won := 0
		for i, err := range run(func(i int) m {
			return m{"files": []m{{"path": "same.txt", "expected_revision": rev, "content": fmt.Sprintf("writer %d\n", i)}}}
		}, fmt.Sprintf("own-%d", round)) {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrStale):
				t.Fatalf("round %d: writer %d: %v, want success or ErrStale", round, i, err)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d writers with the same expected revision succeeded, want 1 (a lost update)", round, won)
		}
	}
}
