package helperd_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/helperd"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// benchEnv is a helper with the plain runner (no sandbox) and a real audit log (every start
// record fsync'd): the cost of dispatch alone.
func benchEnv(b *testing.B) *env {
	dir := b.TempDir()
	log, err := audit.Open(filepath.Join(dir, "audit"), audit.Options{DisableJournal: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	e := newEnv(b, func(c *helperd.Config) {
		c.Auditor = log
		// Dispatch's own speed, past the per-uid rate limit (DefaultCallRate) that a helper
		// applies to its owner too: the limit is a policy, not what dispatch costs.
		c.Limits.CallRate, c.Limits.CallBurst = 1e6, 1e6
	})
	return e
}

// BenchmarkExecLatency runs `true` through one connection to an in-process helper, next to
// `bash -c true` started directly, and reports both p50s and the p50 the helper adds.
func BenchmarkExecLatency(b *testing.B) {
	e := benchEnv(b)
	via := make([]time.Duration, 0, b.N)
	direct := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		if r := e.exec(context.Background(), &helperv1.ExecStart{Command: "true", Approval: approve()}, nil); r.status() != 0 {
			b.Fatalf("status %d: %v %v", r.status(), r.err, r.denied)
		}
		via = append(via, time.Since(t))
		t = time.Now()
		if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, time.Since(t))
	}
	b.StopTimer()
	p50 := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(p50(via)), "helper-p50-ms")
	b.ReportMetric(ms(p50(direct)), "bash-p50-ms")
	b.ReportMetric(ms(p50(via)-p50(direct)), "added-p50-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkExec runs `true` through an in-process helper from 32 concurrent clients with a
// real audit log and reports commands per second.
func BenchmarkExec(b *testing.B) {
	e := benchEnv(b)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				r := e.exec(context.Background(), &helperv1.ExecStart{Command: "true", Approval: approve()}, nil)
				if r.status() != 0 {
					b.Errorf("status %d: %v %v", r.status(), r.err, r.denied)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
}
