package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/helperclient"
)

// BenchmarkMCPExecLatency calls exec_command of `true` through a real `s-code mcp` process
// (stdio, the Go SDK client, one long-lived helper connection) and runs `bash -c true`
// directly, alternately, b.N times each; it reports both p50s and the added p50.
func BenchmarkMCPExecLatency(b *testing.B) {
	sc, sock, _ := benchHelper(b)
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash not found")
	}
	ws := b.TempDir()
	cmd := exec.Command(sc, "mcp", "--workspace", ws, "--mode", "accept-edits")
	cmd.Env = append(os.Environ(), helperclient.UserSocketEnv+"="+sock, "XDG_STATE_HOME="+b.TempDir())
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	call := func() time.Duration {
		t := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "exec_command", Arguments: map[string]any{"command": "true"}})
		d := time.Since(t)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Ran        bool `json:"ran"`
			ExitStatus int  `json:"exit_status"`
		}
		json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out)
		if !out.Ran || out.ExitStatus != 0 {
			b.Fatalf("exec_command true: %v", res.Content[0].(*mcp.TextContent).Text)
		}
		return d
	}
	direct := func() time.Duration {
		t := time.Now()
		if err := exec.Command(bash, "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t)
	}
	call() // the first call dials the helper
	mcpD := make([]time.Duration, 0, b.N)
	directD := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		mcpD = append(mcpD, call())
		directD = append(directD, direct())
	}
	b.StopTimer()
	mp50, dp50 := percentile(mcpD, 0.5), percentile(directD, 0.5)
	b.ReportMetric(ms(mp50), "mcp-p50-ms")
	b.ReportMetric(ms(percentile(mcpD, 0.99)), "mcp-p99-ms")
	b.ReportMetric(ms(dp50), "bash-p50-ms")
	b.ReportMetric(ms(mp50-dp50), "added-p50-ms")
	b.ReportMetric(0, "ns/op")
}
