package safety_test

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/s-code-dev/s-code/safety"
)

// BenchmarkCheckCorpus judges every command of the shared tldr corpus per iteration and
// reports the throughput in verdicts per second (goal: at least 50,000 on one core, `make
// bench` runs it with -cpu 1).
func BenchmarkCheckCorpus(b *testing.B) {
	cmds := loadCorpus(b)
	ctx := corpusContext()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, c := range cmds {
			safety.Check(c, ctx)
		}
		n++
	}
	report(b, n*len(cmds), "verdicts/s")
}

// BenchmarkParseCorpus parses every command of the same corpus with a bare
// syntax.NewParser().Parse per iteration and reports commands per second: the floor that
// Check is measured against (goal: Check at most 2x the bare parse).
func BenchmarkParseCorpus(b *testing.B) {
	cmds := loadCorpus(b)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, c := range cmds {
			syntax.NewParser().Parse(strings.NewReader(c), "")
		}
		n++
	}
	report(b, n*len(cmds), "commands/s")
}

// report adds the throughput metric (count per second of b's elapsed time) and the time of
// one command in nanoseconds.
func report(b *testing.B, count int, unit string) {
	s := b.Elapsed().Seconds()
	if count == 0 || s == 0 {
		return
	}
	b.ReportMetric(float64(count)/s, unit)
	b.ReportMetric(s*1e9/float64(count), "ns/command")
}
