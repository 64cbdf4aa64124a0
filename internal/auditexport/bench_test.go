package auditexport

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/s-code-dev/s-code/audit"
)

// BenchmarkAppend measures what the export adds to an audit append (not durable, so that
// the fsync does not hide it): none, an endpoint that takes everything, and a dead one whose
// queue is full (every record counted as dropped).
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name   string
		export string // "", "live" or "dead"
	}{{"no-export", ""}, {"live-endpoint", "live"}, {"dead-endpoint", "dead"}} {
		b.Run(bc.name, func(b *testing.B) {
			opts := audit.Options{DisableJournal: true, SealAfter: -1}
			if bc.export != "" {
				srv := startServer(&testing.T{}, false)
				if bc.export == "dead" {
					srv.down.Store(true)
				}
				cfg := Config{Endpoint: srv.addr, Protocol: ProtocolHTTP, Insecure: true, Queue: 1000}
				if err := cfg.check(); err != nil {
					b.Fatal(err)
				}
				e, err := New(cfg, Settings{Service: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				e.Start()
				defer func() {
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					e.Shutdown(ctx)
					st := e.Stats()
					b.ReportMetric(float64(st.Dropped)/float64(b.N), "dropped/op")
				}()
				opts.Observer = e
			}
			l, err := audit.Open(filepath.Join(b.TempDir(), "audit"), opts)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			code := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := l.Append(context.Background(), &audit.Record{Kind: audit.KindExit, Command: "go test ./...", ExitCode: &code,
					Peer: &audit.Peer{UID: 1000, GID: 1000, PID: 42}}, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
