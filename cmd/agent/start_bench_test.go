package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkStart starts a fresh `s-code version`, an empty Go program (built here with the
// same toolchain: `func main() {}`) and `bash -c true`, alternately, b.N times each, and
// reports the p50 of each and the ratio of s-code's to the empty program's (the issue's
// goal: at most 1.5). It measures the client's own start: runtime, package initialisation,
// the command tree; no helper is involved.
func BenchmarkStart(b *testing.B) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("go tool not found: %v", err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash not found")
	}
	dir := b.TempDir()
	sc, empty := filepath.Join(dir, "s-code"), filepath.Join(dir, "empty")
	scBuild := exec.Command(goTool, "build", "-o", sc, ".")
	scBuild.Env = buildEnv("s-code")
	if out, err := scBuild.CombinedOutput(); err != nil {
		b.Fatalf("go build s-code: %v\n%s", err, out)
	}
	src := filepath.Join(dir, "emptysrc")
	if err := os.MkdirAll(src, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module empty\n\ngo 1.22\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	build := exec.Command(goTool, "build", "-o", empty, ".")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build the empty program: %v\n%s", err, out)
	}
	run := func(name string, args ...string) time.Duration {
		t := time.Now()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return time.Since(t)
	}
	run(sc, "version") // warm the page cache
	run(empty)
	var scD, emptyD, bashD []time.Duration
	b.ResetTimer()
	for range b.N {
		scD = append(scD, run(sc, "version"))
		emptyD = append(emptyD, run(empty))
		bashD = append(bashD, run(bash, "-c", "true"))
	}
	b.StopTimer()
	s, e := percentile(scD, 0.5), percentile(emptyD, 0.5)
	b.ReportMetric(ms(s), "version-p50-ms")
	b.ReportMetric(ms(e), "empty-go-p50-ms")
	b.ReportMetric(ms(percentile(bashD, 0.5)), "bash-p50-ms")
	b.ReportMetric(float64(s)/float64(e), "version/empty-ratio")
	b.ReportMetric(0, "ns/op")
}
