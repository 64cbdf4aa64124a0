package helperclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/s-code-dev/s-code/internal/helperwire"
	"github.com/s-code-dev/s-code/internal/permission"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// Operation is one shell command to plan and run through a helper: the fields PlanRequest
// and ExecStart share.
type Operation struct {
	// Command is the shell command text; Shell is "bash" (default) or "sh".
	Command string
	Shell   string
	// Workspace overrides the workspace root (empty: the helper resolves it from Cwd); Cwd
	// is the absolute working directory.
	Workspace, Cwd string
	// Env holds requested environment additions.
	Env map[string]string
	// Timeout is the run time limit (0: the helper's default), sent in milliseconds.
	Timeout time.Duration
	// Mode is the session's permission mode; the helper refuses ModeUnset.
	Mode permission.Mode
	// Network asks for network access for this one command (it then needs approval).
	Network bool
	// ExtraWritable asks for absolute directories outside the workspace to be writable for
	// this one run (it then needs approval).
	ExtraWritable []string
	// Path is the caller's PATH (the helper keeps only its safe entries).
	Path string
	// ClientVerdict is the client's own pre-filter verdict, recorded by the helper (a deny
	// there makes Run record the refusal and send nothing); nil when the client did not
	// judge.
	ClientVerdict *safety.Verdict
}

func (o Operation) clientVerdict() *helperv1.ClientVerdict {
	if o.ClientVerdict == nil {
		return nil
	}
	rules := make([]string, 0, len(o.ClientVerdict.Findings))
	for _, f := range o.ClientVerdict.Findings {
		rules = append(rules, f.Rule)
	}
	return &helperv1.ClientVerdict{Decision: helperwire.DecisionToProto(o.ClientVerdict.Decision), Rules: rules}
}

// PlanRequest returns the Plan request of o with intent.
func (o Operation) PlanRequest(intent helperv1.PlanIntent) *helperv1.PlanRequest {
	return &helperv1.PlanRequest{
		Command: o.Command, Shell: helperwire.ShellToProto(o.Shell), Workspace: o.Workspace, Cwd: o.Cwd,
		Env: maps.Clone(o.Env), TimeoutMs: uint32(o.Timeout / time.Millisecond), ClientVerdict: o.clientVerdict(),
		Mode: helperwire.ModeToProto(o.Mode), Network: o.Network, ExtraWritable: o.ExtraWritable, Path: o.Path,
		Intent: intent,
	}
}

// ExecStart returns the start message of o carrying approval (nil: none).
func (o Operation) ExecStart(approval *helperv1.Approval) *helperv1.ExecStart {
	return &helperv1.ExecStart{
		Command: o.Command, Shell: helperwire.ShellToProto(o.Shell), Workspace: o.Workspace, Cwd: o.Cwd,
		Env: maps.Clone(o.Env), TimeoutMs: uint32(o.Timeout / time.Millisecond), ClientVerdict: o.clientVerdict(),
		Mode: helperwire.ModeToProto(o.Mode), Network: o.Network, ExtraWritable: o.ExtraWritable, Path: o.Path,
		Approval: approval,
	}
}

// Planned is a helper's plan of one operation.
type Planned struct {
	// Plan is the helper's projection and Outcome what its mode makes of it.
	Plan    permission.Plan
	Outcome permission.Outcome
	// Digest is the plan's digest as the helper sent it.
	Digest string
	// Nonce and NonceExpiry are set when the plan needs approval (intent run).
	Nonce       string
	NonceExpiry time.Time
	// RequestID names the denied audit record the helper wrote for a refused plan.
	RequestID string
	// Wire is the plan as it came.
	Wire *helperv1.Plan
}

// ErrDigestMismatch means the plan a helper sent does not hash to the digest it sent with
// it: the card would not show what the digest approves.
var ErrDigestMismatch = errors.New("the helper's plan does not match its digest")

// Plan asks the helper for its plan of op. With intent PLAN_INTENT_RUN the helper records a
// refused plan and issues a nonce for one that needs approval. It fails with
// ErrDigestMismatch when the plan does not hash to its digest (a refused plan that could not
// be made has no digest and is returned as it is).
func (c *Client) Plan(ctx context.Context, op Operation, intent helperv1.PlanIntent) (*Planned, error) {
	resp, err := c.api.Plan(ctx, op.PlanRequest(intent))
	if err != nil {
		return nil, err
	}
	p, o := helperwire.PlanFromProto(resp.GetPlan())
	pl := &Planned{Plan: p, Outcome: o, Digest: resp.GetPlan().GetDigest(), Nonce: resp.GetNonce(), NonceExpiry: helperwire.Expiry(resp.GetNonceExpiresAt()), RequestID: resp.GetRequestId(), Wire: resp.GetPlan()}
	if pl.Digest != "" && p.Digest() != pl.Digest {
		return nil, fmt.Errorf("%w (%s)", ErrDigestMismatch, pl.Digest)
	}
	return pl, nil
}

// Approver asks a person whether plan p may run. It returns the channel the approval came
// from, or an error (ErrNotApproved when the person said no).
type Approver interface {
	Approve(ctx context.Context, p *Planned) (permission.Channel, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, p *Planned) (permission.Channel, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, p *Planned) (permission.Channel, error) {
	return f(ctx, p)
}

// ErrNotApproved is returned by an Approver when the person did not approve.
var ErrNotApproved = errors.New("not approved: nothing was run")

// Approval returns the approval of plan p from channel: its digest and nonce, expiring at
// the nonce's expiry or after permission.DefaultTTL, whichever comes first.
func Approval(p *Planned, channel permission.Channel) *helperv1.Approval {
	exp := time.Now().Add(permission.DefaultTTL)
	if !p.NonceExpiry.IsZero() && p.NonceExpiry.Before(exp) {
		exp = p.NonceExpiry
	}
	return helperwire.ApprovalToProto(permission.Approval{Digest: p.Digest, Nonce: p.Nonce, Expiry: exp, Channel: channel})
}

// Run plans op (intent run) and acts on the helper's outcome: a refused plan returns a
// Result whose Denied names the rule (the helper has recorded it); a plan that needs
// approval asks approver (nil refuses) and sends the approval of exactly that plan; a plan
// that runs is sent without one. A client verdict of deny in op is recorded and nothing is
// sent. The Planned is returned with the Result whenever the helper answered.
func (c *Client) Run(ctx context.Context, op Operation, approver Approver, s Streams) (*Result, *Planned, error) {
	pl, err := c.Plan(ctx, op, helperv1.PlanIntent_PLAN_INTENT_RUN)
	if err != nil {
		return nil, nil, err
	}
	if op.ClientVerdict != nil && op.ClientVerdict.Decision == safety.Deny {
		rule, reason := "client.deny", "refused by the client's own check"
		for _, f := range op.ClientVerdict.Findings {
			if f.Decision == safety.Deny {
				rule, reason = f.Rule, f.Message
				break
			}
		}
		return &Result{RequestID: pl.RequestID, Denied: &helperv1.Denied{Rule: rule, Reason: reason}}, pl, nil
	}
	var approval *helperv1.Approval
	switch pl.Outcome.Result {
	case permission.Refused:
		rule := "safety.deny"
		if len(pl.Outcome.Rules) > 0 {
			rule = pl.Outcome.Rules[0]
		}
		return &Result{RequestID: pl.RequestID, Denied: &helperv1.Denied{Rule: rule, Reason: pl.Outcome.Reason, Findings: pl.Wire.GetVerdict().GetFindings()}}, pl, nil
	case permission.NeedsApproval:
		if approver == nil {
			return nil, pl, ErrNotApproved
		}
		ch, err := approver.Approve(ctx, pl)
		if err != nil {
			return nil, pl, err
		}
		approval = Approval(pl, ch)
	}
	res, err := c.Exec(ctx, op.ExecStart(approval), s)
	return res, pl, err
}
