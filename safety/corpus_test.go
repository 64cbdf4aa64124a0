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

	"mvdan.cc/sh/v3/syntax"

	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/safety"
)

// parseErrorRule is the rule id of the finding Check gives a command its parser rejects.
const parseErrorRule = "parse.error"

// loadCorpus returns the commands of the shared tldr corpus
// (<shared>/corpus/tldr-commands.jsonl), skipping tb with the reason when the shared folder
// is absent.
func loadCorpus(tb testing.TB) []string {
	tb.Helper()
	path := filepath.Join(testenv.SharedDir(tb), "corpus", "tldr-commands.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Skipf("tldr corpus: %v", err)
	}
	var cmds []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var line struct {
			Page string `json:"page"`
			Cmd  string `json:"cmd"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			tb.Fatalf("%s:%d: %v", path, n, err)
		}
		cmds = append(cmds, line.Cmd)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	if len(cmds) == 0 {
		tb.Fatalf("%s holds no commands", path)
	}
	return cmds
}

// corpusContext is the user context the corpus is judged in (the shared cases' context).
func corpusContext() safety.Context {
	return safety.Context{Role: safety.RoleUser, Workspace: caseWorkspace, Cwd: caseWorkspace, Home: caseHome}
}

// TestCorpus judges every command of the shared tldr corpus once: each gets a valid
// verdict that keeps the verdict contract; each command the parser rejects (a parse.error
// finding, or a bare syntax parse that fails) is ask or deny, never allow. It logs the
// counts: total, parse rejects, and the allow/ask/deny spread.
func TestCorpus(t *testing.T) {
	cmds := loadCorpus(t)
	ctx := corpusContext()
	var (
		spread       [3]int
		parseRejects int // commands with a parse.error finding
		bareRejects  int // commands syntax.NewParser().Parse rejects
		failures     int
	)
	fail := func(format string, args ...any) {
		failures++
		if failures <= 20 {
			t.Errorf(format, args...)
		}
	}
	for _, cmd := range cmds {
		v := safety.Check(cmd, ctx)
		if !v.Decision.Known() {
			fail("%q: decision %d out of range", cmd, int(v.Decision))
			continue
		}
		spread[v.Decision]++
		for _, b := range checkFindings(cmd, v) {
			fail("%q: %s", cmd, b)
		}
		rejected := false
		for _, f := range v.Findings {
			if f.Rule == parseErrorRule {
				rejected = true
				if f.Decision == safety.Allow {
					fail("%q: %s finding with decision allow", cmd, parseErrorRule)
				}
			}
		}
		if rejected {
			parseRejects++
		}
		if _, err := syntax.NewParser().Parse(strings.NewReader(cmd), ""); err != nil {
			bareRejects++
			if v.Decision == safety.Allow {
				fail("%q: the bash parser rejects it (%v) but Check allows it", cmd, err)
			}
		}
	}
	if failures > 20 {
		t.Errorf("… and %d more failures", failures-20)
	}
	t.Logf("tldr corpus: %d commands; %d parse rejects (rule %s), %d rejected by the bare bash parser", len(cmds), parseRejects, parseErrorRule, bareRejects)
	t.Logf("spread: allow %s, ask %s, deny %s", pct(spread[safety.Allow], len(cmds)), pct(spread[safety.Ask], len(cmds)), pct(spread[safety.Deny], len(cmds)))
}

// pct formats n of total as "n (p%)".
func pct(n, total int) string {
	return fmt.Sprintf("%d (%.1f%%)", n, 100*float64(n)/float64(total))
}
