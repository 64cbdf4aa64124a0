package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The OpenTelemetry Collector of the audit export's scripts: built from the separate module
// test/otelcol (the collector's own OTLP receiver and file exporter, pinned there) into
// bin/s-code-test-otelcol. The first build costs about 140 s of CPU (12 minutes on this
// 2-core machine shared by eight sessions); after it, Go's build cache makes `go build`
// take about a second, so every run asks go to build and go decides.
var (
	otelcolOnce sync.Once
	otelcolPath string
	otelcolErr  error
)

// otelcolBinary returns the collector's path, building it on first use.
func otelcolBinary() (string, error) {
	otelcolOnce.Do(func() {
		src, err := filepath.Abs("../../test/otelcol")
		if err != nil {
			otelcolErr = err
			return
		}
		bin, err := filepath.Abs("../../bin/s-code-test-otelcol")
		if err != nil {
			otelcolErr = err
			return
		}
		start := time.Now()
		cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			otelcolErr = fmt.Errorf("build the test collector (test/otelcol): %v\n%s", err, out)
			return
		}
		if d := time.Since(start); d > 10*time.Second {
			fmt.Fprintf(os.Stderr, "built the test collector bin/s-code-test-otelcol in %s\n", d.Round(time.Second))
		}
		otelcolPath = bin
	})
	return otelcolPath, otelcolErr
}

// TestOtelcolModuleSeparate checks that the collector is not a dependency of S-Code's own
// module: it is built only from test/otelcol's go.mod.
func TestOtelcolModuleSeparate(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("go.opentelemetry.io/collector")) || bytes.Contains(b, []byte("opentelemetry-collector-contrib")) {
		t.Fatal("S-Code's go.mod requires a collector module; the collector belongs to test/otelcol only")
	}
	if b, err = os.ReadFile("../../test/otelcol/go.mod"); err != nil || !bytes.Contains(b, []byte("module github.com/s-code-dev/s-code/test/otelcol")) {
		t.Fatalf("test/otelcol/go.mod is not its own module: %v", err)
	}
}

// collector is one collector a script started (or only reserved ports for).
type collector struct {
	grpc, http string // 127.0.0.1:PORT
	out        string // the file exporter's output
	cmd        *exec.Cmd
}

var (
	collectorsMu sync.Mutex // guards collectors
	collectors   = map[string]*collector{}
)

func collectorKey(ts *testscript.TestScript, name string) string {
	return ts.Getenv("WORK") + "\x00" + name
}

// freePort returns a 127.0.0.1 address no one listened on a moment ago.
func freePort(ts *testscript.TestScript) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	defer l.Close()
	return l.Addr().String()
}

// cmdOtelcol drives test collectors:
//
//	otelcol reserve NAME   pick its ports and write its export configurations, start nothing
//	otelcol start NAME     start it (on the reserved ports, if any) and wait until it listens
//	otelcol stop NAME      stop it (SIGTERM, then wait)
//
// It sets $NAME_GRPC and $NAME_HTTP (127.0.0.1:PORT) and $NAME_OUT (the file exporter's
// output), and writes $WORK/NAME-grpc.toml and $WORK/NAME-http.toml, export configurations
// (mode 0600) for that collector with a queue of $NAME_QUEUE records when set.
func cmdOtelcol(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: otelcol reserve|start|stop NAME")
	}
	verb, name := args[0], args[1]
	key := collectorKey(ts, name)
	collectorsMu.Lock()
	c := collectors[key]
	collectorsMu.Unlock()
	switch verb {
	case "reserve", "start":
		if c == nil {
			c = &collector{grpc: freePort(ts), http: freePort(ts), out: ts.MkAbs(name + "-out.jsonl")}
			collectorsMu.Lock()
			collectors[key] = c
			collectorsMu.Unlock()
			ts.Defer(func() {
				collectorsMu.Lock()
				delete(collectors, key)
				collectorsMu.Unlock()
				c.kill()
			})
			up := strings.ToUpper(name)
			ts.Setenv(up+"_GRPC", c.grpc)
			ts.Setenv(up+"_HTTP", c.http)
			ts.Setenv(up+"_OUT", c.out)
			queue := ""
			if q := ts.Getenv(up + "_QUEUE"); q != "" {
				queue = "queue = " + q + "\n"
			}
			for proto, ep := range map[string]string{"grpc": c.grpc, "http": c.http} {
				conf := fmt.Sprintf("endpoint = %q\nprotocol = %q\ninsecure = true\ntimeout = \"2s\"\n%s", ep, proto, queue)
				ts.Check(os.WriteFile(ts.MkAbs(name+"-"+proto+".toml"), []byte(conf), 0o600))
			}
		}
		if verb == "reserve" {
			return
		}
		if c.cmd != nil {
			ts.Fatalf("collector %s is already running", name)
		}
		bin, err := otelcolBinary()
		ts.Check(err)
		conf := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
      http:
        endpoint: %s
exporters:
  file:
    path: %s
    flush_interval: 50ms
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [file]
`, c.grpc, c.http, c.out)
		confPath := ts.MkAbs(name + "-otelcol.yaml")
		ts.Check(os.WriteFile(confPath, []byte(conf), 0o600))
		logf, err := os.Create(ts.MkAbs(name + "-otelcol.log"))
		ts.Check(err)
		cmd := exec.Command(bin, "--config", confPath)
		cmd.Stdout, cmd.Stderr = logf, logf
		ts.Check(cmd.Start())
		logf.Close()
		c.cmd = cmd
		for _, addr := range []string{c.grpc, c.http} {
			deadline := time.Now().Add(30 * time.Second)
			for {
				conn, err := net.Dial("tcp", addr)
				if err == nil {
					conn.Close()
					break
				}
				if time.Now().After(deadline) {
					log, _ := os.ReadFile(ts.MkAbs(name + "-otelcol.log"))
					ts.Fatalf("collector %s does not listen on %s after 30s: %v\n%s", name, addr, err, log)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	case "stop":
		if c == nil || c.cmd == nil {
			ts.Fatalf("collector %s is not running", name)
		}
		c.kill()
	default:
		ts.Fatalf("usage: otelcol reserve|start|stop NAME")
	}
}

func (c *collector) kill() {
	if c.cmd == nil {
		return
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
	c.cmd = nil
}

// exported is one log record as the file exporter wrote it (OTLP JSON).
type exported struct {
	event   string
	body    string
	seq     int64
	hash    string
	sealIdx int64
	gap     [3]int64 // first, last, count of a gap record
	service string
}

// readExported returns the log records in the file exporter's output, in file order.
func readExported(path string) ([]exported, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	type anyValue struct {
		StringValue *string `json:"stringValue"`
		IntValue    *string `json:"intValue"`
	}
	type kv struct {
		Key   string   `json:"key"`
		Value anyValue `json:"value"`
	}
	var out []exported
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var req struct {
			ResourceLogs []struct {
				Resource struct {
					Attributes []kv `json:"attributes"`
				} `json:"resource"`
				ScopeLogs []struct {
					LogRecords []struct {
						EventName  string   `json:"eventName"`
						Body       anyValue `json:"body"`
						Attributes []kv     `json:"attributes"`
					} `json:"logRecords"`
				} `json:"scopeLogs"`
			} `json:"resourceLogs"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, rl := range req.ResourceLogs {
			service := ""
			for _, a := range rl.Resource.Attributes {
				if a.Key == "service.name" && a.Value.StringValue != nil {
					service = *a.Value.StringValue
				}
			}
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					e := exported{event: lr.EventName, service: service}
					if lr.Body.StringValue != nil {
						e.body = *lr.Body.StringValue
					}
					for _, a := range lr.Attributes {
						n := int64(-1)
						if a.Value.IntValue != nil {
							n, _ = strconv.ParseInt(*a.Value.IntValue, 10, 64)
						}
						switch a.Key {
						case "scode.audit.seq":
							e.seq = n
						case "scode.audit.hash":
							if a.Value.StringValue != nil {
								e.hash = *a.Value.StringValue
							}
						case "scode.audit.seal_index":
							e.sealIdx = n
						case "scode.audit.gap.first_seq":
							e.gap[0] = n
						case "scode.audit.gap.last_seq":
							e.gap[1] = n
						case "scode.audit.gap.count":
							e.gap[2] = n
						}
					}
					out = append(out, e)
				}
			}
		}
	}
	return out, sc.Err()
}

// localLines returns the record lines of the audit log in dir, in chain order.
func localLines(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "audit-*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for l := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// cmdOtelcheck checks a collector's output against an audit log:
//
//	otelcheck [-gaps] NAME AUDITDIR
//
// Within 30 seconds, every record of the log must have arrived, in chain order, each once,
// its body the record's line byte for byte and its seq and hash attributes the record's
// own, and every record's covering seal index one more than the last seal's before it. With
// -gaps, runs of records may instead be covered by gap records naming exactly those seqs
// (and there must be at least one); without it there must be none. It prints a summary.
func cmdOtelcheck(ts *testscript.TestScript, neg bool, args []string) {
	gaps := len(args) > 0 && args[0] == "-gaps"
	if gaps {
		args = args[1:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: otelcheck [-gaps] NAME AUDITDIR")
	}
	collectorsMu.Lock()
	c := collectors[collectorKey(ts, args[0])]
	collectorsMu.Unlock()
	if c == nil {
		ts.Fatalf("no collector %s", args[0])
	}
	dir := ts.MkAbs(args[1])
	var problem error
	deadline := time.Now().Add(30 * time.Second)
	for {
		problem = compareExport(c.out, dir, gaps, ts)
		if problem == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if problem != nil {
		ts.Fatalf("%v", problem)
	}
}

func compareExport(out, dir string, gaps bool, ts *testscript.TestScript) error {
	lines, err := localLines(dir)
	if err != nil {
		return err
	}
	got, err := readExported(out)
	if err != nil {
		return err
	}
	var sealIdx int64 // the index of the seal that covers the next record
	next := 0         // index in lines of the next record expected
	nRecords, nGaps := 0, 0
	for i, e := range got {
		switch e.event {
		case "s-code.audit.record":
			if next >= len(lines) {
				return fmt.Errorf("exported record %d (seq %d) is beyond the local log's %d records", i, e.seq, len(lines))
			}
			var r struct {
				Seq       int64  `json:"seq"`
				Kind      string `json:"kind"`
				Hash      string `json:"hash"`
				SealIndex *int64 `json:"seal_index"`
			}
			if err := json.Unmarshal([]byte(lines[next]), &r); err != nil {
				return err
			}
			if e.body != lines[next] {
				return fmt.Errorf("exported record %d: body %q is not the local record seq %d %q", i, e.body, r.Seq, lines[next])
			}
			if e.seq != r.Seq || e.hash != r.Hash {
				return fmt.Errorf("exported record %d: seq %d hash %s, the local record has seq %d hash %s", i, e.seq, e.hash, r.Seq, r.Hash)
			}
			if r.SealIndex != nil {
				sealIdx = *r.SealIndex
			}
			if e.sealIdx != sealIdx {
				return fmt.Errorf("exported record seq %d: seal index %d, want %d", e.seq, e.sealIdx, sealIdx)
			}
			if r.Kind == "seal" {
				sealIdx++
			}
			if e.service != "s-code-userhelper" {
				return fmt.Errorf("exported record seq %d: service.name %q", e.seq, e.service)
			}
			next++
			nRecords++
		case "s-code.audit.gap":
			if !gaps {
				return fmt.Errorf("a gap record (seq %d to %d) where none may be", e.gap[0], e.gap[1])
			}
			if next >= len(lines) {
				return fmt.Errorf("gap record beyond the local log")
			}
			var r struct {
				Seq       int64  `json:"seq"`
				Kind      string `json:"kind"`
				SealIndex *int64 `json:"seal_index"`
			}
			json.Unmarshal([]byte(lines[next]), &r)
			if e.gap[0] != r.Seq || e.gap[2] != e.gap[1]-e.gap[0]+1 {
				return fmt.Errorf("gap record %v does not start at the next missing seq %d", e.gap, r.Seq)
			}
			// Skip the dropped records, keeping track of the seals among them.
			for ; next < len(lines); next++ {
				json.Unmarshal([]byte(lines[next]), &r)
				if r.Seq > e.gap[1] {
					break
				}
				if r.Kind == "seal" {
					sealIdx = *r.SealIndex + 1
				}
			}
			nGaps++
		default:
			return fmt.Errorf("exported record %d has event name %q", i, e.event)
		}
	}
	if next != len(lines) {
		return fmt.Errorf("%d of %d local records arrived so far (next missing: %.120s)", next, len(lines), lines[next])
	}
	if gaps && nGaps == 0 {
		return fmt.Errorf("no gap record arrived")
	}
	ts.Logf("otelcheck: %d records arrived in order with their hashes; %d gap records", nRecords, nGaps)
	fmt.Fprintf(ts.Stdout(), "%d records, %d gaps\n", nRecords, nGaps)
	return nil
}

// cmdOtelwait waits up to 30 seconds until a collector's output holds at least N audit
// records: `otelwait NAME N`.
func cmdOtelwait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: otelwait NAME N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	collectorsMu.Lock()
	c := collectors[collectorKey(ts, args[0])]
	collectorsMu.Unlock()
	if c == nil {
		ts.Fatalf("no collector %s", args[0])
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := readExported(c.out)
		count := 0
		for _, e := range got {
			if e.event == "s-code.audit.record" {
				count++
			}
		}
		if err == nil && count >= n {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("collector %s has %d audit records after 30s, want %d (%v)", args[0], count, n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
