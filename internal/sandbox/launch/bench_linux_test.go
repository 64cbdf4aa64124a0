package launch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// BenchmarkTrue runs `true` directly and through the real s-code-sandbox binary (built with
// go build) under both protections of the workspace (mount-namespace, the default where the
// kernel allows it, and landlock-entries) in the same run, alternating, and reports the p50
// of each and the p50 each protection adds (goal: at most 5 ms), and the mount-namespace
// protection without the PID namespace (the launcher execs the command instead of staying
// its init), for what the PID namespace costs. Run as root, the launcher
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
	noPIDNS := mountNS
	noPIDNS.PIDNamespace = false
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
	var direct, withMounts, withEntries, withHidden, withoutPIDNS []time.Duration
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
		withoutPIDNS = append(withoutPIDNS, run(noPIDNS))
		withHidden = append(withHidden, run(hidden))
	}
	b.StopTimer()
	d, m, e, n := p50(direct), p50(withMounts), p50(withEntries), p50(withoutPIDNS)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(d), "direct-p50-ms")
	b.ReportMetric(ms(m), "sandboxed-p50-ms")
	b.ReportMetric(ms(m-d), "added-p50-ms")
	b.ReportMetric(ms(e), "entries-sandboxed-p50-ms")
	b.ReportMetric(ms(e-d), "entries-added-p50-ms")
	b.ReportMetric(ms(n-d), "no-pidns-added-p50-ms")
	b.ReportMetric(ms(p50(withHidden)-d), "hidden-added-p50-ms")
}

// BenchmarkPostRunCheck measures the post-run check of a workspace with a repository, a
// nested one and 10 000 files in 500 directories: the mark taken before the command
// (sandbox.Since, which waits for the next tick of the file system clock) and the walk
// after it (sandbox.QuarantineGit), reported as p50s.
func BenchmarkPostRunCheck(b *testing.B) {
	f := newFixture(b, false)
	for i := range 500 {
		dir := filepath.Join(f.ws, "src", "d"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 20 {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(j)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	write(b, filepath.Join(f.ws, "vendor", "lib", ".git", "HEAD"), "ref: refs/heads/main\n")
	write(b, filepath.Join(f.ws, "vendor", "lib", ".git", "config"), "[core]\n")
	if err := sandbox.Prepare(f.profile); err != nil {
		b.Fatal(err)
	}
	var marks, walks []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		since, err := sandbox.Since(f.profile.CacheNamespace)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if q, err := sandbox.QuarantineGit(f.ws, since, "b"); err != nil || len(q) > 0 {
			b.Fatalf("quarantined %v: %v", q, err)
		}
		marks, walks = append(marks, t1.Sub(t0)), append(walks, time.Since(t1))
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(p50(marks)), "mark-p50-ms")
	b.ReportMetric(ms(p50(walks)), "check-p50-ms")
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
