package safety_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/s-code-dev/s-code/safety"
)

// maxFuzzSeed is the longest case used as a fuzz seed: the budget cases (hundreds of
// kilobytes) are judged by TestCases and would only slow the mutator down.
const maxFuzzSeed = 16 << 10

// hasControl reports whether s holds a control character other than tab and newline
// (C0, DEL or C1, as unicode.IsControl defines them).
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return r != '\t' && r != '\n' && unicode.IsControl(r)
	}) >= 0
}

// FuzzCheck judges arbitrary commands in user and root context. Seeds are every case in
// testdata/*.jsonl and, when the shared folder is present, the shared cases. It checks that
// Check never panics, gives the same verdict for the same input twice, never allows input
// holding a control character (a parser differential), that every verdict keeps its
// contract (dotted rule ids, messages, offsets inside the command, decision = strictest
// finding), and that wrapping the command (see wrappings) never turns ask or deny into
// allow.
func FuzzCheck(f *testing.F) {
	seeds := loadCases(f)
	if shared := sharedCases(f); shared != nil {
		seeds = append(seeds, shared...)
	}
	for _, c := range seeds {
		if len(c.Cmd) <= maxFuzzSeed {
			f.Add(c.Cmd, c.Context == "root")
		}
	}
	f.Fuzz(func(t *testing.T, cmd string, root bool) {
		ctx := safety.Context{Role: safety.RoleUser, Workspace: caseWorkspace, Cwd: caseWorkspace, Home: caseHome}
		if root {
			ctx.Role = safety.RoleRoot
		}
		v1 := safety.Check(cmd, ctx)
		v2 := safety.Check(cmd, ctx)
		if !reflect.DeepEqual(v1, v2) {
			t.Fatalf("Check(%q) is not deterministic:\n first %+v\nsecond %+v", cmd, v1, v2)
		}
		if hasControl(cmd) && v1.Decision == safety.Allow {
			t.Fatalf("Check(%q) allowed input holding a control character: %+v", cmd, v1)
		}
		for _, b := range checkFindings(cmd, v1) {
			t.Errorf("Check(%q): %s", cmd, b)
		}
		for _, w := range wrappings(cmd) {
			got := safety.Check(w.cmd, ctx).Decision
			if v1.Decision != safety.Allow && got == safety.Allow {
				t.Errorf("%s turns %s into allow: Check(%q) is %s, Check(%q) is allow", w.name, v1.Decision, cmd, v1.Decision, w.cmd)
			}
			if w.keepsDeny && v1.Decision == safety.Deny && got != safety.Deny {
				t.Errorf("%s lowers deny: Check(%q) is deny, Check(%q) is %s", w.name, cmd, w.cmd, got)
			}
		}
	})
}

// wrapping is cmd placed inside a construct that runs it unchanged.
type wrapping struct {
	name, cmd string
	keepsDeny bool // the construct cannot change how cmd parses, so a deny must stay deny
}

// wrappings returns cmd after a harmless statement, after an and-list, and as a literal
// bash -c script: constructs that run cmd unchanged and close nothing after it (a closing
// "}" or "fi" could be swallowed by an open here-document or a trailing backslash in cmd).
// Wrapping a command never makes it safer, so none of them may be allowed when cmd is not,
// and the two lists must keep a deny.
func wrappings(cmd string) []wrapping {
	return []wrapping{
		{"a preceding statement", "true; " + cmd, true},
		{"an and-list", "true && " + cmd, true},
		{"bash -c", "bash -c '" + strings.ReplaceAll(cmd, "'", `'\''`) + "'", false},
	}
}

// sharedCases returns the team's shared cases (shellsafety.jsonl in the shared folder), or
// nil when the folder is absent. Unlike testenv.SharedDir it never skips: seeds are optional,
// and testdata holds a copy of the same cases.
func sharedCases(tb testing.TB) []verdictCase {
	dir := os.Getenv("S_CODE_SHARED")
	if dir == "" {
		// The package directory is <repo>/safety; the shared folder sits beside <repo>.
		wd, err := os.Getwd()
		if err != nil {
			return nil
		}
		dir = filepath.Join(filepath.Dir(filepath.Dir(wd)), "shared")
	}
	cs, err := readCases(filepath.Join(dir, "cases", "shellsafety.jsonl"))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			tb.Logf("shared cases not used as seeds: %v", err)
		}
		return nil
	}
	return cs
}
