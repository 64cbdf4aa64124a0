package gitsafe

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// benchRepo builds a workspace of files files in 100 directories, committed, then
// modifies every 100th file and adds 10 untracked ones.
func benchRepo(b *testing.B, files int) string {
	b.Helper()
	testenv.RequireTool(b, "git")
	ws := b.TempDir()
	gitIn(b, ws, "init", "-q", "-b", "main")
	for i := 0; i < files; i++ {
		writeFile(b, filepath.Join(ws, fmt.Sprintf("d%02d/f%05d.txt", i%100, i)), fmt.Sprintf("file %d\nline two\n", i))
	}
	gitIn(b, ws, "add", ".")
	gitIn(b, ws, "commit", "-q", "-m", "many files")
	for i := 0; i < files; i += 100 {
		writeFile(b, filepath.Join(ws, fmt.Sprintf("d%02d/f%05d.txt", i%100, i)), "changed\n")
	}
	for i := 0; i < 10; i++ {
		writeFile(b, filepath.Join(ws, fmt.Sprintf("new%d.txt", i)), "new\n")
	}
	// Let plain git refresh and write the index once, so neither side pays for it below.
	gitIn(b, ws, "status", "--porcelain=v2")
	return ws
}

// BenchmarkStatus10k compares, in the same run and interleaved, plain
// `git status --porcelain=v2` with gitsafe's Status plus JSON encoding (what
// `s-code git status --json` does after flag parsing), on 10,000 files. Status includes
// the repository check before git runs. It reports each side's ms/op and their ratio
// (goal: at most 1.3). scripts/bench-git-status.sh measures the s-code binary itself.
func BenchmarkStatus10k(b *testing.B) {
	ws := benchRepo(b, 10000)
	r := openRepo(b, ws)
	var plain, ours, check time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		cmd := exec.Command("git", "status", "--porcelain=v2")
		cmd.Dir = ws
		cmd.Env = plainEnv(filepath.Join(ws, ".no-home"))
		if out, err := cmd.Output(); err != nil || len(out) == 0 {
			b.Fatalf("plain git status: %v", err)
		}
		t1 := time.Now()
		st, err := r.Status(ctx, StatusOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := json.NewEncoder(discard{}).Encode(st); err != nil {
			b.Fatal(err)
		}
		if len(st.Entries) != 110 {
			b.Fatalf("status: %d entries, want 110", len(st.Entries))
		}
		t2 := time.Now()
		if err := r.Check(); err != nil {
			b.Fatal(err)
		}
		check += time.Since(t2)
		plain += t1.Sub(t0)
		ours += t2.Sub(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(plain.Microseconds())/1000/n, "plain-ms/op")
	b.ReportMetric(float64(ours.Microseconds())/1000/n, "scode-ms/op")
	b.ReportMetric(float64(check.Microseconds())/n, "check-µs/op")
	b.ReportMetric(float64(ours)/float64(plain), "ratio")
}

// BenchmarkCheck measures the repository check alone on a small repository.
func BenchmarkCheck(b *testing.B) {
	r := openRepo(b, newRepo(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := r.Check(); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkPin measures what pinning adds to each git command: the private view of the
// checked directories (pinLayout), the layout comparison after git (verify) and release.
func BenchmarkPin(b *testing.B) {
	r := openRepo(b, newRepo(b))
	l, err := r.check()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := pinLayout(l)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.verify(l); err != nil {
			b.Fatal(err)
		}
		p.release()
	}
}
