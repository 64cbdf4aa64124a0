package safety_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/safety"
)

// The context every case is judged in unless it names its own (see testdata/README.md).
const (
	caseWorkspace = "/home/dev/proj"
	caseHome      = "/home/dev"
)

// verdictCase is one line of a testdata/*.jsonl case file.
type verdictCase struct {
	ID        string `json:"id"`
	Class     string `json:"class"`
	Context   string `json:"context"`
	Cmd       string `json:"cmd"`
	Expect    string `json:"expect"`
	Workspace string `json:"workspace,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
	Home      string `json:"home,omitempty"`
	Shell     string `json:"shell,omitempty"`
	Note      string `json:"note,omitempty"`

	file string // the file and line it came from, for messages
}

// context returns the safety.Context the case is judged in.
func (c verdictCase) context() safety.Context {
	ctx := safety.Context{Role: safety.RoleUser, Workspace: caseWorkspace, Home: caseHome}
	if c.Context == "root" {
		ctx.Role = safety.RoleRoot
	}
	if c.Workspace != "" {
		ctx.Workspace = c.Workspace
	}
	ctx.Cwd = ctx.Workspace
	if c.Cwd != "" {
		ctx.Cwd = c.Cwd
	}
	if c.Home != "" {
		ctx.Home = c.Home
	}
	if c.Shell == "sh" {
		ctx.Dialect = safety.POSIX
	}
	return ctx
}

// readCases parses one case file strictly: unknown fields, missing fields, bad values
// and duplicate ids are errors, so that a typo cannot silently turn a case off.
func readCases(path string) ([]verdictCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cases: %w", err)
	}
	var cases []verdictCase
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var c verdictCase
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		c.file = fmt.Sprintf("%s:%d", filepath.Base(path), n)
		switch {
		case c.ID == "" || c.Cmd == "":
			return nil, fmt.Errorf("%s: id and cmd are required", c.file)
		case seen[c.ID]:
			return nil, fmt.Errorf("%s: duplicate id %q", c.file, c.ID)
		case c.Context != "user" && c.Context != "root":
			return nil, fmt.Errorf("%s: context %q (want user or root)", c.file, c.Context)
		case c.Shell != "" && c.Shell != "bash" && c.Shell != "sh":
			return nil, fmt.Errorf("%s: shell %q (want bash or sh)", c.file, c.Shell)
		}
		switch c.Expect {
		case "allow", "ask", "deny", "not-allow":
		default:
			return nil, fmt.Errorf("%s: expect %q (want allow, ask, deny or not-allow)", c.file, c.Expect)
		}
		seen[c.ID] = true
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cases, nil
}

// loadCases returns every case of testdata/*.jsonl, failing the test on a bad file.
func loadCases(t testing.TB) []verdictCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.jsonl case files")
	}
	var all []verdictCase
	ids := map[string]string{}
	for _, f := range files {
		cs, err := readCases(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if prev, ok := ids[c.ID]; ok {
				t.Fatalf("%s: id %q already used at %s", c.file, c.ID, prev)
			}
			ids[c.ID] = c.file
		}
		all = append(all, cs...)
	}
	return all
}

// checkFindings reports every way v breaks the verdict contract for command: findings
// with an empty or undotted rule id, no message, an out-of-range offset or decision, or a
// decision that is not the strictest of its findings.
func checkFindings(command string, v safety.Verdict) []string {
	var bad []string
	strictest := safety.Allow
	for i, f := range v.Findings {
		if f.Rule == "" || !strings.Contains(f.Rule, ".") || strings.HasPrefix(f.Rule, ".") || strings.HasSuffix(f.Rule, ".") {
			bad = append(bad, fmt.Sprintf("finding %d: rule id %q is not a dotted id", i, f.Rule))
		}
		if strings.TrimSpace(f.Message) == "" {
			bad = append(bad, fmt.Sprintf("finding %d (%s): empty message", i, f.Rule))
		}
		if f.Offset < 0 || f.Offset > len(command) {
			bad = append(bad, fmt.Sprintf("finding %d (%s): offset %d outside the command (%d bytes)", i, f.Rule, f.Offset, len(command)))
		}
		if !f.Decision.Known() {
			bad = append(bad, fmt.Sprintf("finding %d (%s): decision %d out of range", i, f.Rule, int(f.Decision)))
		}
		strictest = strictest.Stricter(f.Decision)
	}
	if v.Decision != strictest {
		bad = append(bad, fmt.Sprintf("verdict %s is not the strictest of its findings (%s)", v.Decision, strictest))
	}
	return bad
}

// short returns s cut to n bytes for a log line.
func short(s string, n int) string {
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:n], len(s))
}

// TestCases judges every case of testdata/*.jsonl and checks its expected decision and the
// shape of every finding. Subtests are named by case id, so `-run TestCases/pub-044` runs one.
func TestCases(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.ID, func(t *testing.T) {
			t.Parallel()
			v := safety.Check(c.Cmd, c.context())
			for _, b := range checkFindings(c.Cmd, v) {
				t.Errorf("%s %s: %s", c.file, short(c.Cmd, 80), b)
			}
			got := v.Decision
			ok := false
			switch c.Expect {
			case "allow":
				ok = got == safety.Allow
			case "ask":
				ok = got != safety.Allow
				if got == safety.Deny {
					t.Logf("over-strict: %s %s expects ask, got deny (%s)", c.file, short(c.Cmd, 80), rules(v))
				}
			case "deny":
				ok = got == safety.Deny
			case "not-allow":
				ok = got != safety.Allow
			}
			if !ok {
				t.Errorf("%s [%s] %s: got %s (%s), want %s", c.file, c.Class, short(c.Cmd, 120), got, rules(v), c.Expect)
			}
		})
	}
}

// rules lists a verdict's findings as "rule=decision" for messages.
func rules(v safety.Verdict) string {
	if len(v.Findings) == 0 {
		return "no findings"
	}
	parts := make([]string, 0, len(v.Findings))
	for _, f := range v.Findings {
		parts = append(parts, f.Rule+"="+f.Decision.String())
	}
	return strings.Join(parts, ", ")
}

// TestSharedCasesCopy checks that testdata/shellsafety.jsonl is a byte-identical copy of the
// team's shared cases, when the shared folder is present.
func TestSharedCasesCopy(t *testing.T) {
	shared := filepath.Join(testenv.SharedDir(t), "cases", "shellsafety.jsonl")
	want, err := os.ReadFile(shared)
	if err != nil {
		t.Skipf("shared cases: %v", err)
	}
	got, err := os.ReadFile(filepath.Join("testdata", "shellsafety.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("safety/testdata/shellsafety.jsonl differs from %s: update the copy (cp %s safety/testdata/)", shared, shared)
	}
}

// TestCaseFilesCoverEveryClass checks that classes.jsonl keeps at least five cases for each
// class it names, so a class cannot quietly shrink to one example.
func TestCaseFilesCoverEveryClass(t *testing.T) {
	cs, err := readCases(filepath.Join("testdata", "classes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range cs {
		if want := "cls-" + c.Class + "-"; !strings.HasPrefix(c.ID, want) {
			t.Errorf("%s: id %q does not start with %q", c.file, c.ID, want)
		}
		count[c.Class]++
	}
	for class, n := range count {
		if n < 5 {
			t.Errorf("class %s has %d cases, want at least 5", class, n)
		}
	}
	if len(count) < 30 {
		t.Errorf("classes.jsonl names %d classes, want at least 30", len(count))
	}
}
