package launch

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// BenchmarkTrue runs `true` directly and through the real s-code-sandbox binary (built with
// go build) in the same run, alternating, and reports the p50 of each and the p50 added by
// the sandbox (goal: at most 5 ms).
func BenchmarkTrue(b *testing.B) {
	requireLandlock(b)
	gobin := testenv.RequireTool(b, "go")
	truePath := testenv.RequireTool(b, "true")
	launcher := filepath.Join(b.TempDir(), sandbox.LauncherName)
	build := exec.Command(gobin, "build", "-o", launcher, "github.com/s-code-dev/s-code/cmd/sandbox")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	f := newFixture(b, false)
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + f.home}
	var direct, sandboxed []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command(truePath).Run(); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, time.Since(t0))
		t0 = time.Now()
		cmd, err := sandbox.Command(context.Background(), launcher, f.profile, []string{truePath}, env)
		if err != nil {
			b.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		sandboxed = append(sandboxed, time.Since(t0))
	}
	b.StopTimer()
	d, s := p50(direct), p50(sandboxed)
	b.ReportMetric(float64(d.Microseconds())/1000, "direct-p50-ms")
	b.ReportMetric(float64(s.Microseconds())/1000, "sandboxed-p50-ms")
	b.ReportMetric(float64((s-d).Microseconds())/1000, "added-p50-ms")
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
