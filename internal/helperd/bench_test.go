package helperd_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// BenchmarkExec runs `true` through an in-process helper from 32 concurrent clients (with an
// in-memory auditor: see cmd/agent's BenchmarkRunThroughput for the real audit log and a
// separate helper process).
func BenchmarkExec(b *testing.B) {
	e := newEnv(b, nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				r := e.exec(context.Background(), &helperv1.ExecStart{Command: "true", Approved: true}, nil)
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
