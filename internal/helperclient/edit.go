package helperclient

import (
	"context"
	"fmt"

	"github.com/s-code-dev/s-code/internal/helperwire"
	"github.com/s-code-dev/s-code/internal/permission"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// EditOperation is one batch of file edits to plan and apply through the user helper.
type EditOperation struct {
	// Workspace overrides the workspace root (empty: the helper resolves it from Cwd); Cwd
	// is the absolute working directory.
	Workspace, Cwd string
	Mode           permission.Mode
	// Patch is the apply_patch request (docs/patch.md), as JSON bytes.
	Patch []byte
	// Turn is the turn id the batch is recorded under (empty: the helper makes one).
	Turn string
}

// EditResult is how a batch ended: Denied (nothing written), or the file tools' JSON answer
// (the result, or the error object of a refused or partly applied batch).
type EditResult struct {
	RequestID  string
	Denied     *helperv1.Denied
	ResultJSON []byte
	Applied    bool
}

// ApplyPatch plans op (intent run) and applies it as Run does a command: a refused plan
// returns its Denied, a plan that needs approval asks approver (nil refuses with
// ErrNotApproved) and sends the approval of exactly that plan.
func (c *Client) ApplyPatch(ctx context.Context, op EditOperation, approver Approver) (*EditResult, *Planned, error) {
	resp, err := c.api.Plan(ctx, &helperv1.PlanRequest{Workspace: op.Workspace, Cwd: op.Cwd, Mode: helperwire.ModeToProto(op.Mode), Patch: op.Patch, Turn: op.Turn, Intent: helperv1.PlanIntent_PLAN_INTENT_RUN})
	if err != nil {
		return nil, nil, err
	}
	pl, denied, approval, err := c.decide(ctx, resp, approver)
	if err != nil || denied != nil {
		return denied, pl, err
	}
	r, err := c.api.ApplyPatch(ctx, &helperv1.ApplyPatchRequest{Workspace: op.Workspace, Cwd: op.Cwd, Mode: helperwire.ModeToProto(op.Mode), Patch: op.Patch, Turn: op.Turn, Approval: approval})
	if err != nil {
		return nil, pl, err
	}
	return &EditResult{RequestID: r.GetRequestId(), Denied: r.GetDenied(), ResultJSON: r.GetResultJson(), Applied: r.GetApplied()}, pl, nil
}

// Undo plans reverting turn (empty: the latest undoable turn) in op's workspace (op.Patch is
// ignored) and reverts it as ApplyPatch applies a batch: a plan that needs approval asks
// approver (nil refuses with ErrNotApproved).
func (c *Client) Undo(ctx context.Context, op EditOperation, approver Approver) (*EditResult, *Planned, error) {
	resp, err := c.api.Plan(ctx, &helperv1.PlanRequest{Workspace: op.Workspace, Cwd: op.Cwd, Mode: helperwire.ModeToProto(op.Mode), Turn: op.Turn, Undo: true, Intent: helperv1.PlanIntent_PLAN_INTENT_RUN})
	if err != nil {
		return nil, nil, err
	}
	pl, denied, approval, err := c.decide(ctx, resp, approver)
	if err != nil || denied != nil {
		return denied, pl, err
	}
	r, err := c.api.Undo(ctx, &helperv1.UndoRequest{Workspace: op.Workspace, Cwd: op.Cwd, Mode: helperwire.ModeToProto(op.Mode), Turn: pl.Plan.Turn, Approval: approval})
	if err != nil {
		return nil, pl, err
	}
	return &EditResult{RequestID: r.GetRequestId(), Denied: r.GetDenied(), ResultJSON: r.GetResultJson(), Applied: r.GetUndone()}, pl, nil
}

// decide turns a Plan answer into the Planned, a refusal (as an EditResult), or the approval
// to send (nil when the plan runs without one).
func (c *Client) decide(ctx context.Context, resp *helperv1.PlanResponse, approver Approver) (*Planned, *EditResult, *helperv1.Approval, error) {
	p, o := helperwire.PlanFromProto(resp.GetPlan())
	pl := &Planned{Plan: p, Outcome: o, Digest: resp.GetPlan().GetDigest(), Nonce: resp.GetNonce(), NonceExpiry: helperwire.Expiry(resp.GetNonceExpiresAt()), RequestID: resp.GetRequestId(), Wire: resp.GetPlan()}
	if pl.Digest != "" && p.Digest() != pl.Digest {
		return nil, nil, nil, fmt.Errorf("%w (%s)", ErrDigestMismatch, pl.Digest)
	}
	switch o.Result {
	case permission.Refused:
		rule := "safety.deny"
		if len(o.Rules) > 0 {
			rule = o.Rules[0]
		}
		return pl, &EditResult{RequestID: pl.RequestID, Denied: &helperv1.Denied{Rule: rule, Reason: o.Reason, Findings: pl.Wire.GetVerdict().GetFindings()}}, nil, nil
	case permission.NeedsApproval:
		if approver == nil {
			return pl, nil, nil, ErrNotApproved
		}
		ch, err := approver.Approve(ctx, pl)
		if err != nil {
			return pl, nil, nil, err
		}
		return pl, nil, Approval(pl, ch), nil
	}
	return pl, nil, nil, nil
}
