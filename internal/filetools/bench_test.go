//go:build linux

package filetools

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// The batch benchmarks change 32 files of 1000 lines, 100 lines each (every tenth line).
const (
	benchFiles = 32
	benchLines = 1000
	benchEdits = 100
)

func benchName(f int) string { return fmt.Sprintf("f%02d.txt", f) }

func benchOrig(f, line int) string {
	return fmt.Sprintf("file %d, line %d: the quick brown fox jumps over the lazy dog\n", f, line)
}

func benchNew(f, line int) string { return fmt.Sprintf("file %d, line %d: changed\n", f, line) }

// benchChanged reports whether line (1-based) is one the batch changes: lines 5, 15, 25, …
func benchChanged(k int) int { return 10*k + 5 }

func writeBenchFiles(b *testing.B, dir string) {
	b.Helper()
	for f := range benchFiles {
		var s strings.Builder
		for l := 1; l <= benchLines; l++ {
			s.WriteString(benchOrig(f, l))
		}
		if err := os.WriteFile(filepath.Join(dir, benchName(f)), []byte(s.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// benchRequest builds the apply_patch envelope of line edits, with the files' revisions.
func benchRequest(b *testing.B, dir string) []byte {
	b.Helper()
	type edit struct {
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
		NewText   string `json:"new_text"`
	}
	type file struct {
		Path             string `json:"path"`
		ExpectedRevision string `json:"expected_revision"`
		Edits            []edit `json:"edits"`
	}
	var files []file
	for f := range benchFiles {
		data, err := os.ReadFile(filepath.Join(dir, benchName(f)))
		if err != nil {
			b.Fatal(err)
		}
		fl := file{Path: benchName(f), ExpectedRevision: Revision(data)}
		for k := range benchEdits {
			l := benchChanged(k)
			fl.Edits = append(fl.Edits, edit{l, l, benchNew(f, l)})
		}
		files = append(files, fl)
	}
	out, err := json.Marshal(map[string]any{"files": files})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// benchDiff builds the same change as a unified diff for git apply: one hunk per changed
// line with three lines of context on each side.
func benchDiff() []byte {
	var s strings.Builder
	for f := range benchFiles {
		n := benchName(f)
		fmt.Fprintf(&s, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", n, n, n, n)
		for k := range benchEdits {
			l := benchChanged(k)
			fmt.Fprintf(&s, "@@ -%d,7 +%d,7 @@\n", l-3, l-3)
			for c := l - 3; c < l; c++ {
				s.WriteString(" " + benchOrig(f, c))
			}
			s.WriteString("-" + benchOrig(f, l))
			s.WriteString("+" + benchNew(f, l))
			for c := l + 1; c <= l+3; c++ {
				s.WriteString(" " + benchOrig(f, c))
			}
		}
	}
	return []byte(s.String())
}

func checkBenchResult(b *testing.B, dir string) {
	b.Helper()
	data, err := os.ReadFile(filepath.Join(dir, benchName(benchFiles-1)))
	if err != nil {
		b.Fatal(err)
	}
	if l := benchChanged(benchEdits - 1); !strings.Contains(string(data), benchNew(benchFiles-1, l)) {
		b.Fatalf("the change was not applied")
	}
}

// benchDirs runs f on a temporary directory of the default file system ("disk") and, where
// /dev/shm is a tmpfs, on one there ("tmpfs", where fsync costs nothing: git apply does not
// fsync, so this compares the work itself).
func benchDirs(b *testing.B, f func(b *testing.B, tmp func() string)) {
	b.Run("disk", func(b *testing.B) { f(b, b.TempDir) })
	b.Run("tmpfs", func(b *testing.B) {
		var st unix.Statfs_t
		if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
			b.Skip("/dev/shm is not a tmpfs")
		}
		f(b, func() string {
			d, err := os.MkdirTemp("/dev/shm", "s-code-bench-")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { os.RemoveAll(d) })
			return d
		})
	})
}

// BenchmarkApplyBatch applies one batch of 32 files x 100 line edits (decode, preflight,
// atomic fsync'd writes, undo record), the files reset before each iteration.
func BenchmarkApplyBatch(b *testing.B) { benchDirs(b, benchApplyBatch) }

func benchApplyBatch(b *testing.B, tmp func() string) {
	dir := filepath.Join(tmp(), "ws")
	os.Mkdir(dir, 0o755)
	writeBenchFiles(b, dir)
	req := benchRequest(b, dir)
	root, err := wsfs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	app := &Applier{Root: root, Turns: turns.Open(tmp(), root.Path())}
	b.SetBytes(int64(len(req)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		writeBenchFiles(b, dir)
		b.StartTimer()
		r, err := patch.Decode(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := app.Apply(r, fmt.Sprintf("bench-%d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	checkBenchResult(b, dir)
}

// BenchmarkApplyVsGitApply applies the batch with apply_patch and the same change as a
// unified diff with the real `git apply` in a temporary repository, alternating in every
// iteration so that both see the same machine load. It reports milliseconds per batch:
// s-code-ms (durable: two fsyncs per file and the undo record), git-apply-ms (git apply
// does not fsync) and git-apply+syncfs-ms (git apply followed by syncfs(2) on the
// repository's file system, the cheapest way to make its result durable).
func BenchmarkApplyVsGitApply(b *testing.B) { benchDirs(b, benchVsGit) }

func benchVsGit(b *testing.B, tmp func() string) {
	git, err := exec.LookPath("git")
	if err != nil {
		b.Skip("git is not installed")
	}
	ws := filepath.Join(tmp(), "ws")
	repo := filepath.Join(tmp(), "repo")
	os.Mkdir(ws, 0o755)
	os.Mkdir(repo, 0o755)
	if out, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	diff := filepath.Join(tmp(), "change.diff")
	if err := os.WriteFile(diff, benchDiff(), 0o644); err != nil {
		b.Fatal(err)
	}
	writeBenchFiles(b, ws)
	req := benchRequest(b, ws)
	root, err := wsfs.Open(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	app := &Applier{Root: root, Turns: turns.Open(tmp(), root.Path())}
	gitApply := func(sync bool) time.Duration {
		writeBenchFiles(b, repo)
		cmd := exec.Command(git, "apply", diff)
		cmd.Dir = repo
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git apply: %v: %s", err, out)
		}
		if sync {
			fd, err := unix.Open(repo, unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := unix.Syncfs(fd); err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}
		return time.Since(start)
	}
	var ours, plain, synced time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		writeBenchFiles(b, ws)
		start := time.Now()
		r, err := patch.Decode(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := app.Apply(r, fmt.Sprintf("bench-%d", i)); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(start)
		plain += gitApply(false)
		synced += gitApply(true)
	}
	b.StopTimer()
	checkBenchResult(b, ws)
	checkBenchResult(b, repo)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(ours), "s-code-ms")
	b.ReportMetric(ms(plain), "git-apply-ms")
	b.ReportMetric(ms(synced), "git-apply+syncfs-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkRead10MiB reads a 10 MiB text file with read_file (numbered lines, SHA-256).
func BenchmarkRead10MiB(b *testing.B) {
	dir := b.TempDir()
	line := strings.Repeat("x", 79) + "\n"
	data := strings.Repeat(line, (10<<20)/len(line))
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(data), 0o644); err != nil {
		b.Fatal(err)
	}
	root, err := wsfs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Read(root, "big.txt", ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if res.TotalLines != len(data)/len(line) {
			b.Fatalf("total lines %d", res.TotalLines)
		}
	}
}
