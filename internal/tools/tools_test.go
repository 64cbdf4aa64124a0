package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// newWorkspace makes a workspace with files (path -> content; a content of "->TARGET"
// makes a symlink) and returns an Env on it.
func newWorkspace(t *testing.T, files map[string]string) *Env {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(c, "->"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := wsfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &Env{Root: root, Session: &Session{}, Mode: permission.AcceptEdits, Edit: newHelperEditor(t)}
}

func call(t *testing.T, env *Env, tool Tool, args string, out any) error {
	t.Helper()
	res, err := tool.Call(context.Background(), env, json.RawMessage(args))
	if err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return nil
}

func toolErr(t *testing.T, err error) *Error {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a *tools.Error", err, err)
	}
	return te
}

func TestRegistryRefusesDuplicates(t *testing.T) {
	r, err := NewRegistry(Core(EditLines)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Register(readFileTool); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("second read_file: %v, want ErrDuplicate", err)
	}
	other := Must(Spec[ReadFileInput, ReadFileResult]{Name: "read_file", Description: "replacement", ReadOnly: true, Call: ReadFile})
	r.Override(other)
	if got, _ := r.Lookup("read_file"); got.Description() != "replacement" {
		t.Fatal("Override did not replace read_file")
	}
	if _, err := NewRegistry(readFileTool, readFileTool); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("NewRegistry with a duplicate: %v", err)
	}
	want := []string{"apply_patch", "exec_command", "git_blame", "git_diff", "git_log", "git_show", "git_status", "glob", "grep", "list_dir", "read_file", "undo_turn", "update_plan"}
	var got []string
	for _, tl := range r.List() {
		got = append(got, tl.Name())
		if tl.InputSchema() == nil || tl.OutputSchema() == nil || tl.Description() == "" {
			t.Errorf("%s: missing schema or description", tl.Name())
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("tools %v, want %v", got, want)
	}
	for _, tl := range r.ReadOnlyTools().List() {
		if n := tl.Name(); n == "apply_patch" || n == "exec_command" || n == "undo_turn" {
			t.Errorf("%s is in the read-only set", n)
		}
	}
}

func TestUnknownArgumentRefused(t *testing.T) {
	env := newWorkspace(t, map[string]string{"a.txt": "x\n"})
	err := call(t, env, readFileTool, `{"path":"a.txt","offest":2}`, &ReadFileResult{})
	if te := toolErr(t, err); te.Code != "invalid_arguments" || !strings.Contains(te.Message, "offest") {
		t.Fatalf("got %+v", te)
	}
}

func TestUpdatePlan(t *testing.T) {
	env := newWorkspace(t, nil)
	cases := []struct {
		name, args, wantErr string
	}{
		{"ok", `{"plan":[{"step":"read","status":"completed"},{"step":"edit","status":"in_progress"},{"step":"test","status":"pending"}],"explanation":"x"}`, ""},
		{"two in progress", `{"plan":[{"step":"a","status":"in_progress"},{"step":"b","status":"in_progress"}]}`, "at most one step in_progress"},
		{"bad status", `{"plan":[{"step":"a","status":"done"}]}`, `status "done"`},
		{"empty step", `{"plan":[{"step":" ","status":"pending"}]}`, "empty step"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var res PlanResult
			err := call(t, env, updatePlanTool, c.args, &res)
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Steps) != 3 || res.Counts[StepInProgress] != 1 || env.Session.Plan().Steps[1].Step != "edit" {
					t.Fatalf("plan %+v", res)
				}
				return
			}
			if te := toolErr(t, err); !strings.Contains(te.Message, c.wantErr) {
				t.Fatalf("error %q, want %q", te.Message, c.wantErr)
			}
			if got := env.Session.Plan(); len(got.Steps) != 3 {
				t.Fatalf("a refused update changed the plan: %+v", got)
			}
		})
	}
}

func discoveryWorkspace(t *testing.T) *Env {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.go"), []byte("package secret // needle\n"), 0o644)
	env := newWorkspace(t, map[string]string{
		".gitignore":         "*.log\nbuild/\n!keep.log\n",
		".git/info/exclude":  "local.txt\n",
		".git/config":        "needle\n",
		"main.go":            "package main\n\n// needle here\nfunc main() {}\n",
		"sub/a.go":           "package sub\nvar Needle = 1\n",
		"sub/.gitignore":     "gen_*.go\n",
		"sub/gen_x.go":       "package sub // needle generated\n",
		"sub/deep/b_test.go": "package deep\n// NEEDLE\n",
		"app.log":            "needle in a log\n",
		"keep.log":           "needle kept\n",
		"local.txt":          "needle local\n",
		"build/out.go":       "needle built\n",
		"bin.dat":            "needle\x00binary",
		"link":               "->" + outside,
		"linkfile.go":        "->" + filepath.Join(outside, "secret.go"),
	})
	return env
}

func TestListDir(t *testing.T) {
	env := discoveryWorkspace(t)
	var res ListDirResult
	if err := call(t, env, listDirTool, `{"depth":2}`, &res); err != nil {
		t.Fatal(err)
	}
	got := map[string]DirEntry{}
	for _, e := range res.Entries {
		got[e.Path] = e
	}
	for _, p := range []string{"main.go", "sub", "sub/a.go", "keep.log", "link", ".gitignore"} {
		if _, ok := got[p]; !ok {
			t.Errorf("missing %s in %v", p, res.Entries)
		}
	}
	for _, p := range []string{"app.log", "local.txt", "build", "sub/gen_x.go", ".git", "link/secret.go", "sub/deep/b_test.go"} {
		if _, ok := got[p]; ok {
			t.Errorf("listed %s", p)
		}
	}
	if got["link"].Type != KindSymlink || got["sub"].Type != KindDir || got["main.go"].Size != 44 {
		t.Errorf("entries %+v %+v %+v", got["link"], got["sub"], got["main.go"])
	}
	if err := call(t, env, listDirTool, `{"path":"link"}`, &res); err == nil {
		t.Fatal("list_dir followed a symlink out of the workspace")
	} else if te := toolErr(t, err); !strings.Contains(te.Message, "symlink") {
		t.Fatalf("error %v", te)
	}
	if err := call(t, env, listDirTool, `{"path":"../"}`, &res); err == nil {
		t.Fatal("list_dir left the workspace")
	}
	if err := call(t, env, listDirTool, `{"max_entries":2,"include_ignored":true}`, &res); err != nil || !res.Truncated || len(res.Entries) != 2 {
		t.Fatalf("truncation: %v %+v", err, res)
	}
}

func TestGlob(t *testing.T) {
	env := discoveryWorkspace(t)
	var res GlobResult
	if err := call(t, env, globTool_, `{"pattern":"**/*.go","sort":"path"}`, &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Matches {
		got = append(got, m.Path)
	}
	if want := "linkfile.go main.go sub/a.go sub/deep/b_test.go"; strings.Join(got, " ") != want {
		t.Fatalf("glob %v, want %s", got, want)
	}
	if err := call(t, env, globTool_, `{"pattern":"*.go","path":"sub","include_ignored":true,"sort":"path"}`, &res); err != nil || len(res.Matches) != 2 {
		t.Fatalf("glob in sub with ignored: %v %+v", err, res)
	}
	if err := call(t, env, globTool_, `{"pattern":"[a-"}`, &res); err == nil {
		t.Fatal("bad pattern accepted")
	}
}

func TestGrep(t *testing.T) {
	env := discoveryWorkspace(t)
	var res GrepResult
	if err := call(t, env, grepTool_, `{"pattern":"needle","case_insensitive":true}`, &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Matches {
		got = append(got, m.Path)
	}
	// linkfile.go is a symlink: not read. bin.dat is binary. Ignored files are left out.
	if want := "keep.log main.go sub/a.go sub/deep/b_test.go"; strings.Join(got, " ") != want {
		t.Fatalf("grep %v, want %s", got, want)
	}
	if res.Matches[1].Line != 3 || res.Matches[1].Text != "// needle here" || res.FilesSkipped != 1 {
		t.Fatalf("match %+v, skipped %d", res.Matches[1], res.FilesSkipped)
	}
	if err := call(t, env, grepTool_, `{"pattern":"needle","glob":"**/*.go","context":1}`, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 1 || strings.Join(res.Matches[0].Before, "|") != "" || strings.Join(res.Matches[0].After, "|") != "func main() {}" {
		t.Fatalf("context: %+v", res.Matches)
	}
	if err := call(t, env, grepTool_, `{"pattern":"needle","files_only":true,"include_ignored":true}`, &res); err != nil {
		t.Fatal(err)
	}
	if want := "app.log build/out.go keep.log local.txt main.go sub/gen_x.go"; strings.Join(res.Files, " ") != want {
		t.Fatalf("files_only include_ignored %v, want %s", res.Files, want)
	}
	if err := call(t, env, grepTool_, `{"pattern":"(?P<x>a)\\1"}`, &res); err == nil {
		t.Fatal("backreference accepted")
	}
	if err := call(t, env, grepTool_, `{"pattern":"needle","path":"link"}`, &res); err == nil {
		t.Fatal("grep followed a symlinked directory")
	}
	if err := call(t, env, grepTool_, `{"pattern":"e","max_results":2}`, &res); err != nil || !res.Truncated || len(res.Matches) != 2 {
		t.Fatalf("truncation: %v %+v", err, res)
	}
}

func TestReadFile(t *testing.T) {
	env := newWorkspace(t, map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n", "crlf.txt": "a\r\nb\r\n"})
	var rd ReadFileResult
	if err := call(t, env, readFileTool, `{"path":"main.go","offset":3,"limit":2}`, &rd); err != nil {
		t.Fatal(err)
	}
	if rd.NumberedContent != "     3\tfunc main() {\n     4\t\tprintln(\"hi\")\n" || len(rd.Revision) != 16 || !strings.HasPrefix(rd.SHA256, rd.Revision) || !rd.Truncated || rd.TotalLines != 5 {
		t.Fatalf("read %+v", rd)
	}
	// apply_patch and undo_turn go through the user helper: internal/mcpserver tests them
	// with a real one.
}

func TestGitTools(t *testing.T) {
	git := testenv.RequireTool(t, "git")
	env := newWorkspace(t, map[string]string{"a.txt": "one\n"})
	run := func(args ...string) {
		cmd := exec.Command(git, args...)
		cmd.Dir = env.Root.Path()
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	run("add", "a.txt")
	run("commit", "-q", "-m", "first")
	os.WriteFile(env.Root.Abs("a.txt"), []byte("two\n"), 0o644)
	var shown struct {
		Type   string
		Commit struct{ Subject string }
	}
	if err := call(t, env, gitTools[3], `{}`, &shown); err != nil || shown.Type != "commit" || shown.Commit.Subject != "first" {
		t.Fatalf("git_show without object: %v %+v", err, shown)
	}
	var diff struct{ Patch string }
	if err := call(t, env, gitTools[1], `{}`, &diff); err != nil || !strings.Contains(diff.Patch, "+two") {
		t.Fatalf("git_diff: %v %+v", err, diff)
	}
	var st struct{ Entries []struct{ Path string } }
	if err := call(t, env, gitTools[0], `{}`, &st); err != nil || len(st.Entries) != 1 {
		t.Fatalf("git_status: %v %+v", err, st)
	}
	var lg struct{ Commits []struct{ Subject string } }
	if err := call(t, env, gitTools[2], `{"count":1}`, &lg); err != nil || lg.Commits[0].Subject != "first" {
		t.Fatalf("git_log: %v %+v", err, lg)
	}
	var bl struct{ Lines []struct{ Content string } }
	if err := call(t, env, gitTools[4], `{"path":"a.txt","revision":"HEAD"}`, &bl); err != nil || bl.Lines[0].Content != "one" {
		t.Fatalf("git_blame: %v %+v", err, bl)
	}
	// A repository whose configuration runs a program is refused with the rule id.
	run("config", "core.fsmonitor", "touch /tmp/pwned")
	err := call(t, env, gitTools[0], `{}`, &st)
	if te := toolErr(t, err); te.Rule != "git.config-exec" {
		t.Fatalf("fsmonitor repo: %+v", te)
	}
}

func TestHeadTail(t *testing.T) {
	h := newHeadTail(10)
	for i := 0; i < 100; i++ {
		h.Write([]byte{byte('a' + i%26)})
	}
	if s := h.String(); s != "abcde\n… [90 bytes cut] …\nrstuv" || h.total != 100 {
		t.Fatalf("head/tail %q", s)
	}
	h = newHeadTail(10)
	h.Write([]byte("short"))
	if h.String() != "short" || h.cut() != 0 {
		t.Fatalf("%q", h.String())
	}
}

// TestGrepLineSemantics checks that whole-buffer matching gives the result of matching each
// line on its own: matches never span lines, anchors are line anchors, a line counts once.
func TestGrepLineSemantics(t *testing.T) {
	env := newWorkspace(t, map[string]string{"f.txt": "a\nb\na b\nxx a\n\nend"})
	cases := []struct {
		pattern string
		lines   []int
	}{
		{`a\sb`, []int{3}},
		{`a[^z]b`, []int{3}},
		{`^a`, []int{1, 3}},
		{`a$`, []int{1, 4}},
		{`^$`, []int{5}},
		{`x`, []int{4}},
		{`end`, []int{6}},
		{`b\n`, nil},
	}
	for _, c := range cases {
		var res GrepResult
		if err := call(t, env, grepTool_, `{"pattern":`+strconvQuote(c.pattern)+`}`, &res); err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, m := range res.Matches {
			got = append(got, m.Line)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.lines) {
			t.Errorf("%q: lines %v, want %v", c.pattern, got, c.lines)
		}
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
