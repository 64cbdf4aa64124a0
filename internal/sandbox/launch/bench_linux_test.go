package launch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// BenchmarkTrue runs `true` directly and through the real s-code-sandbox binary (built with
// go build) under both protections of the workspace (mount-namespace, the default where the
// kernel allows it, and landlock-entries) in the same run, alternating, and reports the p50
// of each and the p50 each protection adds (goal: at most 5 ms). Run as root, the launcher
// unshares its mount namespace itself; run as an ordinary user, sandbox.Command starts it in
// a new user namespace.
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
	mountNS, entries := f.profile, f.profile
	mountNS.Protection = sandbox.ProtectionMountNamespace
	entries.Protection = sandbox.ProtectionLandlockEntries
	// As in the user helper: the runtime directory, S-Code's state and configuration
	// directories and the helper's audit directory hidden (four mounts, four Landlock holes).
	hidden := mountNS
	hidden.HiddenPaths = nil
	for _, name := range []string{"run", "state", "config", "audit"} {
		d := filepath.Join(b.TempDir(), name)
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
		hidden.HiddenPaths = append(hidden.HiddenPaths, d)
	}
	hidden.DeniedPaths = append(slices.Clone(hidden.DeniedPaths), hidden.HiddenPaths...)
	var direct, withMounts, withEntries, withHidden []time.Duration
	run := func(p sandbox.Profile) time.Duration {
		t0 := time.Now()
		cmd, err := sandbox.Command(context.Background(), launcher, p, []string{truePath}, env)
		if err != nil {
			b.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			b.Fatalf("%v: %s", err, out) // output would be the launcher's fallback notice
		}
		return time.Since(t0)
	}
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command(truePath).Run(); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, time.Since(t0))
		withMounts = append(withMounts, run(mountNS))
		withEntries = append(withEntries, run(entries))
		withHidden = append(withHidden, run(hidden))
	}
	b.StopTimer()
	d, m, e := p50(direct), p50(withMounts), p50(withEntries)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(d), "direct-p50-ms")
	b.ReportMetric(ms(m), "sandboxed-p50-ms")
	b.ReportMetric(ms(m-d), "added-p50-ms")
	b.ReportMetric(ms(e), "entries-sandboxed-p50-ms")
	b.ReportMetric(ms(e-d), "entries-added-p50-ms")
	b.ReportMetric(ms(p50(withHidden)-d), "hidden-added-p50-ms")
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
