package hostproc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/hostdef"
)

// BenchmarkTerminalStartStop: start a terminal running cat in its own session and cgroup,
// write a line, read it back, stop it with every member gone; with the start, stop and exit
// audit records written durably.
func BenchmarkTerminalStartStop(b *testing.B) {
	log, err := audit.Open(b.TempDir()+"/audit", audit.Options{DisableJournal: true})
	if err != nil {
		b.Fatal(err)
	}
	defer log.Close()
	home := b.TempDir()
	s := New(Config{Home: home, Audit: func(r *audit.Record) error { return log.Append(context.Background(), r, true) }, KillGrace: time.Second})
	defer s.Close(context.Background())
	d := &hostdef.Definition{Name: "bench", Kind: hostdef.KindTerminal, Command: "/bin/cat"}
	if err := hostdef.Confirm(d, home, nil, &strings.Builder{}, true, time.Now()); err != nil {
		b.Fatal(err)
	}
	var startT, echoT, stopT time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		in, err := s.Start(d, StartOptions{Terminal: true})
		t1 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Write(in.ID, []byte("ping\n")); err != nil {
			b.Fatal(err)
		}
		var got strings.Builder
		for !strings.Contains(got.String(), "ping\r\nping") {
			r, _ := s.Read(in.ID, 0)
			got.Write(r.Data)
			time.Sleep(time.Millisecond)
		}
		t2 := time.Now()
		if _, err := s.Stop(context.Background(), in.ID, "bench", nil); err != nil {
			b.Fatal(err)
		}
		startT, echoT, stopT = startT+t1.Sub(t0), echoT+t2.Sub(t1), stopT+time.Since(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(startT.Microseconds())/n, "start-µs/op")
	b.ReportMetric(float64(echoT.Microseconds())/n, "echo-µs/op")
	b.ReportMetric(float64(stopT.Microseconds())/n, "stop-µs/op")
}
