package daemon_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// TestApplyPatchThroughHelper: the user helper applies file edits as its user, governed by
// the mode (Manual asks, Accept-edits does not), refuses protected paths whatever the
// approval, ties the approval to the edit's content, and records each batch with its paths,
// revisions, turn and approval.
func TestApplyPatchThroughHelper(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the turn records
	h := startUserHelper(t)
	os.Mkdir(filepath.Join(h.ws, ".git"), 0o755)
	create := func(name, content string) []byte {
		return []byte(`{"files":[{"path":"` + name + `","expected_revision":null,"content":"` + content + `"}]}`)
	}
	op := helperclient.EditOperation{Cwd: h.ws, Mode: permission.Manual, Patch: create("notes.md", "# Notes\\n")}

	// Manual: nothing is written without a person.
	_, pl, err := h.c.ApplyPatch(context.Background(), op, nil)
	if !errors.Is(err, helperclient.ErrNotApproved) || pl.Plan.Kind != permission.KindEdit || len(pl.Plan.Targets) != 1 || pl.Plan.Targets[0] != filepath.Join(h.ws, "notes.md") {
		t.Fatalf("manual without approval: %v %+v", err, pl)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "notes.md")); err == nil {
		t.Fatal("written without approval")
	}
	res, _, err := h.c.ApplyPatch(context.Background(), op, approveAll)
	if err != nil || !res.Applied || !strings.Contains(string(res.ResultJSON), `"turn"`) {
		t.Fatalf("approved edit: %v %+v %s", err, res, res.ResultJSON)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "notes.md")); string(b) != "# Notes\n" {
		t.Fatalf("notes.md = %q", b)
	}
	// Accept-edits: a workspace edit needs nobody.
	op.Mode, op.Patch = permission.AcceptEdits, create("more.md", "x")
	if res, pl, err := h.c.ApplyPatch(context.Background(), op, nil); err != nil || !res.Applied || !pl.Outcome.ByMode {
		t.Fatalf("accept-edits: %v %+v", err, res)
	}
	// A protected path is refused in every mode, approved or not.
	for _, m := range permission.Modes {
		op.Mode, op.Patch = m, create(".git/config", "[core]")
		res, _, err := h.c.ApplyPatch(context.Background(), op, approveAll)
		if err != nil || res.Denied.GetRule() != "write.protected" {
			t.Fatalf("%v: protected edit: %v %+v", m, err, res)
		}
	}
	// The approval names the edit's content: another content with it is a mismatch.
	ctx := context.Background()
	resp, err := h.c.API().Plan(ctx, &helperv1.PlanRequest{Cwd: h.ws, Mode: helperv1.Mode_MODE_MANUAL, Patch: create("a.md", "A"), Intent: helperv1.PlanIntent_PLAN_INTENT_RUN})
	if err != nil || resp.GetNonce() == "" {
		t.Fatalf("plan: %v %v", err, resp)
	}
	approval := &helperv1.Approval{Digest: resp.GetPlan().GetDigest(), Nonce: resp.GetNonce(), Channel: helperv1.ApprovalChannel_APPROVAL_CHANNEL_TERMINAL}
	r, err := h.c.API().ApplyPatch(ctx, &helperv1.ApplyPatchRequest{Cwd: h.ws, Mode: helperv1.Mode_MODE_MANUAL, Patch: create("a.md", "B"), Approval: approval})
	if err != nil || r.GetDenied().GetRule() != "approval.mismatch" {
		t.Fatalf("other content: %v %+v", err, r)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "a.md")); err == nil {
		t.Fatal("a.md written with another edit's approval")
	}

	// Undo through the helper: Manual asks; approved, the latest turn (more.md) is reverted.
	if _, _, err := h.c.Undo(ctx, helperclient.EditOperation{Cwd: h.ws, Mode: permission.Manual}, nil); !errors.Is(err, helperclient.ErrNotApproved) {
		t.Fatalf("undo without approval: %v", err)
	}
	ures, upl, err := h.c.Undo(ctx, helperclient.EditOperation{Cwd: h.ws, Mode: permission.Manual}, approveAll)
	if err != nil || !ures.Applied || upl.Plan.Targets[0] != filepath.Join(h.ws, "more.md") {
		t.Fatalf("undo: %v %+v %+v", err, ures, upl)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "more.md")); err == nil {
		t.Fatal("more.md is still there after undo")
	}
	// A second undo of that turn is refused; the next latest is notes.md's.
	ures, _, err = h.c.Undo(ctx, helperclient.EditOperation{Cwd: h.ws, Mode: permission.AcceptEdits, Turn: upl.Plan.Turn}, nil)
	if err != nil || ures.Denied.GetRule() != "undo.no-turn" {
		t.Fatalf("second undo: %v %+v", err, ures)
	}

	// The records: each applied batch with its paths and revisions, turn, mode and approval.
	var exits, undos []audit.Record
	audit.Read(h.auditDir, audit.Filter{}, func(r *audit.Record) error {
		if r.Kind == audit.KindExit && strings.HasPrefix(r.Command, "apply_patch ") {
			exits = append(exits, *r)
		}
		if r.Kind == audit.KindExit && strings.HasPrefix(r.Command, "undo ") {
			undos = append(undos, *r)
		}
		return nil
	})
	if len(undos) != 1 || len(undos[0].Applied) != 1 || undos[0].Applied[0] != "more.md" || undos[0].Approval == nil {
		t.Fatalf("undo exit records %+v", undos)
	}
	if len(exits) != 2 || len(exits[0].Applied) != 1 || !strings.HasPrefix(exits[0].Applied[0], "notes.md@") || exits[0].Turn == "" || exits[0].Approval == nil || exits[0].Approval.Digest != exits[0].PlanDigest || exits[1].Mode != "accept-edits" || exits[1].Approval != nil {
		t.Fatalf("exit records %+v", exits)
	}
	if !strings.Contains(exits[0].Command, `"`+filepath.Join(h.ws, "notes.md")+`"`) {
		t.Errorf("target %q is not the JSON array of complete paths", exits[0].Command)
	}
}
