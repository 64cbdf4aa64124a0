package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/tools"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	processesv1 "github.com/s-code-dev/s-code/proto/scode/processes/v1"
	"github.com/s-code-dev/s-code/safety"
)

// helperExec runs commands through the user helper over one long-lived connection per
// session, dialled on first use and again after the helper went away.
type helperExec struct {
	socket string
	mu     sync.Mutex // guards client
	client *helperclient.Client
}

func (h *helperExec) conn(ctx context.Context) (*helperclient.Client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client != nil {
		return h.client, nil
	}
	socket := h.socket
	if socket == "" {
		var err error
		if socket, err = helperclient.DefaultSocket(helperclient.User); err != nil {
			return nil, err
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := helperclient.Dial(dctx, helperclient.User, socket)
	if err != nil {
		return nil, err
	}
	h.client = c
	return c, nil
}

func (h *helperExec) drop(c *helperclient.Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client == c {
		h.client.Close()
		h.client = nil
	}
}

func (h *helperExec) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client != nil {
		h.client.Close()
		h.client = nil
	}
}

// Exec implements tools.Executor on the helper's Plan RPC: helperclient.Run plans the
// operation (the helper resolves and validates the workspace, judges the command in its own
// context, computes the sandbox profile and applies the mode), records a refusal, and asks
// the approver only for a plan that needs a person. The card shown is built from that plan;
// an accepted card becomes the Approval of exactly that plan's digest with the helper's
// single-use nonce (channel elicitation).
func (h *helperExec) Exec(ctx context.Context, req tools.ExecRequest, approve tools.ApproveFunc, stdout, stderr io.Writer) (*tools.ExecOutcome, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return nil, err
	}
	v := req.Verdict
	op := helperclient.Operation{
		Command: req.Command, Shell: req.Shell, Workspace: req.Workspace, Cwd: req.Cwd,
		Env: helperclient.ForwardedEnv(os.Environ()), Timeout: req.Timeout, Mode: req.Mode,
		Network: req.Network, Path: os.Getenv("PATH"), ClientVerdict: &v,
	}
	out := &tools.ExecOutcome{}
	approver := helperclient.ApproverFunc(func(ctx context.Context, pl *helperclient.Planned) (permission.Channel, error) {
		out.Card = planCard(pl)
		out.Answer, out.AskErr = approve(ctx, out.Card)
		if out.AskErr != nil {
			return 0, out.AskErr
		}
		if out.Answer != tools.AnswerAccept {
			return 0, helperclient.ErrNotApproved
		}
		return permission.ChannelElicitation, nil
	})
	res, pl, err := c.Run(ctx, op, approver, helperclient.Streams{Stdout: stdout, Stderr: stderr})
	var pending *tools.ApprovalPending
	switch {
	case errors.As(err, &pending):
		return nil, err
	case errors.Is(err, helperclient.ErrNotApproved) || out.AskErr != nil && pl != nil:
		out.NotApproved = true
		if out.Card == nil && pl != nil {
			out.Card = planCard(pl)
		}
		if pl != nil {
			out.RequestID = pl.RequestID
		}
		return out, nil
	case err != nil:
		if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
			h.drop(c)
			return nil, fmt.Errorf("lost the connection to the user helper (%s); its exit status is unknown: see audit_query", st.Message())
		}
		if st, ok := status.FromError(err); ok && st.Code() == codes.PermissionDenied {
			return &tools.ExecOutcome{Denied: &tools.Denial{By: "helper", Rule: "helper.peer", Reason: st.Message()}, ExitStatus: tools.ExitDenied}, nil
		}
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, fmt.Errorf("user helper: %w", err)
	}
	if pl != nil && out.Card == nil {
		out.Card = planCard(pl)
	}
	out.RequestID = res.RequestID
	out.ExitStatus = res.Status()
	if d := res.Denied; d != nil {
		by := "helper"
		if v.Decision != safety.Allow && v.Decision != safety.Ask {
			by = "shellsafety"
		}
		out.Denied = &tools.Denial{By: by, Rule: d.GetRule(), Reason: d.GetReason()}
		out.ExitStatus = tools.ExitDenied
		return out, nil
	}
	out.TimedOut = res.Exited.GetTimedOut()
	out.Duration = res.Exited.GetDuration().AsDuration()
	return out, nil
}

// recordCodeMode sends r to the user helper's RecordCodeMode (the audit log is the helper's).
func (h *helperExec) recordCodeMode(ctx context.Context, r *helperv1.CodeModeRecord) (*helperv1.CodeModeRecorded, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := c.API().RecordCodeMode(ctx, r)
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
		h.drop(c)
	}
	return rec, err
}

// planCard is the approval card of the helper's plan pl: what will run, where, in which
// sandbox, with which network, what needs the approval, and the plan's digest.
func planCard(pl *helperclient.Planned) *tools.Card {
	p := pl.Plan
	return &tools.Card{
		Kind: "exec_command", Title: "Run a command in the workspace",
		Command: p.Command, Shell: p.Shell, Workspace: p.Workspace, Cwd: p.Cwd, Network: p.Network, Mode: p.Mode.String(),
		Findings: p.Verdict.Findings, Sandbox: tools.SandboxSummaryOf(p.Sandbox),
		Digest: pl.Digest, Rules: pl.Outcome.Rules, Reason: pl.Outcome.Reason,
	}
}

// ApplyPatch implements tools.Editor on the helper's Plan and ApplyPatch RPCs: the helper
// plans the batch (resolves the workspace, checks every target, applies the mode), and a
// plan that needs a person is shown as the card of that plan; an accepted card becomes the
// Approval of exactly that plan's digest with the helper's single-use nonce (channel
// elicitation). The helper applies the batch and records it (paths and revisions, turn,
// approval).
func (h *helperExec) ApplyPatch(ctx context.Context, req tools.EditRequest, approve tools.ApproveFunc) (*tools.EditOutcome, error) {
	return h.edit(ctx, req, approve, (*helperclient.Client).ApplyPatch)
}

// Undo implements tools.Editor on the helper's Plan and Undo RPCs, as ApplyPatch does.
func (h *helperExec) Undo(ctx context.Context, req tools.EditRequest, approve tools.ApproveFunc) (*tools.EditOutcome, error) {
	return h.edit(ctx, req, approve, (*helperclient.Client).Undo)
}

type editCall func(*helperclient.Client, context.Context, helperclient.EditOperation, helperclient.Approver) (*helperclient.EditResult, *helperclient.Planned, error)

func (h *helperExec) edit(ctx context.Context, req tools.EditRequest, approve tools.ApproveFunc, call editCall) (*tools.EditOutcome, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return nil, err
	}
	op := helperclient.EditOperation{Workspace: req.Workspace, Cwd: req.Workspace, Mode: req.Mode, Patch: req.Patch, Turn: req.Turn}
	out := &tools.EditOutcome{}
	approver := helperclient.ApproverFunc(func(ctx context.Context, pl *helperclient.Planned) (permission.Channel, error) {
		out.Card = editCard(pl)
		out.Answer, out.AskErr = approve(ctx, out.Card)
		if out.AskErr != nil {
			return 0, out.AskErr
		}
		if out.Answer != tools.AnswerAccept {
			return 0, helperclient.ErrNotApproved
		}
		return permission.ChannelElicitation, nil
	})
	res, pl, err := call(c, ctx, op, approver)
	var pending *tools.ApprovalPending
	switch {
	case errors.As(err, &pending):
		return nil, err
	case errors.Is(err, helperclient.ErrNotApproved) || out.AskErr != nil && pl != nil:
		out.NotApproved = true
		if out.Card == nil && pl != nil {
			out.Card = editCard(pl)
		}
		if pl != nil {
			out.RequestID = pl.RequestID
		}
		return out, nil
	case err != nil:
		if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
			h.drop(c)
			return nil, fmt.Errorf("lost the connection to the user helper (%s); whether the edit was applied is unknown: see audit_query", st.Message())
		}
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, fmt.Errorf("user helper: %w", err)
	}
	if pl != nil && out.Card == nil {
		out.Card = editCard(pl)
	}
	out.RequestID = res.RequestID
	if d := res.Denied; d != nil {
		reason := d.GetReason()
		for _, f := range d.GetFindings() {
			if f.GetDecision() == helperv1.Decision_DECISION_DENY && f.GetMessage() != "" {
				reason = f.GetMessage()
				break
			}
		}
		out.Denied = &tools.Denial{By: "helper", Rule: d.GetRule(), Reason: reason}
		return out, nil
	}
	out.Result, out.Applied = res.ResultJSON, res.Applied
	return out, nil
}

// editCard is the approval card of the helper's plan pl of a batch of edits or an undo: the
// complete paths it changes, the SHA-256 of the batch, the workspace, the mode, what needs
// the approval and the plan's digest.
func editCard(pl *helperclient.Planned) *tools.Card {
	p := pl.Plan
	kind, title := "apply_patch", fmt.Sprintf("Apply a patch to %d file(s)", len(p.Targets))
	if p.PatchSHA256 == "" {
		kind, title = "undo_turn", "Undo turn "+p.Turn
	}
	return &tools.Card{
		Kind: kind, Title: title, Workspace: p.Workspace, Mode: p.Mode.String(),
		Paths: p.Targets, Batch: p.PatchSHA256, Findings: p.Verdict.Findings,
		Digest: pl.Digest, Rules: pl.Outcome.Rules, Reason: pl.Outcome.Reason,
	}
}

// recordHostToolCall sends r to the user helper's RecordHostToolCall (the audit log is the
// helper's).
func (h *helperExec) recordHostToolCall(ctx context.Context, r *helperv1.HostToolCall) (*helperv1.CodeModeRecorded, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return nil, err
	}
	rec, err := c.API().RecordHostToolCall(ctx, r)
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
		h.drop(c)
	}
	return rec, err
}

// preCall asks the user helper's Processes.PreCall about a call of tool (PreCallFunc).
func (h *helperExec) preCall(ctx context.Context, tool string, input json.RawMessage) (string, string, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return "", "", err
	}
	r, err := c.Processes().PreCall(ctx, &processesv1.PreCallRequest{Tool: tool, Input: string(input)})
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
		h.drop(c)
	}
	if err != nil {
		return "", "", err
	}
	return r.GetDecision(), r.GetReason(), nil
}

// processes returns the user helper's Processes client (ProcessesFunc).
func (h *helperExec) processes(ctx context.Context) (processesv1.ProcessesClient, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return nil, err
	}
	return c.Processes(), nil
}
