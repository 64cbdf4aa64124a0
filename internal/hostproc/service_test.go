package hostproc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
	processesv1 "github.com/s-code-dev/s-code/proto/scode/processes/v1"
)

// TestServiceStartsOnlyConfirmed: by name, the service starts a stored definition only when
// enabled and confirmed as the file holds it now (re-read at each start); a terminal given in
// full starts only with the digest of its own card.
func TestServiceStartsOnlyConfirmed(t *testing.T) {
	h := newHarness(t, credhandle.Resolver{UID: -1})
	path := filepath.Join(t.TempDir(), "s-code", hostdef.FileName)
	st := &hostdef.Store{Path: path, Defs: map[string]*hostdef.Definition{}}
	d := h.confirmed("srv", hostdef.KindMCPServer, nil, "/bin/sh", "-c", "echo up; exec cat")
	d.Enabled = true
	st.Defs["srv"] = d
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	svc := NewService(h.s, func() (*hostdef.Store, error) { return hostdef.Load(path, os.Geteuid()) })
	ctx := context.Background()
	byName := &processesv1.StartRequest{What: &processesv1.StartRequest_Name{Name: "srv"}, Session: "s"}
	resp, err := svc.Start(ctx, byName)
	if err != nil {
		t.Fatalf("a confirmed definition: %v", err)
	}
	id := resp.GetProcess().GetId()
	h.readUntil(id, "up")
	if _, err := svc.Stop(ctx, &processesv1.StopRequest{What: &processesv1.StopRequest_Id{Id: id}}); err != nil {
		t.Fatal(err)
	}

	// Someone edits the file: the same request is refused until confirmed again.
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), "echo up", "echo pwned", 1)), 0o600)
	_, err = svc.Start(ctx, byName)
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "changed since it was confirmed") {
		t.Fatalf("an edited definition: %v", err)
	}
	st2, _ := hostdef.Load(path, os.Geteuid())
	if err := hostdef.Confirm(st2.Defs["srv"], h.home, nil, &strings.Builder{}, true, time.Now()); err != nil {
		t.Fatal(err)
	}
	st2.Defs["srv"].Enabled = false
	st2.Save()
	if _, err := svc.Start(ctx, byName); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "disabled") {
		t.Fatalf("a disabled definition: %v", err)
	}
	if _, err := svc.Start(ctx, &processesv1.StartRequest{What: &processesv1.StartRequest_Name{Name: "none"}}); status.Code(err) != codes.NotFound {
		t.Fatalf("an unknown name: %v", err)
	}

	term := &processesv1.Terminal{Name: "t", Command: "/bin/cat", Dir: h.home}
	td := &hostdef.Definition{Name: "t", Kind: hostdef.KindTerminal, Command: "/bin/cat", Dir: h.home}
	term.ConfirmedDigest = (&hostdef.Definition{Name: "t", Kind: hostdef.KindTerminal, Command: "/bin/sh", Dir: h.home}).Card("").Digest()
	if _, err := svc.Start(ctx, &processesv1.StartRequest{What: &processesv1.StartRequest_Terminal{Terminal: term}}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a terminal with another card's digest: %v", err)
	}
	term.ConfirmedDigest = td.Card("").Digest()
	resp, err = svc.Start(ctx, &processesv1.StartRequest{What: &processesv1.StartRequest_Terminal{Terminal: term}, Session: "s"})
	if err != nil || !resp.GetProcess().GetTerminal() {
		t.Fatalf("a confirmed terminal: %v %v", resp, err)
	}
	stop, err := svc.Stop(ctx, &processesv1.StopRequest{What: &processesv1.StopRequest_Session{Session: "s"}})
	if err != nil || len(stop.GetProcesses()) != 2 {
		t.Fatalf("stop session: %v %v", stop, err)
	}
	if l, _ := svc.List(ctx, &processesv1.ListRequest{Session: "s"}); len(l.GetProcesses()) != 0 {
		t.Errorf("the ended session still lists %v", l.GetProcesses())
	}
}
