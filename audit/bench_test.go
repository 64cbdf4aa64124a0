//go:build unix

package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// benchRecord is a typical "start" record (about 400 bytes on disk).
func benchRecord(i int) *Record {
	return &Record{
		Kind: KindStart, RequestID: fmt.Sprintf("01JD%012d", i), Helper: "user",
		Peer:    &Peer{UID: 1000, GID: 1000, PID: 31337, Exe: "/usr/local/bin/s-code"},
		Command: "go test -count=1 ./internal/... 2>&1 | tee /tmp/test.log", Cwd: "/home/dev/src/project",
		Workspace: "/home/dev/src/project", Client: &VerdictSummary{Decision: "allow"}, Verdict: &VerdictSummary{Decision: "allow"},
	}
}

// benchDir returns a directory for a benchmark log: $S_CODE_BENCH_DIR when set (to measure
// another disk), else the test's temporary directory.
func benchDir(b *testing.B) string {
	if d := os.Getenv("S_CODE_BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "audit-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return filepath.Join(dir, "audit")
	}
	return filepath.Join(b.TempDir(), "audit")
}

// BenchmarkAppendDurable measures durable appends (each returns after fsync) with 1 and 64
// concurrent writers; with 64, group commit shares fsyncs. It reports appends/s and the mean
// records per fsync.
func BenchmarkAppendDurable(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			l, err := Open(benchDir(b), Options{DisableJournal: true})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			recs := make([]*Record, writers)
			for i := range recs {
				recs[i] = benchRecord(i)
			}
			syncs0 := l.fsyncs.Load()
			cpu0 := cpuTime(b)
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			per := (b.N + writers - 1) / writers
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; i < per; i++ {
						r := *recs[w]
						if err := l.Append(context.Background(), &r, true); err != nil {
							b.Error(err)
							return
						}
					}
				}(w)
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			n := per * writers
			b.ReportMetric(float64(n)/el.Seconds(), "appends/s")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(n), "cpu-µs/append")
			if s := l.fsyncs.Load() - syncs0; s > 0 {
				b.ReportMetric(float64(n)/float64(s), "records/fsync")
			}
		})
	}
}

// BenchmarkFsync measures one write+fsync of a record-sized line on the benchmark's disk,
// the floor of a single writer's durable append.
func BenchmarkFsync(b *testing.B) {
	dir := benchDir(b)
	os.MkdirAll(dir, 0o700)
	f, err := os.OpenFile(filepath.Join(dir, "fsync"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := make([]byte, 400)
	for i := 0; i < b.N; i++ {
		f.Write(line)
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify measures Verify over a 64 MiB log (about 160,000 records in 4 files, seals
// every 1000) without and with the key; SetBytes makes MB/s the figure.
func BenchmarkVerify(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "audit")
	l, err := Open(dir, Options{DisableJournal: true, MaxFileBytes: 16 << 20})
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for i := 0; size < 64<<20; i++ {
		if err := l.Append(context.Background(), benchRecord(i), false); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 0 {
			size = dirSize(b, dir)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	size = dirSize(b, dir)
	key := readKey(b, dir)
	for _, k := range []struct {
		name string
		key  []byte
	}{{"chain", nil}, {"chain+seals", key}} {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(size)
			cpu0 := cpuTime(b)
			for i := 0; i < b.N; i++ {
				rep, err := Verify(dir, k.key)
				if err != nil || !rep.Whole {
					b.Fatalf("verify: %v %v", err, rep.Problem)
				}
			}
			// Throughput per CPU-second: what one core does, whatever else runs on the machine.
			b.ReportMetric(float64(size)*float64(b.N)/1e6/(cpuTime(b)-cpu0).Seconds(), "MB/cpu-s")
		})
	}
}

func dirSize(b *testing.B, dir string) int64 {
	var n int64
	for _, p := range logFiles(b, dir) {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
