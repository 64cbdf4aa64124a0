package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/tools"
	"github.com/s-code-dev/s-code/safety"
)

// recordingExec stands in for the user helper: it records what it was asked to run and
// "runs" nothing, so a test can prove that a command was or was not sent.
type recordingExec struct {
	mu   sync.Mutex
	runs []tools.ExecRequest
}

// Exec asks approve when the client's verdict is ask or network is requested (the real
// helper's plan decides that; cmd/agent's scripts run it), then records the command.
func (r *recordingExec) Exec(ctx context.Context, req tools.ExecRequest, approve tools.ApproveFunc, stdout, _ io.Writer) (*tools.ExecOutcome, error) {
	out := &tools.ExecOutcome{RequestID: "req-1"}
	if req.Verdict.Decision == safety.Ask || req.Network {
		var rules []string
		for _, f := range req.Verdict.Findings {
			rules = append(rules, f.Rule)
		}
		if req.Network {
			rules = append(rules, "network.requested")
		}
		out.Card = &tools.Card{Kind: "exec_command", Title: "Run a command in the workspace", Command: req.Command, Workspace: req.Workspace,
			Cwd: req.Cwd, Network: req.Network, Findings: req.Verdict.Findings, Rules: rules, Digest: req.Command}
		ans, err := approve(ctx, out.Card)
		var pending *tools.ApprovalPending
		if errors.As(err, &pending) {
			return nil, err
		}
		out.Answer, out.AskErr = ans, err
		if err != nil || ans != tools.AnswerAccept {
			out.NotApproved = true
			return out, nil
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, req)
	io.WriteString(stdout, "ran: "+req.Command+"\n")
	return out, nil
}

func (r *recordingExec) commands() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.runs {
		out = append(out, q.Command)
	}
	return out
}

type session struct {
	srv      *Server
	cs       *mcp.ClientSession
	exec     *recordingExec
	changed  chan struct{}
	ws       string
	elicited []string
}

// start connects a Go SDK client to a new server over in-memory transports.
func start(t testing.TB, opts *mcp.ClientOptions, mode permission.Mode) *session {
	t.Helper()
	return startWith(t, opts, Options{Mode: mode})
}

// startWith is start with server options o (Workspace, EditFormat and Executor are filled
// in; Socket names a user helper, as edits go through one).
func startWith(t testing.TB, opts *mcp.ClientOptions, o Options) *session {
	t.Helper()
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644)
	rec := &recordingExec{}
	o.Workspace, o.EditFormat, o.Executor = ws, tools.EditLines, rec
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go srv.Run(ctx, st)
	s := &session{srv: srv, exec: rec, changed: make(chan struct{}, 8), ws: ws}
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { s.changed <- struct{}{} }
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	s.cs = cs
	return s
}

func (s *session) call(t *testing.T, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var m map[string]any
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			json.Unmarshal([]byte(tc.Text), &m)
		}
	}
	if !res.IsError {
		checkOutput(t, s.srv, name, m)
	}
	return res, m
}

// checkOutput validates a structured result against the tool's declared output schema, as
// strict clients (the TypeScript SDK) do.
func checkOutput(t *testing.T, srv *Server, name string, out map[string]any) {
	t.Helper()
	var schema *jsonschema.Schema
	if name == "tool_search" {
		schema, _ = jsonschema.For[ToolSearchResult](nil)
	} else {
		tl, ok := srv.Registry().Lookup(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		schema = objectRoot(tl.OutputSchema())
	}
	r, err := schema.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: resolve output schema: %v", name, err)
	}
	if err := r.Validate(out); err != nil {
		t.Fatalf("%s: result does not match its output schema: %v\n%v", name, err, out)
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	return out
}

func TestToolSearchLoadsDeferredTools(t *testing.T) {
	s := start(t, nil, permission.AcceptEdits)
	if names := strings.Join(toolNames(t, s.cs), " "); strings.Contains(names, "audit_query") || !strings.Contains(names, "tool_search") {
		t.Fatalf("default tools: %s", names)
	}
	// A deferred tool cannot be called before it is loaded.
	if _, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "audit_query"}); err == nil {
		t.Fatal("audit_query called before tool_search loaded it")
	}
	_, m := s.call(t, "tool_search", map[string]any{"query": "search the audit log records by request id"})
	found := m["tools"].([]any)
	if first := found[0].(map[string]any); first["name"] != "audit_query" {
		t.Fatalf("best hit %v, want audit_query", found)
	}
	select {
	case <-s.changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed after tool_search")
	}
	if names := strings.Join(toolNames(t, s.cs), " "); !strings.Contains(names, "audit_query") {
		t.Fatalf("after search: %s", names)
	}
	_, m = s.call(t, "tool_search", map[string]any{"query": "sandbox writable roots"})
	if first := m["tools"].([]any)[0].(map[string]any); first["name"] != "sandbox_profile" {
		t.Fatalf("sandbox query: %v", m)
	}
	res, m := s.call(t, "tool_search", map[string]any{"query": "select:sandbox_profile,nope"})
	if !res.IsError || !strings.Contains(m["message"].(string), "no deferred tool is named nope") {
		t.Fatalf("select of an unknown tool: %v", m)
	}
	_, m = s.call(t, "tool_search", map[string]any{"query": "zebra"})
	if len(m["tools"].([]any)) != 0 {
		t.Fatalf("unrelated query found %v", m)
	}
}

func TestToolsListSchemas(t *testing.T) {
	s := start(t, nil, permission.AcceptEdits)
	res, err := s.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		in, _ := tl.InputSchema.(map[string]any)
		out, _ := tl.OutputSchema.(map[string]any)
		if in["type"] != "object" || out["type"] != "object" {
			t.Errorf("%s: input type %v, output type %v; MCP wants object", tl.Name, in["type"], out["type"])
		}
		if tl.Annotations == nil {
			t.Errorf("%s: no annotations", tl.Name)
		} else if ro := tl.Annotations.ReadOnlyHint; ro != (tl.Name != "apply_patch" && tl.Name != "exec_command" && tl.Name != "undo_turn") {
			t.Errorf("%s: readOnlyHint %v", tl.Name, ro)
		}
	}
}

func TestElicitationApproves(t *testing.T) {
	for _, c := range []struct {
		action string
		ran    bool
	}{{"accept", true}, {"decline", false}, {"cancel", false}} {
		t.Run(c.action, func(t *testing.T) {
			var asked []string
			s := start(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = append(asked, req.Params.Message)
				return &mcp.ElicitResult{Action: c.action}, nil
			}}, permission.AcceptEdits)
			_, m := s.call(t, "exec_command", map[string]any{"command": "touch b.txt"})
			if len(asked) != 1 || !strings.Contains(asked[0], "command:   touch b.txt") || !strings.Contains(asked[0], "write.workspace") {
				t.Fatalf("elicitation %q", asked)
			}
			if ran := len(s.exec.commands()) == 1; ran != c.ran || m["ran"] != c.ran {
				t.Fatalf("ran %v (result %v), want %v", s.exec.commands(), m, c.ran)
			}
			if !c.ran && (m["exit_status"] != 126.0 || !strings.Contains(m["note"].(string), "write.workspace")) {
				t.Fatalf("refusal %v", m)
			}
			// An allowed command never asks.
			asked = nil
			s.call(t, "exec_command", map[string]any{"command": "true"})
			if len(asked) != 0 {
				t.Fatalf("asked about true: %q", asked)
			}
		})
	}
}

func TestNoElicitationMeansApprovalRequired(t *testing.T) {
	s := start(t, nil, permission.AcceptEdits)
	_, m := s.call(t, "exec_command", map[string]any{"command": "touch b.txt", "network": true})
	ar, _ := m["approval_required"].(map[string]any)
	if ar == nil || m["ran"] != false || len(s.exec.commands()) != 0 {
		t.Fatalf("result %v, runs %v", m, s.exec.commands())
	}
	if rules := ar["rules"].([]any); len(rules) != 2 || rules[0] != "write.workspace" || rules[1] != "network.requested" {
		t.Fatalf("rules %v", rules)
	}
}

// TestApprovalIsForOneOperation drives the multi round-trip by hand: an answer given for one
// command cannot run another, cannot be replayed, and a forged state approves nothing.
func TestApprovalIsForOneOperation(t *testing.T) {
	s := start(t, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}, permission.AcceptEdits)
	if v := s.cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
		t.Skipf("negotiated %s: the client cannot drive the round trip itself", v)
	}
	ctx := context.Background()
	first, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "exec_command", Arguments: map[string]any{"command": "touch approved.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if !first.NeedsInput() || first.RequestState == "" || first.InputRequests[approvalInput] == nil {
		t.Fatalf("first call: %+v", first)
	}
	accept := mcp.InputResponseMap{approvalInput: &mcp.ElicitResult{Action: "accept"}}
	retry := func(command, state string) map[string]any {
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "exec_command", Arguments: map[string]any{"command": command}, InputResponses: accept, RequestState: state})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &m)
		return m
	}
	if m := retry("touch other.txt", first.RequestState); m["ran"] != false || !strings.Contains(m["note"].(string), errOther.Error()) {
		t.Fatalf("another command with the approval: %v", m)
	}
	forged := first.RequestState[:len(first.RequestState)-2] + "AA"
	if m := retry("touch approved.txt", forged); m["ran"] != false || !strings.Contains(m["note"].(string), errForged.Error()) {
		t.Fatalf("forged state: %v", m)
	}
	if m := retry("touch approved.txt", first.RequestState); m["ran"] != true {
		t.Fatalf("the approved command: %v", m)
	}
	if m := retry("touch approved.txt", first.RequestState); m["ran"] != false || !strings.Contains(m["note"].(string), errReplayed.Error()) {
		t.Fatalf("replayed approval: %v", m)
	}
	if got := strings.Join(s.exec.commands(), "|"); got != "touch approved.txt" {
		t.Fatalf("commands sent to the helper: %q", got)
	}
}

func TestInstructionsPerEditFormat(t *testing.T) {
	for f, want := range map[tools.EditFormat]string{tools.EditLines: "start_line", tools.EditText: "old_text", tools.EditPatch: "*** Begin Patch"} {
		if got := Instructions(f, permission.Manual); !strings.Contains(got, want) {
			t.Errorf("%s: instructions lack %q", f, want)
		}
		if got := tools.ApplyPatchDescription(f); !strings.Contains(got, want) {
			t.Errorf("%s: description lacks %q", f, want)
		}
	}
}

// BenchmarkToolsListSize reports the bytes of the tools/list result as a client receives it:
// the default list, and the list with every deferred tool loaded by tool_search.
func BenchmarkToolsListSize(b *testing.B) {
	s := start(b, nil, permission.AcceptEdits)
	size := func() int {
		res, err := s.cs.ListTools(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		return len(raw)
	}
	core := size()
	for _, name := range s.srv.search.names() {
		if _, err := s.srv.toolSearch(context.Background(), ToolSearchInput{Query: "select:" + name}); err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	all := size()
	for range b.N {
		size()
	}
	b.ReportMetric(float64(core), "default-bytes")
	b.ReportMetric(float64(all), "with-deferred-bytes")
	b.ReportMetric(0, "ns/op")
}

// TestProtocol20250618 speaks raw JSON-RPC at protocol version 2025-06-18: the version is
// negotiated, and an approval travels as an elicitation/create request from the server
// (before 2026-07-28 there are no multi round-trip results) that the client answers.
func TestProtocol20250618(t *testing.T) {
	ws := t.TempDir()
	rec := &recordingExec{}
	srv, err := New(Options{Workspace: ws, Mode: permission.AcceptEdits, EditFormat: tools.EditLines, Executor: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Run(ctx, &mcp.IOTransport{Reader: sr, Writer: sw})
	dec := json.NewDecoder(cr)
	send := func(v string) {
		if _, err := io.WriteString(cw, v+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() map[string]any {
		var m map[string]any
		done := make(chan error, 1)
		go func() { done <- dec.Decode(&m) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no message from the server")
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := recv(); m["result"].(map[string]any)["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exec_command","arguments":{"command":"touch x.txt"}}}`)
	m := recv()
	if m["method"] != "elicitation/create" || !strings.Contains(m["params"].(map[string]any)["message"].(string), "touch x.txt") {
		t.Fatalf("want an elicitation/create request, got %v", m)
	}
	send(`{"jsonrpc":"2.0","id":` + string(mustJSON(m["id"])) + `,"result":{"action":"accept"}}`)
	m = recv()
	text := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(text, `"ran":true`) || strings.Join(rec.commands(), "|") != "touch x.txt" {
		t.Fatalf("after accept: %s (ran %v)", text, rec.commands())
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// TestElicitationCannotBeForgedByTheCommand: the approval message an MCP client shows is
// built from text the agent chose (the command, the directory it runs in). A multi-line
// command that draws card lines of its own ("network:   off", "sandbox: …") and hides its
// last line behind blank lines, and a directory name with a newline and a terminal escape,
// must stay inside their own fields: every card field appears once, at the start of a line,
// and every line of the command is shown numbered under a header that counts them; a secret
// in the command is redacted as in the audit log.
func TestElicitationCannotBeForgedByTheCommand(t *testing.T) {
	var asked []string
	s := start(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}, permission.Manual)
	dir := "sub\nnetwork:   off\x1b[2K"
	if err := os.Mkdir(filepath.Join(s.ws, dir), 0o755); err != nil {
		t.Fatal(err)
	}
	command := "touch b.txt\nnetwork:   off\nmode:      manual\n" + strings.Repeat("\n", 40) + "GITHUB_TOKEN=abc123secretvalue touch c.txt"
	s.call(t, "exec_command", map[string]any{"command": command, "cwd": dir})
	if len(asked) != 1 {
		t.Fatalf("asked %d times, want once", len(asked))
	}
	msg := asked[0]
	for _, field := range []string{"command:", "cwd:", "network:", "mode:"} {
		n := 0
		for _, l := range strings.Split(msg, "\n") {
			if strings.HasPrefix(l, field) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d lines start with %q, want 1:\n%s", n, field, msg)
		}
	}
	if !strings.Contains(msg, "command:   44 lines:\n") || !strings.Contains(msg, "   44 | GITHUB_TOKEN=[REDACTED:env-secret] touch c.txt\n") {
		t.Errorf("the command is not shown as its 44 numbered lines:\n%s", msg)
	}
	if strings.ContainsRune(msg, 0x1b) || !strings.Contains(msg, `sub\nnetwork:   off\x1b[2K`) {
		t.Errorf("the directory name is not shown escaped:\n%q", msg)
	}
	// Sensitive values are redacted on the card as in the audit log.
	if strings.Contains(msg, "abc123secretvalue") {
		t.Errorf("the card shows the secret:\n%s", msg)
	}
	if len(s.exec.commands()) != 0 {
		t.Fatalf("a declined card ran %q", s.exec.commands())
	}
}
