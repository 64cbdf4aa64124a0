package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/codemode"
	"github.com/s-code-dev/s-code/internal/permission"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

func TestCodeModeIsDeferredAndGiven(t *testing.T) {
	s := start(t, nil, permission.AcceptEdits)
	if names := toolNames(t, s.cs); slices.Contains(names, "code_mode") {
		t.Fatalf("code_mode sent by default: %v", names)
	}
	_, m := s.call(t, "tool_search", map[string]any{"query": "batch many reads in one javascript program"})
	if first := m["tools"].([]any)[0].(map[string]any); first["name"] != "code_mode" {
		t.Fatalf("tool_search best hit %v, want code_mode", m)
	}
	<-s.changed
	tl, ok := s.srv.Registry().Lookup("code_mode")
	if !ok || !tl.ReadOnly() || !tl.Deferred() {
		t.Fatalf("code_mode in the registry: %v", tl)
	}
	// What programs are given: the read-only core tools less update_plan, and tool_search.
	given, direct := codeModeTools(s.srv.Registry(), s.srv.toolSearchTool())
	var names []string
	for _, g := range given {
		names = append(names, g.Name())
	}
	want := []string{"git_blame", "git_diff", "git_log", "git_show", "git_status", "glob", "grep", "list_dir", "read_file", "tool_search"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("given %v, want %v", names, want)
	}
	for _, d := range []string{"exec_command", "apply_patch", "undo_turn", "update_plan", "audit_query", "sandbox_profile"} {
		if !slices.Contains(direct, d) {
			t.Errorf("%s is not a direct tool: %v", d, direct)
		}
	}

	// Configured on: in the default list.
	on := startWith(t, nil, Options{Mode: permission.AcceptEdits, CodeMode: true})
	if names := toolNames(t, on.cs); !slices.Contains(names, "code_mode") {
		t.Fatalf("code_mode = true, tools/list %v", names)
	}
}

func TestCodeModeProgressInOrder(t *testing.T) {
	var mu sync.Mutex
	var progress []*mcp.ProgressNotificationParams
	opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, r.Params)
	}}
	s := startWith(t, opts, Options{Mode: permission.AcceptEdits, CodeMode: true})
	for i := range 5 {
		os.WriteFile(filepath.Join(s.ws, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("line %d\n", i)), 0o644)
	}
	code := `const out = [];
		for (const m of tools.glob({pattern: "f*.txt", sort: "path"}).matches) out.push(tools.read_file({path: m.path}).numbered_content);
		out.push(tools.grep({pattern: "line 3"}).matches.length);
		try { tools.exec_command({command: "true"}) } catch (e) { out.push(e.code) }
		return out;`
	params := &mcp.CallToolParams{Name: "code_mode", Arguments: map[string]any{"code": code}}
	params.SetProgressToken("cm-1")
	res, err := s.cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("code_mode: %v %v", err, res.Content)
	}
	var out codemode.Result
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	checkOutput(t, s.srv, "code_mode", mapOf(t, res.StructuredContent))
	var v []any
	json.Unmarshal(out.Value, &v)
	if len(v) != 7 || v[0] != "     1\tline 0\n" || v[5] != float64(1) || v[6] != "direct_tool" {
		t.Fatalf("value %s", out.Value)
	}
	if len(out.Calls) != 7 { // glob, 5 reads, grep; the direct tool is no child call
		t.Fatalf("calls %+v", out.Calls)
	}
	// The notifications arrive before the answer (the SDK delivers them in order on the one
	// connection; give the handler goroutine a moment).
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(progress)
		mu.Unlock()
		if n >= len(out.Calls) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) != len(out.Calls) {
		t.Fatalf("%d progress notifications for %d calls", len(progress), len(out.Calls))
	}
	for i, p := range progress {
		c := out.Calls[i]
		if p.ProgressToken != "cm-1" || p.Progress != float64(i+1) || !strings.HasPrefix(p.Message, fmt.Sprintf("#%d %s ", c.Seq, c.Tool)) {
			t.Errorf("notification %d: %+v for call %+v", i, p, c)
		}
	}
}

func TestCodeModeErrorCarriesCallLog(t *testing.T) {
	s := startWith(t, nil, Options{Mode: permission.AcceptEdits, CodeMode: true, CodeModeBudgets: codemode.Budgets{Calls: 3}})
	res, m := s.call(t, "code_mode", map[string]any{"code": `for (;;) tools.read_file({path: "a.txt"})`})
	if !res.IsError || m["code"] != codemode.CodeCallBudget {
		t.Fatalf("over the call budget: %v", m)
	}
	calls := m["detail"].(map[string]any)["calls"].([]any)
	if len(calls) != 3 {
		t.Fatalf("call log of the stopped program: %v", m["detail"])
	}
	res, m = s.call(t, "code_mode", map[string]any{"code": "  "})
	if !res.IsError || m["code"] != "invalid_arguments" {
		t.Fatalf("empty code: %v", m)
	}
}

func mapOf(t *testing.T, v any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(v)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCodeModeAuditRecord(t *testing.T) {
	var mu sync.Mutex
	var got []*helperv1.CodeModeRecord
	fail := false
	record := func(_ context.Context, r *helperv1.CodeModeRecord) (*helperv1.CodeModeRecorded, error) {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return nil, errors.New("helper gone (test)")
		}
		got = append(got, r)
		return &helperv1.CodeModeRecorded{RequestId: fmt.Sprintf("cm-%d", len(got)), Seq: uint64(len(got))}, nil
	}
	s := startWith(t, nil, Options{Mode: permission.AcceptEdits, CodeMode: true, CodeModeAudit: record, CodeModeBudgets: codemode.Budgets{Calls: 2}})
	code := `return [tools.read_file({path: "a.txt"}).revision.length, tools.grep({pattern: "hello"}).matches.length]`
	res, m := s.call(t, "code_mode", map[string]any{"code": code})
	if res.IsError || m["audit"].(map[string]any)["request_id"] != "cm-1" {
		t.Fatalf("answer %v", m)
	}
	r := got[0]
	if r.GetProgram() != code || r.GetWorkspace() != s.srv.root.Path() || len(r.GetCalls()) != 2 || r.GetError() != "" ||
		r.GetCalls()[0].GetTool() != "read_file" || r.GetCalls()[0].GetArguments() != `{"path":"a.txt"}` || !r.GetCalls()[1].GetOk() ||
		r.GetResultBytes() != int64(len(`[16,1]`)) || r.GetChildBytes() == 0 {
		t.Fatalf("record %v", r)
	}
	// A stopped program is recorded with its error.
	res, m = s.call(t, "code_mode", map[string]any{"code": `for (;;) tools.read_file({path: "a.txt"})`})
	if !res.IsError || len(got) != 2 || !strings.HasPrefix(got[1].GetError(), codemode.CodeCallBudget+": ") || len(got[1].GetCalls()) != 2 {
		t.Fatalf("stopped program: %v, record %v", m, got[1:])
	}
	// A record that cannot be written is said in the answer.
	mu.Lock()
	fail = true
	mu.Unlock()
	res, m = s.call(t, "code_mode", map[string]any{"code": `return 1`})
	if res.IsError || !strings.Contains(m["audit"].(map[string]any)["error"].(string), "helper gone") {
		t.Fatalf("unrecorded: %v", m)
	}
}
