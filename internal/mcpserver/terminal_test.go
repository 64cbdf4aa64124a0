package mcpserver

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/hostproc"
	"github.com/s-code-dev/s-code/internal/permission"
	processesv1 "github.com/s-code-dev/s-code/proto/scode/processes/v1"
)

// processesOverSocket serves a real supervisor's Processes service on a Unix socket and
// returns a ProcessesFunc dialling it.
func processesOverSocket(t *testing.T) ProcessesFunc {
	t.Helper()
	log, err := audit.Open(filepath.Join(t.TempDir(), "audit"), audit.Options{DisableJournal: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	sup := hostproc.New(hostproc.Config{Home: t.TempDir(), Getenv: os.LookupEnv, Resolver: credhandle.Resolver{UID: -1},
		Audit: func(r *audit.Record) error { return log.Append(context.Background(), r, true) }, KillGrace: 200 * time.Millisecond})
	t.Cleanup(func() { sup.Close(context.Background()) })
	svc := hostproc.NewService(sup, func() (*hostdef.Store, error) { return &hostdef.Store{Defs: map[string]*hostdef.Definition{}}, nil })
	sock := filepath.Join(t.TempDir(), "p.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	processesv1.RegisterProcessesServer(gs, svc)
	go gs.Serve(l)
	t.Cleanup(gs.Stop)
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := processesv1.NewProcessesClient(conn)
	return func(context.Context) (processesv1.ProcessesClient, error) { return c, nil }
}

// The agent's terminal tools: terminal_start asks a person (the card shows the exact command
// and that it runs outside the sandbox), output is read and input written through the user
// helper's Processes service, and the session's end stops the terminal (gone from /proc).
func TestTerminalTools(t *testing.T) {
	var asked []string
	answer := "decline"
	s := startWith(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: answer}, nil
	}}, Options{Mode: permission.Workspace, Processes: processesOverSocket(t)})
	s.call(t, "tool_search", map[string]any{"query": "select:terminal_start,terminal_read,terminal_write,terminal_list,terminal_stop"})
	start := map[string]any{"command": "/bin/sh", "args": []string{"-c", "echo ready; exec cat"}, "name": "echoer"}
	res, m := s.call(t, "terminal_start", start)
	if !res.IsError || m["code"] != "not_approved" {
		t.Fatalf("declined start: %v", m)
	}
	if _, m := s.call(t, "terminal_list", map[string]any{}); len(m["terminals"].([]any)) != 0 {
		t.Fatalf("a declined terminal started: %v", m)
	}
	answer = "accept"
	res, m = s.call(t, "terminal_start", start)
	if res.IsError {
		t.Fatalf("start: %v", m)
	}
	card := asked[len(asked)-1]
	if !strings.Contains(card, `runs:      /bin/sh "-c" "echo ready; exec cat"`) || !strings.Contains(card, hostdef.AmbientAuthority) || !strings.Contains(card, "in:        "+s.ws) {
		t.Fatalf("card %q", card)
	}
	id, pid := m["id"].(string), int(m["pid"].(float64))
	read := func(want string) {
		t.Helper()
		var got string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			_, m := s.call(t, "terminal_read", map[string]any{"id": id})
			got += m["output"].(string)
			if strings.Contains(got, want) {
				return
			}
		}
		t.Fatalf("terminal output %q, want %q", got, want)
	}
	read("ready")
	if res, m := s.call(t, "terminal_write", map[string]any{"id": id, "data": "hello terminal\n"}); res.IsError {
		t.Fatalf("write: %v", m)
	}
	if !strings.Contains(asked[len(asked)-1], `arguments: "hello terminal\n"`) {
		t.Fatalf("write card %q", asked[len(asked)-1])
	}
	read("hello terminal")
	if res, m := s.call(t, "terminal_read", map[string]any{"id": "other-1"}); !res.IsError || m["code"] != "unknown_terminal" {
		t.Fatalf("another id: %v", m)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		t.Fatalf("terminal not running: %v", err)
	}
	s.srv.Close() // the session ends
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("terminal %d still running after the session ended", pid)
		}
	}
}
