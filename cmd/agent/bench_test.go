package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// benchHelper builds s-code, s-code-userhelper and s-code-sandbox (every command of the user
// helper runs through the sandbox launcher), starts the helper on a socket in a temporary
// directory (with its audit log there: every start record is fsync'd), and returns the s-code
// binary, the socket and the helper's pid.
func benchHelper(b *testing.B) (sc, sock string, pid int) {
	b.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("go tool not found: %v", err)
	}
	dir := b.TempDir()
	for name, pkg := range map[string]string{"s-code": ".", "s-code-userhelper": "../userhelper", "s-code-sandbox": "../sandbox"} {
		build := exec.Command(goTool, "build", "-o", filepath.Join(dir, name), pkg)
		build.Env = buildEnv(name)
		out, err := build.CombinedOutput()
		if err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	sock = filepath.Join(dir, "run", "user.sock")
	helper := exec.Command(filepath.Join(dir, "s-code-userhelper"), "--listen", sock, "--audit-dir", filepath.Join(dir, "audit"), "--log-level", "warn")
	helper.Env = append(os.Environ(), "S_CODE_TOOL_CACHE_DIR="+filepath.Join(dir, "cache"))
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		helper.Process.Signal(os.Interrupt)
		helper.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		// The socket file appears at bind(2), before listen(2): wait for a connection.
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the helper did not create its socket")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return filepath.Join(dir, "s-code"), sock, helper.Process.Pid
}

// buildEnv returns the environment that builds the binary name as `make build` does: the
// client and the launcher without cgo (the Makefile's STATIC_CMDS).
func buildEnv(name string) []string {
	if name == "s-code" || name == "s-code-sandbox" {
		return append(os.Environ(), "CGO_ENABLED=0")
	}
	return os.Environ()
}

// rssMiB returns a /proc/PID/status field (VmRSS, VmHWM) in MiB.
func rssMiB(b *testing.B, pid int, field string) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkRunLatency runs `s-code run --yes -- true` through a user helper and
// `bash -c true` directly, alternately, b.N times each, and reports the p50 and p99 of both,
// the added p50 and the overhead ratio.
func BenchmarkRunLatency(b *testing.B) {
	sc, sock, pid := benchHelper(b)
	env := append(os.Environ(), helperclient.UserSocketEnv+"="+sock)
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash not found")
	}
	run := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		t := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
		}
		return time.Since(t)
	}
	run(sc, "run", "--yes", "--", "true") // warm the page cache and the helper
	idle := rssMiB(b, pid, "VmRSS")
	helperD := make([]time.Duration, 0, b.N)
	directD := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		helperD = append(helperD, run(sc, "run", "--yes", "--", "true"))
		directD = append(directD, run(bash, "-c", "true"))
	}
	b.StopTimer()
	hp50, dp50 := percentile(helperD, 0.5), percentile(directD, 0.5)
	b.ReportMetric(ms(hp50), "helper-p50-ms")
	b.ReportMetric(ms(percentile(helperD, 0.99)), "helper-p99-ms")
	b.ReportMetric(ms(dp50), "bash-p50-ms")
	b.ReportMetric(ms(percentile(directD, 0.99)), "bash-p99-ms")
	b.ReportMetric(ms(hp50-dp50), "added-p50-ms")
	b.ReportMetric(float64(hp50)/float64(dp50), "overhead-ratio")
	b.ReportMetric(idle, "helper-rss-idle-MiB")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkRunThroughput runs b.N `true` commands through one user helper from 32 concurrent
// gRPC clients (each its own connection, as 32 s-code processes would have), every start
// record durable, and reports commands per second and the helper's RSS before and at peak.
func BenchmarkRunThroughput(b *testing.B) {
	benchThroughput(b, false, func(ctx context.Context, sc, sock string, c *helperclient.Client, cwd string) error {
		res, err := c.Exec(ctx, &helperv1.ExecStart{Command: "true", Cwd: cwd, Mode: helperv1.Mode_MODE_MANUAL}, helperclient.Streams{})
		if err != nil {
			return err
		}
		if res.Status() != 0 {
			return fmt.Errorf("status %d (%v)", res.Status(), res.Denied)
		}
		return nil
	})
}

// BenchmarkRunThroughputCLI is BenchmarkRunThroughput with 32 concurrent `s-code run`
// processes instead of in-process clients: the figure a shell script would see.
func BenchmarkRunThroughputCLI(b *testing.B) {
	benchThroughput(b, true, func(ctx context.Context, sc, sock string, _ *helperclient.Client, cwd string) error {
		cmd := exec.CommandContext(ctx, sc, "run", "--yes", "--", "true")
		cmd.Env = append(os.Environ(), helperclient.UserSocketEnv+"="+sock)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
}

func benchThroughput(b *testing.B, cli bool, one func(ctx context.Context, sc, sock string, c *helperclient.Client, cwd string) error) {
	const clients = 32
	sc, sock, pid := benchHelper(b)
	cwd, _ := os.Getwd()
	ctx := context.Background()
	// The gRPC clients' connections; the CLI variant's processes dial their own, and 32
	// idle ones beside them would reach the helper's connection limit (DefaultMaxConnsPerUID).
	conns := make([]*helperclient.Client, clients)
	for i := range conns {
		if cli {
			break
		}
		c, err := helperclient.Dial(ctx, helperclient.User, sock)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	if err := one(ctx, sc, sock, conns[0], cwd); err != nil {
		b.Fatal(err)
	}
	idle := rssMiB(b, pid, "VmRSS")
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	b.ResetTimer()
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := one(ctx, sc, sock, conns[i], cwd); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := firstErr.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cmds/s")
	b.ReportMetric(idle, "helper-rss-idle-MiB")
	b.ReportMetric(rssMiB(b, pid, "VmHWM"), "helper-rss-peak-MiB")
}

// BenchmarkExecLatencyInProcess runs `true` b.N times through one connection to a user helper
// (no s-code process start), next to starting `bash -c true` from this process, and reports
// both p50s: the helper's own share of BenchmarkRunLatency's added time.
func BenchmarkExecLatencyInProcess(b *testing.B) {
	_, sock, _ := benchHelper(b)
	cwd, _ := os.Getwd()
	ctx := context.Background()
	c, err := helperclient.Dial(ctx, helperclient.User, sock)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	viaHelper := make([]time.Duration, 0, b.N)
	direct := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		res, err := c.Exec(ctx, &helperv1.ExecStart{Command: "true", Cwd: cwd, Mode: helperv1.Mode_MODE_MANUAL}, helperclient.Streams{})
		if err != nil || res.Status() != 0 {
			b.Fatalf("exec: %v %v", err, res)
		}
		viaHelper = append(viaHelper, time.Since(t))
		t = time.Now()
		if err := exec.Command("/bin/bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		direct = append(direct, time.Since(t))
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(viaHelper, 0.5)), "helper-p50-ms")
	b.ReportMetric(ms(percentile(direct, 0.5)), "bash-p50-ms")
	b.ReportMetric(ms(percentile(viaHelper, 0.5)-percentile(direct, 0.5)), "added-p50-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkPlanExecLatency runs `true` b.N times through one connection to a user helper in
// two ways, alternately: Exec alone, and Plan followed by Exec (helperclient.Run, as s-code
// run does), and reports both p50s and the p50 that Plan adds (the budget: 1 ms).
func BenchmarkPlanExecLatency(b *testing.B) {
	_, sock, _ := benchHelper(b)
	cwd, _ := os.Getwd()
	ctx := context.Background()
	c, err := helperclient.Dial(ctx, helperclient.User, sock)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	op := helperclient.Operation{Command: "true", Cwd: cwd, Mode: permission.Manual}
	execOnly := make([]time.Duration, 0, b.N)
	planExec := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		res, err := c.Exec(ctx, op.ExecStart(nil), helperclient.Streams{})
		if err != nil || res.Status() != 0 {
			b.Fatalf("exec: %v %v", err, res)
		}
		execOnly = append(execOnly, time.Since(t))
		t = time.Now()
		res, _, err = c.Run(ctx, op, nil, helperclient.Streams{})
		if err != nil || res.Status() != 0 {
			b.Fatalf("plan+exec: %v %v", err, res)
		}
		planExec = append(planExec, time.Since(t))
	}
	b.StopTimer()
	e50, p50 := percentile(execOnly, 0.5), percentile(planExec, 0.5)
	b.ReportMetric(ms(e50), "exec-p50-ms")
	b.ReportMetric(ms(p50), "plan+exec-p50-ms")
	b.ReportMetric(ms(p50-e50), "plan-added-p50-ms")
	b.ReportMetric(0, "ns/op")
}
