package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/hostproc"
	"github.com/s-code-dev/s-code/internal/permission"
	processesv1 "github.com/s-code-dev/s-code/proto/scode/processes/v1"
)

// hookService returns the Processes service of a real supervisor over a definitions file
// holding hooks (each /bin/sh -c SCRIPT, confirmed), and the PreCallFunc calling its PreCall.
func hookService(t *testing.T, timeout time.Duration, scripts map[string]string) PreCallFunc {
	t.Helper()
	home := t.TempDir()
	log, err := audit.Open(filepath.Join(t.TempDir(), "audit"), audit.Options{DisableJournal: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	sup := hostproc.New(hostproc.Config{Home: home, Getenv: os.LookupEnv, Resolver: credhandle.Resolver{UID: -1},
		Audit: func(r *audit.Record) error { return log.Append(context.Background(), r, true) }, KillGrace: 200 * time.Millisecond})
	t.Cleanup(func() { sup.Close(context.Background()) })
	st := &hostdef.Store{Path: filepath.Join(t.TempDir(), hostdef.FileName), Defs: map[string]*hostdef.Definition{}}
	for name, script := range scripts {
		d := &hostdef.Definition{Name: name, Kind: hostdef.KindHook, Event: hostdef.EventPreCall, Timeout: hostdef.Duration(timeout),
			Command: "/bin/sh", Args: []string{"-c", script}, Enabled: true}
		if err := hostdef.Confirm(d, home, nil, &strings.Builder{}, true, time.Now()); err != nil {
			t.Fatal(err)
		}
		st.Defs[name] = d
	}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	svc := hostproc.NewService(sup, func() (*hostdef.Store, error) { return hostdef.Load(st.Path, os.Geteuid()) })
	return func(ctx context.Context, tool string, input json.RawMessage) (string, string, error) {
		r, err := svc.PreCall(ctx, &processesv1.PreCallRequest{Session: "s", Tool: tool, Input: string(input)})
		return r.GetDecision(), r.GetReason(), err
	}
}

// A pre-call hook that denies stops s-code mcp's tool call with the hook's reason; the
// command never runs, and a call the hook lets pass does.
func TestPreCallHookDenies(t *testing.T) {
	pre := hookService(t, 0, map[string]string{
		"no-rm": `grep -q '"rm ' && { echo '{"decision":"deny","reason":"no rm in this workspace"}'; exit 0; }; echo '{"decision":"allow"}'`,
	})
	s := startWith(t, nil, Options{Mode: permission.Workspace, PreCall: pre})
	res, m := s.call(t, "exec_command", map[string]any{"command": "rm a.txt"})
	if !res.IsError || m["code"] != "denied_by_hook" || !strings.Contains(m["message"].(string), "denied by the pre-call hook no-rm: no rm in this workspace") {
		t.Fatalf("denied call: %v", m)
	}
	if got := s.exec.commands(); len(got) != 0 {
		t.Fatalf("ran %v", got)
	}
	if res, _ := s.call(t, "exec_command", map[string]any{"command": "true"}); res.IsError {
		t.Fatalf("allowed call refused")
	}
	if got := s.exec.commands(); len(got) != 1 || got[0] != "true" {
		t.Fatalf("ran %v", got)
	}
}

// A hook that hangs is killed at its time limit (with its children) and the call is refused.
func TestPreCallHookHangs(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	pre := hookService(t, 500*time.Millisecond, map[string]string{"stuck": `sleep 60 & echo $! > ` + pidFile + `; wait`})
	s := startWith(t, nil, Options{Mode: permission.Workspace, PreCall: pre})
	start := time.Now()
	res, m := s.call(t, "read_file", map[string]any{"path": "a.txt"})
	if !res.IsError || m["code"] != "denied_by_hook" || !strings.Contains(m["message"].(string), "time limit") {
		t.Fatalf("hung hook: %v", m)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the call waited %v", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hook's child %s is still running: %s", pid, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
