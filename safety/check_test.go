package safety

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// jsonCase is one line of a verdict case file (the shared cases and the class cases share
// the format).
type jsonCase struct {
	ID      string `json:"id"`
	Class   string `json:"class"`
	Context string `json:"context"`
	Cmd     string `json:"cmd"`
	Expect  string `json:"expect"`
	Cwd     string `json:"cwd"`
	Shell   string `json:"shell"`
}

// caseContext returns the context every shared case is judged in.
func caseContext(role string) Context {
	ctx := Context{Workspace: "/home/dev/proj", Cwd: "/home/dev/proj", Home: "/home/dev"}
	if role == "root" {
		ctx.Role = RoleRoot
	}
	return ctx
}

// accepts reports whether decision d meets expectation want; exact reports whether it is
// the one the case names (ask accepts deny as safe but not exact).
func accepts(want string, d Decision) (ok, exact bool) {
	switch want {
	case "not-allow":
		return d != Allow, d != Allow
	case "ask":
		return d != Allow, d == Ask
	}
	return d.String() == want, d.String() == want
}

func readCases(t *testing.T, file string) []jsonCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Skipf("case file %s: %v", file, err)
	}
	defer f.Close()
	var out []jsonCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var c jsonCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, c)
	}
	return out
}

func runCases(t *testing.T, cases []jsonCase) {
	exact := 0
	for _, c := range cases {
		ctx := caseContext(c.Context)
		if c.Cwd != "" {
			ctx.Cwd = c.Cwd
		}
		if c.Shell == "sh" {
			ctx.Dialect = POSIX
		}
		v := Check(c.Cmd, ctx)
		for _, f := range v.Findings {
			if f.Rule == "internal.panic" {
				t.Errorf("%s %q: the checker panicked", c.ID, c.Cmd)
			}
		}
		ok, ex := accepts(c.Expect, v.Decision)
		if ex {
			exact++
		}
		if !ok {
			t.Errorf("%s (%s) %q: got %s, want %s; findings %+v", c.ID, c.Class, c.Cmd, v.Decision, c.Expect, v.Findings)
		} else if !ex {
			t.Logf("%s %q: got %s, %s is the exact answer", c.ID, c.Cmd, v.Decision, c.Expect)
		}
	}
	t.Logf("%d/%d exact", exact, len(cases))
}

// TestSharedCases judges every case of the team's shared case file.
func TestSharedCases(t *testing.T) {
	dir := testenv.SharedDir(t)
	runCases(t, readCases(t, filepath.Join(dir, "cases", "shellsafety.jsonl")))
}

// TestExtraCases judges a case file named by S_CODE_CASES (for trying other case sets
// without committing them).
func TestExtraCases(t *testing.T) {
	f := os.Getenv("S_CODE_CASES")
	if f == "" {
		t.Skip("S_CODE_CASES is not set")
	}
	runCases(t, readCases(t, f))
}
