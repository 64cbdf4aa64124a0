package helperd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/peerauth"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/internal/wsfs"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// RuleUndoNoTurn is the rule id of an undo with no turn to revert.
const RuleUndoNoTurn = "undo.no-turn"

// planUndo computes the helper's plan of reverting a turn for the peer c: the workspace
// and cwd resolved and validated as for a command, the turn's record (the latest undoable
// one when op.turn is empty), its files as targets with an edit.workspace ask each, and the
// command "undo TURN" so that the plan is never an apply's. It returns the open root and the
// turn store with the plan (the caller closes the root).
func (s *Server) planUndo(c peercred.Creds, op editOp) (*planned, *wsfs.Root, *turns.Store, *helperv1.Denied) {
	if !s.cfg.Edits {
		return nil, nil, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: "this helper does not undo file edits (the user helper does, as its user)"}
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
	root, err := wsfs.Open(d.workspace)
	if err != nil {
		return nil, nil, nil, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: err.Error()}
	}
	stateDir, err := turns.StateDir()
	if err != nil {
		root.Close()
		return nil, nil, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: err.Error()}
	}
	store := turns.Open(stateDir, root.Path())
	var rec *turns.Record
	if op.turn == "" {
		rec, err = store.Latest()
	} else {
		rec, err = store.Load(op.turn)
	}
	if err == nil && rec.Undone {
		err = fmt.Errorf("turn %q was already undone: %w", rec.Turn, turns.ErrNoTurn)
	}
	if err != nil {
		root.Close()
		return nil, nil, nil, &helperv1.Denied{Rule: RuleUndoNoTurn, Reason: err.Error()}
	}
	v := safety.Verdict{Decision: safety.Ask}
	var targets []string
	for _, f := range rec.Files {
		abs := root.Abs(f.Path)
		targets = append(targets, abs)
		v.Findings = append(v.Findings, safety.Finding{Rule: permission.RuleEditWorkspace, Decision: safety.Ask, Command: abs, Message: "Undo changes " + abs + " back."})
	}
	mode := modeOf(op.mode)
	plan := permission.Plan{
		Kind: permission.KindEdit, Role: s.cfg.Role.String(), Workspace: d.workspace, Cwd: d.cwd,
		Command: "undo " + rec.Turn, Targets: targets, Turn: rec.Turn, Mode: mode, Verdict: v,
	}
	return &planned{plan: plan, digest: plan.Digest(), outcome: permission.Decide(mode, plan)}, root, store, nil
}

// partlyUndone is the answer of a turn undone in part: what was restored, deleted and left
// alone, with the error saying not every file is back.
type partlyUndone struct {
	*filetools.UndoResult
	Error *editError `json:"error,omitempty"`
}

// Undo reverts one turn of file edits: see the Helper service in helper.proto. Its steps
// follow ApplyPatch's.
func (s *Server) Undo(ctx context.Context, req *helperv1.UndoRequest) (*helperv1.UndoResponse, error) {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	s.handlers.Add(1)
	defer s.handlers.Done()
	op := editOp{workspace: req.GetWorkspace(), cwd: req.GetCwd(), mode: req.GetMode(), turn: req.GetTurn()}
	base := audit.Record{
		RequestID: newRequestID(), Helper: s.cfg.Role.String(), Peer: auditPeer(c),
		Command: "undo", Cwd: op.cwd, Workspace: op.workspace, Mode: modeOf(op.mode).String(),
		Turn: op.turn, Approval: auditApproval(req.GetApproval()),
	}
	resp := &helperv1.UndoResponse{RequestId: base.RequestID}
	pl, root, store, denial := s.planUndo(c, op)
	if root != nil {
		defer root.Close()
	}
	if denial == nil {
		base.Command, base.Cwd, base.Workspace, base.PlanDigest, base.Turn = pl.plan.Command, pl.plan.Cwd, pl.plan.Workspace, pl.digest, pl.plan.Turn
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
	st := base
	st.Kind = audit.KindStart
	st.Verdict = summary(pl.verdict())
	if !s.audit(ctx, &st, true) {
		resp.Denied = &helperv1.Denied{Rule: RuleAuditUnavailable, Reason: "the helper could not write the start record durably, so nothing was changed"}
		return resp, nil
	}
	res, uerr := filetools.Undo(root, store, pl.plan.Turn)
	x := base
	x.Kind = audit.KindExit
	x.Verdict = summary(pl.verdict())
	var out any = res
	code := 0
	if res != nil {
		x.Applied = append(append([]string{}, res.Restored...), res.Deleted...)
	}
	if uerr != nil {
		code = 1
		x.Reason = "undo failed: " + filetools.Code(uerr) + ": " + uerr.Error()
		e := editError{Code: filetools.Code(uerr), Message: uerr.Error(), Applied: []filetools.Applied{}}
		out = e
		if res != nil && errors.Is(uerr, filetools.ErrNotUndone) {
			// Partly undone: the result with its error, as s-code undo --json prints it.
			out = partlyUndone{UndoResult: res, Error: &e}
		}
	} else {
		resp.Undone = true
	}
	x.ExitCode = &code
	s.audit(context.WithoutCancel(ctx), &x, false)
	if resp.ResultJson, err = json.Marshal(out); err != nil {
		return nil, status.Errorf(codes.Internal, "encode result: %v", err)
	}
	return resp, nil
}
