package helperd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/helperwire"
	"github.com/s-code-dev/s-code/internal/patch"
	"github.com/s-code-dev/s-code/internal/peerauth"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/internal/wsfs"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// editOp is the request fields that PlanRequest (with patch) and ApplyPatchRequest share.
type editOp struct {
	workspace, cwd string
	mode           helperv1.Mode
	patch          []byte
	turn           string
}

// planEdit computes the helper's plan of a batch of file edits for the peer c: the
// workspace and cwd resolved and validated as for a command, the request decoded, its
// targets (complete paths; a protected, escaping or symlinked target makes the verdict
// deny), an ask finding edit.workspace per target, the SHA-256 of the request bytes and the
// turn. It returns the open workspace root (the caller closes it) with the plan.
func (s *Server) planEdit(c peercred.Creds, op editOp) (*planned, *patch.Request, *wsfs.Root, *helperv1.Denied) {
	if !s.cfg.Edits {
		return nil, nil, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: "this helper does not apply file edits (the user helper does, as its user)"}
	}
	if len(op.patch) == 0 || len(op.patch) > patch.MaxBytes {
		return nil, nil, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: fmt.Sprintf("the edit request is empty or larger than %d bytes", patch.MaxBytes)}
	}
	if op.turn != "" {
		if err := turns.ValidID(op.turn); err != nil {
			return nil, nil, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: err.Error()}
		}
	}
	d, denial := s.resolveDirs(c, op.workspace, op.cwd)
	if denial != nil {
		return nil, nil, nil, denial
	}
	req, err := patch.Decode(op.patch)
	if err != nil {
		return nil, nil, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: "malformed edit request: " + err.Error()}
	}
	root, err := wsfs.Open(d.workspace)
	if err != nil {
		return nil, nil, nil, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: err.Error()}
	}
	v := safety.Verdict{Decision: safety.Ask}
	var targets []string
	for _, f := range req.Files {
		rel, err := root.CheckWritable(f.Path)
		if err != nil {
			rule := filetools.RuleOfCode(filetools.Code(err))
			v.Decision = safety.Deny
			v.Findings = append(v.Findings, safety.Finding{Rule: rule, Decision: safety.Deny, Command: f.Path, Message: err.Error()})
			continue
		}
		abs := root.Abs(rel)
		targets = append(targets, abs)
		v.Findings = append(v.Findings, safety.Finding{Rule: permission.RuleEditWorkspace, Decision: safety.Ask, Command: abs, Message: "This changes " + abs + " inside the workspace."})
	}
	sum := sha256.Sum256(op.patch)
	mode := modeOf(op.mode)
	plan := permission.Plan{
		Kind: permission.KindEdit, Role: s.cfg.Role.String(), Workspace: d.workspace, Cwd: d.cwd,
		Targets: targets, PatchSHA256: hex.EncodeToString(sum[:]), Turn: op.turn, Mode: mode, Verdict: v,
	}
	return &planned{plan: plan, digest: plan.Digest(), outcome: permission.Decide(mode, plan)}, req, root, nil
}

// editError is the file tools' error object (docs/patch.md), as s-code patch --json prints it.
type editError struct {
	Code        string              `json:"code"`
	Message     string              `json:"message"`
	Applied     []filetools.Applied `json:"applied"`
	Failed      string              `json:"failed,omitempty"`
	Written     bool                `json:"written,omitempty"`
	Unconfirmed []string            `json:"unconfirmed,omitempty"`
}

func modeOf(m helperv1.Mode) permission.Mode { return helperwire.ModeFromProto(m) }

// editTarget is the audit and card form of an edit's targets: the JSON array of its paths.
func editTarget(targets []string) string {
	b, _ := json.Marshal(targets)
	return "apply_patch " + string(b)
}

// ApplyPatch applies one batch of file edits: see the Helper service in helper.proto. Its
// steps follow Exec's: admit → plan → check approval → record start → apply → record exit.
func (s *Server) ApplyPatch(ctx context.Context, req *helperv1.ApplyPatchRequest) (*helperv1.ApplyPatchResponse, error) {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	s.handlers.Add(1)
	defer s.handlers.Done()
	op := editOp{workspace: req.GetWorkspace(), cwd: req.GetCwd(), mode: req.GetMode(), patch: req.GetPatch(), turn: req.GetTurn()}
	base := audit.Record{
		RequestID: newRequestID(), Helper: s.cfg.Role.String(), Peer: auditPeer(c),
		Command: "apply_patch", Cwd: op.cwd, Workspace: op.workspace, Mode: modeOf(op.mode).String(),
		Turn: op.turn, Approval: auditApproval(req.GetApproval()),
	}
	resp := &helperv1.ApplyPatchResponse{RequestId: base.RequestID}
	pl, preq, root, denial := s.planEdit(c, op)
	if root != nil {
		defer root.Close()
	}
	if denial == nil {
		base.Command, base.Cwd, base.Workspace, base.PlanDigest = editTarget(pl.plan.Targets), pl.plan.Cwd, pl.plan.Workspace, pl.digest
		denial = s.checkApproval(c, pl, req.GetApproval())
	}
	if denial != nil {
		d := base
		d.Kind = audit.KindDenied
		d.Verdict = denialSummary(denial.GetRule(), pl.verdict())
		d.Reason = denial.GetRule() + ": " + denial.GetReason()
		s.audit(ctx, &d, false)
		resp.Denied = denial
		return resp, nil
	}
	base.Approved = pl.outcome.Result == permission.NeedsApproval
	turn := op.turn
	if turn == "" {
		if turn, err = turns.NewID(); err != nil {
			return nil, status.Errorf(codes.Internal, "new turn id: %v", err)
		}
		base.Turn = turn
	}
	st := base
	st.Kind = audit.KindStart
	st.Verdict = summary(pl.verdict())
	if !s.audit(ctx, &st, true) {
		resp.Denied = &helperv1.Denied{Rule: RuleAuditUnavailable, Reason: "the helper could not write the start record durably, so nothing was written"}
		return resp, nil
	}
	stateDir, err := turns.StateDir()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "turn records: %v", err)
	}
	res, aerr := (&filetools.Applier{Root: root, Turns: turns.Open(stateDir, root.Path())}).Apply(preq, turn)
	x := base
	x.Kind = audit.KindExit
	x.Verdict = summary(pl.verdict())
	var out any = res
	if aerr != nil {
		var be *filetools.BatchError
		if errors.As(aerr, &be) {
			for _, a := range be.Applied {
				x.Applied = append(x.Applied, a.Path+"@"+a.Revision)
			}
			out = editError{Code: be.Code, Message: be.Error(), Applied: be.Applied, Failed: be.Failed, Written: be.Written, Unconfirmed: be.Unconfirmed}
		} else {
			out = editError{Code: filetools.Code(aerr), Message: aerr.Error(), Applied: []filetools.Applied{}}
		}
		x.Reason = "edit failed: " + filetools.Code(aerr) + ": " + aerr.Error()
		code := 1
		x.ExitCode = &code
	} else {
		for _, a := range res.Applied {
			x.Applied = append(x.Applied, a.Path+"@"+a.Revision)
		}
		code := 0
		x.ExitCode = &code
		resp.Applied = true
	}
	s.audit(context.WithoutCancel(ctx), &x, false)
	if resp.ResultJson, err = json.Marshal(out); err != nil {
		return nil, status.Errorf(codes.Internal, "encode result: %v", err)
	}
	return resp, nil
}
