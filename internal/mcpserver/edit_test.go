package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/safety"
)

// memAudit keeps a real user helper's audit records in memory.
type memAudit struct {
	mu      sync.Mutex
	records []audit.Record
}

func (a *memAudit) Append(_ context.Context, r *audit.Record, _ bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	r.Seq = uint64(len(a.records) + 1)
	r.Hash = fmt.Sprintf("h%d", r.Seq)
	a.records = append(a.records, *r)
	return nil
}

func (a *memAudit) Head() (uint64, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return uint64(len(a.records)), fmt.Sprintf("h%d", len(a.records))
}

// exits returns the exit records whose command starts with prefix.
func (a *memAudit) exits(prefix string) []audit.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []audit.Record
	for _, r := range a.records {
		if r.Kind == audit.KindExit && strings.HasPrefix(r.Command, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// startUserHelper serves a real user helper (edits on, as s-code-userhelper's) on a Unix
// socket and returns the socket and its audit records. Turn records go to a temporary
// XDG_STATE_HOME.
func startUserHelper(t *testing.T) (string, *memAudit) {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	aud := &memAudit{}
	srv, err := helperd.New(helperd.Config{
		Role: safety.RoleUser, Version: "test", Auditor: aud, Authorize: helperd.SameUID(uint32(os.Geteuid())),
		Runner: execrun.Plain{}, Path: execrun.SafePath, Home: t.TempDir(), User: "tester",
		Edits: true, KillGrace: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "user.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(time.Second) })
	return sock, aud
}

func newFile(path, content string) map[string]any {
	return map[string]any{"files": []any{map[string]any{"path": path, "expected_revision": nil, "content": content}}}
}

// In Manual mode an agent's patch goes to the helper, whose plan needs a person: the card
// is elicited, a decline writes nothing, an accept applies the batch with the approval of
// that plan (channel elicitation), and the helper's audit log has the paths@revisions.
func TestManualModePatchThroughHelper(t *testing.T) {
	sock, aud := startUserHelper(t)
	answer := "decline"
	var elicited []string
	s := startWith(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		elicited = append(elicited, r.Params.Message)
		return &mcp.ElicitResult{Action: answer}, nil
	}}, Options{Mode: permission.Manual, Socket: sock})
	res, m := s.call(t, "apply_patch", newFile("n.txt", "x\n"))
	if !res.IsError || m["code"] != "not_approved" || m["rule"] != "edit.workspace" || len(elicited) != 1 {
		t.Fatalf("declined patch: %v (elicited %d)", m, len(elicited))
	}
	if !strings.Contains(elicited[0], filepath.Join(s.ws, "n.txt")) {
		t.Fatalf("the card does not name the complete path:\n%s", elicited[0])
	}
	if _, err := os.Stat(filepath.Join(s.ws, "n.txt")); !os.IsNotExist(err) {
		t.Fatal("a declined patch wrote")
	}
	if ex := aud.exits("apply_patch"); len(ex) != 0 {
		t.Fatalf("a declined patch has exit records: %+v", ex)
	}

	answer = "accept"
	res, m = s.call(t, "apply_patch", newFile("n.txt", "x\n"))
	if res.IsError {
		t.Fatalf("accepted patch: %v", m)
	}
	if b, err := os.ReadFile(filepath.Join(s.ws, "n.txt")); err != nil || string(b) != "x\n" {
		t.Fatalf("n.txt = %q, %v", b, err)
	}
	ex := aud.exits("apply_patch")
	if len(ex) != 1 {
		t.Fatalf("exit records %+v", ex)
	}
	r := ex[0]
	if len(r.Applied) != 1 || !strings.HasPrefix(r.Applied[0], "n.txt@") || r.Turn != m["turn"] || !r.Approved ||
		r.Approval == nil || r.Approval.Channel != "elicitation" || r.Approval.Digest != r.PlanDigest || r.Approval.Nonce == "" {
		t.Fatalf("audit record %+v (approval %+v), result %v", r, r.Approval, m)
	}

	// undo_turn goes through the helper too: asked, reverted, recorded.
	res, m = s.call(t, "undo_turn", map[string]any{})
	if res.IsError {
		t.Fatalf("undo_turn: %v", m)
	}
	if _, err := os.Stat(filepath.Join(s.ws, "n.txt")); !os.IsNotExist(err) {
		t.Fatalf("undo left n.txt: %v (%v)", err, m)
	}
	if len(elicited) != 3 {
		t.Fatalf("elicited %d times, want 3", len(elicited))
	}
	res, m = s.call(t, "undo_turn", map[string]any{})
	if !res.IsError || m["code"] != "no_turn" {
		t.Fatalf("second undo_turn: %v", m)
	}
}

// The helper's refusals keep the model-facing messages in the form the model used.
func TestPatchRefusalsThroughHelper(t *testing.T) {
	sock, _ := startUserHelper(t)
	s := startWith(t, nil, Options{Mode: permission.AcceptEdits, Socket: sock})
	// patch form: adding a file that exists says how to update it
	res, m := s.call(t, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n", "revisions": map[string]any{"a.txt": nil}})
	if msg, _ := m["message"].(string); !res.IsError || m["code"] != "stale_revision" || !strings.HasPrefix(msg, "*** Add File: a.txt: the file already exists") || !strings.Contains(msg, "*** Update File: a.txt") {
		t.Fatalf("patch-form add of an existing file: %v", m)
	}
	// envelope form: the same refusal in its own words
	res, m = s.call(t, "apply_patch", newFile("a.txt", "x\n"))
	if msg, _ := m["message"].(string); !res.IsError || m["code"] != "stale_revision" || !strings.Contains(msg, `to change it send "expected_revision"`) {
		t.Fatalf("envelope add of an existing file: %v", m)
	}
	// a protected target is refused by the helper's plan, by rule
	res, m = s.call(t, "apply_patch", newFile(".git/config", "x\n"))
	if !res.IsError || m["code"] != "protected_path" || m["rule"] != "write.protected" {
		t.Fatalf("protected target: %v", m)
	}
	// an unset mode refuses
	u := startWith(t, nil, Options{Socket: sock})
	res, m = u.call(t, "apply_patch", newFile("b.txt", "x\n"))
	if !res.IsError || m["code"] != "refused" {
		t.Fatalf("unset mode: %v", m)
	}
	if _, err := os.Stat(filepath.Join(u.ws, "b.txt")); !os.IsNotExist(err) {
		t.Fatal("a refused patch wrote")
	}
}

// Without a helper nothing is written: no edit is made in the s-code mcp process.
func TestPatchWithoutHelperWritesNothing(t *testing.T) {
	s := startWith(t, nil, Options{Mode: permission.AcceptEdits, Socket: filepath.Join(t.TempDir(), "none.sock")})
	res, m := s.call(t, "apply_patch", newFile("n.txt", "x\n"))
	if !res.IsError || m["code"] != "helper_failed" {
		t.Fatalf("no helper: %v", m)
	}
	if _, err := os.Stat(filepath.Join(s.ws, "n.txt")); !os.IsNotExist(err) {
		t.Fatal("a patch without a helper wrote")
	}
}

// Every form's refusals and the patch form's apply, stale retry and undo, through a real
// helper (these were internal/tools' cases when the edit ran in the s-code mcp process).
func TestPatchFormsThroughHelper(t *testing.T) {
	sock, aud := startUserHelper(t)
	s := startWith(t, nil, Options{Mode: permission.AcceptEdits, Socket: sock})
	os.WriteFile(filepath.Join(s.ws, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"), 0o644)
	os.WriteFile(filepath.Join(s.ws, "crlf.txt"), []byte("a\r\nb\r\n"), 0o644)
	rev := func(path string) string {
		_, m := s.call(t, "read_file", map[string]any{"path": path})
		r, _ := m["revision"].(string)
		if len(r) != 16 {
			t.Fatalf("read_file %s: %v", path, m)
		}
		return r
	}
	mainRev, crlfRev := rev("main.go"), rev("crlf.txt")
	cases := []struct{ name, args, want string }{
		{"update missing", `{"patch":"*** Begin Patch\n*** Update File: nope.go\n@@\n-a\n+b\n*** End Patch\n","revisions":{"nope.go":"0123456789abcdef"}}`, "use *** Add File: nope.go"},
		{"add existing", `{"patch":"*** Begin Patch\n*** Add File: main.go\n+x\n*** End Patch\n","revisions":{"main.go":null}}`, "use *** Update File: main.go with \"revisions\": {\"main.go\": \"" + mainRev + "\"}"},
		{"crlf in patch form", `{"patch":"*** Begin Patch\n*** Update File: crlf.txt\n@@\n-a\n+c\n*** End Patch\n","revisions":{"crlf.txt":"` + crlfRev + `"}}`, `send {"files":[{"path":...,"expected_revision":REV,"content"`},
		{"trailing space on a marker", `{"patch":"*** Begin Patch\n*** Update File: main.go\n@@\n-a\n+b\n*** End Patch \n","revisions":{"main.go":"0123456789abcdef"}}`, `line 6: the last line must be exactly "*** End Patch"; it is "*** End Patch " (with a trailing space)`},
		{"add existing envelope", `{"files":[{"path":"main.go","expected_revision":null,"content":"x"}]}`, "send \"expected_revision\": \"" + mainRev + "\""},
		{"update missing envelope", `{"files":[{"path":"new.go","expected_revision":"0123456789abcdef","content":"x"}]}`, "send \"expected_revision\": null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, m := s.call(t, "apply_patch", json.RawMessage(c.args))
			if msg, _ := m["message"].(string); !res.IsError || !strings.Contains(msg, c.want) {
				t.Fatalf("result %v\nwant a message containing %q", m, c.want)
			}
		})
	}
	patch := json.RawMessage(`{"patch":"*** Begin Patch\n*** Update File: main.go\n@@\n func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n }\n*** End Patch\n","revisions":{"main.go":"` + mainRev + `"}}`)
	if res, m := s.call(t, "apply_patch", patch); res.IsError {
		t.Fatalf("patch: %v", m)
	}
	if b, _ := os.ReadFile(filepath.Join(s.ws, "main.go")); !strings.Contains(string(b), "hello") {
		t.Fatalf("not applied: %s", b)
	}
	// The same revision again is stale now.
	if res, m := s.call(t, "apply_patch", patch); !res.IsError || m["code"] != "stale_revision" {
		t.Fatalf("stale patch: %v", m)
	}
	if res, m := s.call(t, "undo_turn", map[string]any{}); res.IsError || fmt.Sprint(m["restored"]) != "[main.go]" {
		t.Fatalf("undo: %v", m)
	}
	if b, _ := os.ReadFile(filepath.Join(s.ws, "main.go")); !strings.Contains(string(b), "\"hi\"") {
		t.Fatalf("not undone: %s", b)
	}
	// Every batch that reached the files has its exit record (the refused ones with status
	// 1); only the applied one names paths@revisions.
	var applied []string
	for _, r := range aud.exits("apply_patch") {
		applied = append(applied, r.Applied...)
	}
	if len(applied) != 1 || !strings.HasPrefix(applied[0], "main.go@") || len(aud.exits("undo")) != 1 {
		t.Fatalf("audit: applied %v, %d undo exits", applied, len(aud.exits("undo")))
	}
}
