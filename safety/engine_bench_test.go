package safety

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// tldrCommands loads the commands of the shared tldr corpus.
func tldrCommands(tb testing.TB) []string {
	tb.Helper()
	dir := testenv.SharedDir(tb)
	f, err := os.Open(filepath.Join(dir, "corpus", "tldr-commands.jsonl"))
	if err != nil {
		tb.Skipf("corpus: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct{ Cmd string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			tb.Fatal(err)
		}
		out = append(out, l.Cmd)
	}
	return out
}

// BenchmarkEngineCheck measures Check over the tldr corpus (one op = one whole pass); the
// verdicts/s metric is the throughput on one goroutine.
func BenchmarkEngineCheck(b *testing.B) {
	cmds := tldrCommands(b)
	ctx := caseContext("user")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range cmds {
			Check(c, ctx)
		}
	}
	b.ReportMetric(float64(len(cmds))*float64(b.N)/b.Elapsed().Seconds(), "verdicts/s")
}

// BenchmarkEngineParse measures the bare syntax parse of the same commands (a new parser
// per command, as a caller without ShellSafety would parse).
func BenchmarkEngineParse(b *testing.B) {
	cmds := tldrCommands(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range cmds {
			syntax.NewParser().Parse(strings.NewReader(c), "")
		}
	}
	b.ReportMetric(float64(len(cmds))*float64(b.N)/b.Elapsed().Seconds(), "parses/s")
}

// TestEngineSpread judges the whole corpus: no command may panic (internal.panic), every
// parse error must be ask or deny, and the spread is logged.
func TestEngineSpread(t *testing.T) {
	cmds := tldrCommands(t)
	ctx := caseContext("user")
	var n [3]int
	rejects := 0
	rules := map[string]int{}
	for _, c := range cmds {
		v := Check(c, ctx)
		n[v.Decision]++
		for _, f := range v.Findings {
			rules[f.Rule]++
			if f.Rule == "internal.panic" {
				t.Errorf("panic on %q", c)
			}
		}
		if _, err := parse(c, Bash); err != nil {
			rejects++
			if v.Decision == Allow {
				t.Errorf("parse error but allow: %q", c)
			}
		}
	}
	t.Logf("corpus %d: allow %d, ask %d, deny %d; parse rejects %d", len(cmds), n[Allow], n[Ask], n[Deny], rejects)
	if testing.Verbose() && os.Getenv("SPREAD_RULES") != "" {
		for r, k := range rules {
			t.Logf("%6d %s", k, r)
		}
	}
}
