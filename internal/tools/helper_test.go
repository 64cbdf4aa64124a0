package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/safety"
)

// nullAudit counts a real helper's audit records and keeps nothing else.
type nullAudit struct {
	mu sync.Mutex
	n  uint64
}

func (a *nullAudit) Append(_ context.Context, r *audit.Record, _ bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	r.Seq, r.Hash = a.n, fmt.Sprintf("h%d", a.n)
	return nil
}

func (a *nullAudit) Head() (uint64, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n, fmt.Sprintf("h%d", a.n)
}

// helperEditor is the Editor of these tests: a real user helper (edits on) on a real Unix
// socket, called through helperclient as the MCP server calls it; approve is asked with a
// card of the helper's plan. internal/mcpserver tests the server's own Editor.
type helperEditor struct{ c *helperclient.Client }

func newHelperEditor(t *testing.T) *helperEditor {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	srv, err := helperd.New(helperd.Config{
		Role: safety.RoleUser, Version: "test", Auditor: &nullAudit{}, Authorize: helperd.SameUID(uint32(os.Geteuid())),
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
	c, err := helperclient.Dial(context.Background(), helperclient.User, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &helperEditor{c: c}
}

type editCallFunc func(*helperclient.Client, context.Context, helperclient.EditOperation, helperclient.Approver) (*helperclient.EditResult, *helperclient.Planned, error)

func (h *helperEditor) ApplyPatch(ctx context.Context, req EditRequest, approve ApproveFunc) (*EditOutcome, error) {
	return h.do(ctx, req, approve, (*helperclient.Client).ApplyPatch)
}

func (h *helperEditor) Undo(ctx context.Context, req EditRequest, approve ApproveFunc) (*EditOutcome, error) {
	return h.do(ctx, req, approve, (*helperclient.Client).Undo)
}

func (h *helperEditor) do(ctx context.Context, req EditRequest, approve ApproveFunc, call editCallFunc) (*EditOutcome, error) {
	out := &EditOutcome{}
	res, _, err := call(h.c, ctx, helperclient.EditOperation{Workspace: req.Workspace, Cwd: req.Workspace, Mode: req.Mode, Patch: req.Patch, Turn: req.Turn},
		helperclient.ApproverFunc(func(ctx context.Context, pl *helperclient.Planned) (permission.Channel, error) {
			out.Card = &Card{Kind: "apply_patch", Title: "edit", Workspace: pl.Plan.Workspace, Paths: pl.Plan.Targets, Digest: pl.Digest, Rules: pl.Outcome.Rules}
			out.Answer, out.AskErr = approve(ctx, out.Card)
			if out.AskErr != nil || out.Answer != AnswerAccept {
				return 0, helperclient.ErrNotApproved
			}
			return permission.ChannelElicitation, nil
		}))
	switch {
	case errors.Is(err, helperclient.ErrNotApproved):
		out.NotApproved = true
		return out, nil
	case err != nil:
		return nil, err
	}
	if d := res.Denied; d != nil {
		out.Denied = &Denial{By: "helper", Rule: d.GetRule(), Reason: d.GetReason()}
		return out, nil
	}
	out.Result, out.Applied = res.ResultJSON, res.Applied
	return out, nil
}
