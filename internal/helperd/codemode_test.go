package helperd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/helperd"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

func TestRecordCodeModeWritesRedactedRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	log, err := audit.Open(dir, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	e := newEnv(t, func(c *helperd.Config) { c.Auditor = log })
	program := "// api_key=sk-live-0123456789abcdef\nreturn tools.read_file({path: \"a.txt\"}).revision"
	req := &helperv1.CodeModeRecord{
		Workspace: e.work, Program: program, Error: "", ChildBytes: 120, ResultBytes: 18, Duration: durationpb.New(3 * time.Millisecond),
		Calls: []*helperv1.ChildCall{{Seq: 1, Tool: "read_file", Arguments: `{"path":"a.txt","token":"password=hunter2hunter2"}`, Ok: true, Bytes: 120, Duration: durationpb.New(time.Millisecond)}},
	}
	got, err := e.client.RecordCodeMode(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	var rec *audit.Record
	if err := audit.Read(dir, audit.Filter{RequestID: got.GetRequestId()}, func(r *audit.Record) error { rec = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Kind != audit.KindCodeMode || rec.Seq != got.GetSeq() || rec.Peer == nil || rec.Peer.UID != uint32(os.Geteuid()) {
		t.Fatalf("record %+v", rec)
	}
	if strings.Contains(rec.Command, "sk-live-0123456789abcdef") || !strings.Contains(rec.Command, `return tools.read_file`) || strings.Contains(rec.Command, "\n") {
		t.Fatalf("program as recorded: %q", rec.Command)
	}
	if len(rec.ChildCalls) != 1 || rec.ChildCalls[0].Tool != "read_file" || strings.Contains(rec.ChildCalls[0].Arguments, "hunter2hunter2") ||
		rec.ChildCalls[0].Bytes != 120 || rec.ChildBytes != 120 || rec.ResultBytes != 18 || rec.Workspace != e.work {
		t.Fatalf("call log as recorded: %+v", rec)
	}

	// A program over the kept length is cut and says so; too many calls are refused.
	long := strings.Repeat("é", 40<<10)
	got, err = e.client.RecordCodeMode(ctx(t), &helperv1.CodeModeRecord{Program: long})
	if err != nil {
		t.Fatal(err)
	}
	audit.Read(dir, audit.Filter{RequestID: got.GetRequestId()}, func(r *audit.Record) error { rec = r; return nil })
	if len(rec.Command) > 64<<10 || !strings.HasPrefix(rec.Reason, "program of 81920 bytes") {
		t.Fatalf("long program: %d bytes, reason %q", len(rec.Command), rec.Reason)
	}
	many := &helperv1.CodeModeRecord{}
	for range 1001 {
		many.Calls = append(many.Calls, &helperv1.ChildCall{Tool: "grep"})
	}
	if _, err := e.client.RecordCodeMode(ctx(t), many); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("1001 calls: %v", err)
	}
}

func TestRecordCodeModeRefusals(t *testing.T) {
	root := newEnv(t, func(c *helperd.Config) { c.Role = safety.RoleRoot })
	if _, err := root.client.RecordCodeMode(ctx(t), &helperv1.CodeModeRecord{Program: "return 1"}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("root helper: %v", err)
	}
	e := newEnv(t, nil)
	e.aud.fail[audit.KindCodeMode] = true
	if _, err := e.client.RecordCodeMode(ctx(t), &helperv1.CodeModeRecord{Program: "return 1"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("audit log failing: %v", err)
	}
	// A caller the helper does not admit is refused before anything is recorded.
	other := newEnv(t, func(c *helperd.Config) { c.Authorize = helperd.SameUID(uint32(os.Geteuid()) + 1) })
	if _, err := other.client.RecordCodeMode(ctx(t), &helperv1.CodeModeRecord{Program: "return 1"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("another uid: %v", err)
	}
	if _, ok := other.aud.find(audit.KindCodeMode, ""); ok {
		t.Fatal("a refused caller's record was written")
	}
}

// A host_tool_call record keeps the server, tool, digest, approval and arguments (redacted);
// one that names no server or tool is refused.
func TestRecordHostToolCallWritesRedactedRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	log, err := audit.Open(dir, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	e := newEnv(t, func(c *helperd.Config) { c.Auditor = log })
	got, err := e.client.RecordHostToolCall(ctx(t), &helperv1.HostToolCall{
		Workspace: e.work, Server: "everything", Tool: "echo", Command: "/usr/bin/node \"index.js\"", Digest: "sha256:abc",
		Arguments: `{"message":"password=hunter2hunter2"}`, Approved: true, Reason: "approved by a person through elicitation",
	})
	if err != nil {
		t.Fatal(err)
	}
	var rec *audit.Record
	if err := audit.Read(dir, audit.Filter{RequestID: got.GetRequestId()}, func(r *audit.Record) error { rec = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Kind != audit.KindHostToolCall || rec.Command != "everything.echo" || !rec.Approved || rec.PlanDigest != "sha256:abc" ||
		rec.Peer == nil || len(rec.ChildCalls) != 1 || strings.Contains(rec.ChildCalls[0].Arguments, "hunter2hunter2") ||
		!strings.Contains(rec.Reason, "/usr/bin/node") {
		t.Fatalf("record %+v", rec)
	}
	if _, err := e.client.RecordHostToolCall(ctx(t), &helperv1.HostToolCall{Tool: "echo"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("no server: %v", err)
	}
}
