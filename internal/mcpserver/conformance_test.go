package mcpserver

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/internal/tools"
)

// conformanceScenarios are the scenarios of the official MCP conformance suite that apply
// to S-Code's server. The others test features it does not have (resources, prompts,
// completion, logging, sampling, SSE polling) or the suite's own test tools
// (tools-call-*, elicitation-sep*, json-schema-2020-12 call tools named test_*).
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "dns-rebinding-protection"}

// TestConformance serves the MCP server over streamable HTTP on 127.0.0.1 (a test harness:
// s-code mcp itself only speaks stdio) and runs the official conformance suite
// (@modelcontextprotocol/conformance, with the Node 22 it needs, both pinned in test/mcp
// and installed there by scripts/ci-deps.sh with npm ci; $S_CODE_MCP_CONFORMANCE names
// another directory) against it. Without them it skips, except under S_CODE_REQUIRE_ROOT=1.
func TestConformance(t *testing.T) {
	dir := os.Getenv("S_CODE_MCP_CONFORMANCE")
	if dir == "" {
		dir = "../../test/mcp"
	}
	node := filepath.Join(dir, "node_modules", ".bin", "node")
	suite := filepath.Join(dir, "node_modules", ".bin", "conformance")
	for _, p := range []string{node, suite} {
		if _, err := os.Stat(p); err != nil {
			testenv.Skip(t, fmt.Sprintf("the MCP conformance suite is not installed (cd test/mcp && npm ci): %v", err))
		}
	}
	srv, err := New(Options{Workspace: t.TempDir(), Mode: permission.AcceptEdits, EditFormat: tools.EditLines, Executor: &recordingExec{}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP() }, nil)}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/mcp"
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			cmd := exec.Command(node, suite, "server", "--url", url, "--scenario", sc)
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+":"+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			if err != nil {
				t.Fatalf("conformance %s: %v", sc, err)
			}
		})
	}
}
