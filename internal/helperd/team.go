package helperd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/helperwire"
	"github.com/s-code-dev/s-code/internal/peerauth"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/sandbox"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// Rule ids of team approvals (docs/dispatch.md).
const (
	// RuleApprovalDenied: a team approver denied the request.
	RuleApprovalDenied = "approval.denied"
	// RuleApprovalTimeout: no team approver decided before the policy's timeout.
	RuleApprovalTimeout = "approval.timeout"
	// RuleNotApprover: the caller of DecideApproval is not in the approvers group, is the
	// requester, or runs sandboxed.
	RuleNotApprover = "approval.not-approver"
	// RuleNoPending: no pending request has the id.
	RuleNoPending = "approval.no-pending"
)

// pendingRequest is one request waiting for a team approver: its frozen plan, requester
// and deadline. decided receives the one decision.
type pendingRequest struct {
	id        string
	pl        *planned
	requester peercred.Creds
	created   time.Time
	expires   time.Time
	decided   chan teamDecision // buffered 1; written once, under pendingSet.mu
	done      bool
}

// teamDecision is an approver's decision.
type teamDecision struct {
	approve  bool
	approver peercred.Creds
}

// pendingSet holds the pending requests by id. It is safe for concurrent use.
type pendingSet struct {
	mu sync.Mutex
	m  map[string]*pendingRequest
}

func (p *pendingSet) add(r *pendingRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*pendingRequest{}
	}
	p.m[r.id] = r
}

func (p *pendingSet) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.m[id]; ok {
		r.done = true
		delete(p.m, id)
	}
}

// awaitTeam makes the request x pending: it tells the client (a Pending event), waits up to
// the policy's timeout for a team approver's decision, and returns the approver, or the
// denial (denied, with the approver who denied it; timed out). A client that goes away ends the wait with its context error.
func (s *Server) awaitTeam(ctx context.Context, x *execution, out *sender) (*peercred.Creds, *helperv1.Denied, error) {
	t := s.cfg.Team
	now := time.Now()
	r := &pendingRequest{id: x.base.RequestID, pl: x.pl, requester: x.c, created: now, expires: now.Add(t.Timeout), decided: make(chan teamDecision, 1)}
	s.pending.add(r)
	defer s.pending.remove(r.id)
	if err := out.send(&helperv1.ExecEvent{Event: &helperv1.ExecEvent_Pending{Pending: &helperv1.Pending{Id: r.id, ExpiresAt: timestamppb.New(r.expires), Approvers: t.Group}}}); err != nil {
		return nil, nil, err
	}
	x.log.Info("pending a team approver")
	timer := time.NewTimer(t.Timeout)
	defer timer.Stop()
	select {
	case d := <-r.decided:
		if !d.approve {
			return &d.approver, &helperv1.Denied{Rule: RuleApprovalDenied, Reason: fmt.Sprintf("uid %d of the approvers group %s denied the request", d.approver.UID, t.Group)}, nil
		}
		return &d.approver, nil, nil
	case <-timer.C:
		return nil, &helperv1.Denied{Rule: RuleApprovalTimeout, Reason: fmt.Sprintf("no one in the approvers group %s decided within %v; nothing ran", t.Group, t.Timeout)}, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// approverCheck returns nil when c may decide team approvals: the helper has an approvers
// group, c is in it, and c does not run inside an S-Code sandbox.
func (s *Server) approverCheck(c peercred.Creds) *helperv1.Denied {
	t := s.cfg.Team
	if t == nil {
		return &helperv1.Denied{Rule: RuleNotApprover, Reason: "this helper has no approvers group ([approvals] in the root helper's policy)"}
	}
	if !c.InGroup(t.GID) {
		return &helperv1.Denied{Rule: RuleNotApprover, Reason: fmt.Sprintf("uid %d is not in the approvers group %s", c.UID, t.Group)}
	}
	confined, err := sandbox.ProcessConfined(int(c.PID))
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return &helperv1.Denied{Rule: RuleNotApprover, Reason: fmt.Sprintf("cannot tell whether pid %d is sandboxed: %v", c.PID, err)}
	}
	if confined {
		return &helperv1.Denied{Rule: RuleNotApprover, Reason: fmt.Sprintf("pid %d runs inside an S-Code sandbox; a sandboxed command cannot approve", c.PID)}
	}
	return nil
}

// ListApprovals lists the pending requests: see the Helper service in helper.proto.
func (s *Server) ListApprovals(ctx context.Context, req *helperv1.ListApprovalsRequest) (*helperv1.ListApprovalsResponse, error) {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	if d := s.approverCheck(c); d != nil {
		return nil, status.Error(codes.PermissionDenied, d.GetRule()+": "+d.GetReason())
	}
	s.pending.mu.Lock()
	defer s.pending.mu.Unlock()
	resp := &helperv1.ListApprovalsResponse{}
	for _, r := range s.pending.m {
		if req.GetId() != "" && r.id != req.GetId() {
			continue
		}
		p := helperwire.PlanToProto(r.pl.plan, r.pl.outcome)
		p.Digest = r.pl.digest
		resp.Pending = append(resp.Pending, &helperv1.PendingApproval{
			Id: r.id, Plan: p, RequesterUid: r.requester.UID, RequesterPid: r.requester.PID,
			CreatedAt: timestamppb.New(r.created), ExpiresAt: timestamppb.New(r.expires),
		})
	}
	sort.Slice(resp.Pending, func(i, j int) bool {
		return resp.Pending[i].GetCreatedAt().AsTime().Before(resp.Pending[j].GetCreatedAt().AsTime())
	})
	return resp, nil
}

// DecideApproval approves or denies one pending request: see the Helper service in
// helper.proto. A refused decision is in the audit log as a denied record.
func (s *Server) DecideApproval(ctx context.Context, req *helperv1.DecideApprovalRequest) (*helperv1.DecideApprovalResponse, error) {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	verb := "deny"
	if req.GetApprove() {
		verb = "approve"
	}
	refuse := func(d *helperv1.Denied) (*helperv1.DecideApprovalResponse, error) {
		r := audit.Record{RequestID: newRequestID(), Helper: s.cfg.Role.String(), Peer: auditPeer(c), Kind: audit.KindDenied,
			Command: "approvals " + verb + " " + req.GetId(), Reason: d.GetRule() + ": " + d.GetReason(),
			Verdict: denialSummary(d.GetRule(), nil)}
		s.audit(ctx, &r, false)
		return &helperv1.DecideApprovalResponse{Denied: d}, nil
	}
	if d := s.approverCheck(c); d != nil {
		return refuse(d)
	}
	s.pending.mu.Lock()
	r, ok := s.pending.m[req.GetId()]
	switch {
	case !ok || r.done:
		s.pending.mu.Unlock()
		return refuse(&helperv1.Denied{Rule: RuleNoPending, Reason: fmt.Sprintf("no pending request %q (decided, timed out, or its requester left)", req.GetId())})
	case r.requester.UID == c.UID:
		s.pending.mu.Unlock()
		return refuse(&helperv1.Denied{Rule: RuleNotApprover, Reason: fmt.Sprintf("uid %d made request %s and cannot decide it; another person in the approvers group must", c.UID, r.id)})
	}
	r.done = true
	r.decided <- teamDecision{approve: req.GetApprove(), approver: c}
	s.pending.mu.Unlock()
	return &helperv1.DecideApprovalResponse{}, nil
}
