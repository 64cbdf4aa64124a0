package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/helperclient"
)

// BenchmarkCodeModeReads reads the same 50 files of a workspace through one real `s-code mcp`
// process over stdio (the Go SDK client), alternately as 50 separate read_file calls and as one
// code_mode call whose program makes the 50 reads, b.N times each; it reports the p50 wall
// time of both and their ratio. Each code_mode call includes its durable audit record in a
// real user helper. code_mode is sent by default through the configuration (code_mode = true),
// which this also exercises.
func BenchmarkCodeModeReads(b *testing.B) {
	sc, sock, _ := benchHelper(b)
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	cfg := filepath.Join(dir, "config")
	os.MkdirAll(filepath.Join(cfg, "s-code"), 0o755)
	os.WriteFile(filepath.Join(cfg, "s-code", "config.toml"), []byte("code_mode = true\n"), 0o644)
	var paths []string
	for i := range 50 {
		p := fmt.Sprintf("src/file%02d.go", i)
		os.MkdirAll(filepath.Join(ws, "src"), 0o755)
		os.WriteFile(filepath.Join(ws, p), []byte(strings.Repeat(fmt.Sprintf("// line of file %d\n", i), 40)), 0o644)
		paths = append(paths, p)
	}
	cmd := exec.Command(sc, "mcp", "--workspace", ws, "--mode", "accept-edits")
	cmd.Env = append(os.Environ(), helperclient.UserSocketEnv+"="+sock, "XDG_CONFIG_HOME="+cfg, "XDG_STATE_HOME="+b.TempDir())
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", name, err, res)
		}
		return res
	}
	separate := func() time.Duration {
		t := time.Now()
		for _, p := range paths {
			call("read_file", map[string]any{"path": p})
		}
		return time.Since(t)
	}
	list, _ := json.Marshal(paths)
	code := "return " + string(list) + ".map(p => tools.read_file({path: p}).revision)"
	batched := func() time.Duration {
		t := time.Now()
		res := call("code_mode", map[string]any{"code": code})
		d := time.Since(t)
		var out struct {
			Value []string `json:"value"`
			Calls []any    `json:"calls"`
			Audit struct {
				RequestID string `json:"request_id"`
				Error     string `json:"error"`
			} `json:"audit"`
		}
		json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
		if len(out.Value) != 50 || len(out.Calls) != 50 || out.Audit.RequestID == "" {
			b.Fatalf("code_mode: %d values, %d calls, audit %+v", len(out.Value), len(out.Calls), out.Audit)
		}
		return d
	}
	separate() // warm the page cache and the server
	batched()
	sepD := make([]time.Duration, 0, b.N)
	batD := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		sepD = append(sepD, separate())
		batD = append(batD, batched())
	}
	b.StopTimer()
	sp50, bp50 := percentile(sepD, 0.5), percentile(batD, 0.5)
	b.ReportMetric(ms(sp50), "50-read_file-p50-ms")
	b.ReportMetric(ms(bp50), "1-code_mode-p50-ms")
	b.ReportMetric(float64(sp50)/float64(bp50), "speedup")
	b.ReportMetric(0, "ns/op")
}
