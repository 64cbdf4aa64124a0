package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/tools"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
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

// applyApproval puts the person's answer into the start message. It is the one place that
// says how an approval travels to the helper: today the ExecStart.approved flags, set only
// for an accepted elicitation; the helper's Plan RPC and Approval message (digest, nonce,
// expiry, channel) replace it when the decisions work lands.
func applyApproval(start *helperv1.ExecStart, req tools.ExecRequest) {
	if req.Answer != tools.AnswerAccept {
		return
	}
	start.Approved = true
	start.ApprovedNetwork = req.Network
}

// Exec implements tools.Executor.
func (h *helperExec) Exec(ctx context.Context, req tools.ExecRequest, stdout, stderr io.Writer) (*tools.ExecOutcome, error) {
	c, err := h.conn(ctx)
	if err != nil {
		return nil, err
	}
	rules := make([]string, 0, len(req.Verdict.Findings))
	for _, f := range req.Verdict.Findings {
		rules = append(rules, f.Rule)
	}
	shell := helperv1.Shell_SHELL_BASH
	if req.Shell == "sh" {
		shell = helperv1.Shell_SHELL_SH
	}
	start := &helperv1.ExecStart{
		Command:       req.Command,
		Shell:         shell,
		Workspace:     req.Workspace,
		Cwd:           req.Cwd,
		Env:           helperclient.ForwardedEnv(os.Environ()),
		TimeoutMs:     uint32(req.Timeout / time.Millisecond),
		ClientVerdict: &helperv1.ClientVerdict{Decision: decisionProto(req.Verdict.Decision), Rules: rules},
	}
	applyApproval(start, req)
	res, err := c.Exec(ctx, start, helperclient.Streams{Stdout: stdout, Stderr: stderr})
	if err != nil {
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
	out := &tools.ExecOutcome{RequestID: res.RequestID, ExitStatus: res.Status()}
	if d := res.Denied; d != nil {
		out.Denied = &tools.Denial{By: "helper", Rule: d.GetRule(), Reason: d.GetReason()}
		out.ExitStatus = tools.ExitDenied
		return out, nil
	}
	out.TimedOut = res.Exited.GetTimedOut()
	out.Duration = res.Exited.GetDuration().AsDuration()
	return out, nil
}

func decisionProto(d safety.Decision) helperv1.Decision {
	switch d {
	case safety.Allow:
		return helperv1.Decision_DECISION_ALLOW
	case safety.Ask:
		return helperv1.Decision_DECISION_ASK
	}
	return helperv1.Decision_DECISION_DENY
}
