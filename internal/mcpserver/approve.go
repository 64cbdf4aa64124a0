package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/s-code-dev/s-code/internal/tools"
)

// approvalInput is the id of the approval elicitation among a call's input requests.
const approvalInput = "approval"

// approvalTTL is how long an approval request stays answerable.
const approvalTTL = 10 * time.Minute

// approvals signs and checks the request state of approval elicitations. An approval
// travels as an MCP multi round-trip request (SEP-2322): the tool call returns an
// elicitation input request and a request state naming the card's digest, a single-use
// nonce and an expiry, signed with a key only this process holds; the client (or, for
// clients on protocol versions before 2026-07-28, the SDK on the server's side, through
// elicitation/create) asks the person and calls again with the answer and the state. The
// second call recomputes the card from its own arguments: an answer whose state is forged,
// expired, already used or for another card approves nothing.
type approvals struct {
	key  [32]byte
	mu   sync.Mutex           // guards used
	used map[string]time.Time // nonces answered, until their expiry
}

func newApprovals() (*approvals, error) {
	a := &approvals{used: map[string]time.Time{}}
	if _, err := rand.Read(a.key[:]); err != nil {
		return nil, fmt.Errorf("approval key: %w", err)
	}
	return a, nil
}

// cardDigest is the SHA-256 (hex) of the card's JSON.
func cardDigest(c *tools.Card) string {
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (a *approvals) sign(payload string) string {
	m := hmac.New(sha256.New, a.key[:])
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// state returns the signed request state for card: digest.nonce.expiry.mac.
func (a *approvals) state(card *tools.Card, now time.Time) (string, error) {
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		return "", fmt.Errorf("approval nonce: %w", err)
	}
	payload := cardDigest(card) + "." + hex.EncodeToString(n[:]) + "." + strconv.FormatInt(now.Add(approvalTTL).Unix(), 10)
	return payload + "." + a.sign(payload), nil
}

// Errors of an approval answer that approves nothing.
var (
	errForged   = errors.New("the approval's request state is not one this server signed")
	errExpired  = errors.New("the approval expired")
	errReplayed = errors.New("the approval was already used")
	errOther    = errors.New("the approval was given for another operation")
)

// check verifies state for card and uses its nonce up.
func (a *approvals) check(state string, card *tools.Card, now time.Time) error {
	parts := strings.Split(state, ".")
	if len(parts) != 4 {
		return errForged
	}
	payload := strings.Join(parts[:3], ".")
	if !hmac.Equal([]byte(a.sign(payload)), []byte(parts[3])) {
		return errForged
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return errForged
	}
	if now.Unix() > exp {
		return errExpired
	}
	if parts[0] != cardDigest(card) {
		return errOther
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for n, until := range a.used {
		if now.After(until) {
			delete(a.used, n)
		}
	}
	if _, ok := a.used[parts[1]]; ok {
		return errReplayed
	}
	a.used[parts[1]] = time.Unix(exp, 0)
	return nil
}

// elicitApprover answers tools' approval requests within one tools/call: with the answer
// the call carries (checked against its signed state), or by asking for one
// (*tools.ApprovalPending). A client without the elicitation capability gives
// AnswerUnavailable: nothing runs.
type elicitApprover struct {
	session   *mcp.ServerSession
	approvals *approvals
	responses mcp.InputResponseMap
	state     string
}

// Approve implements tools.Approver.
func (a *elicitApprover) Approve(_ context.Context, card *tools.Card) (tools.Answer, error) {
	if resp, ok := a.responses[approvalInput]; ok {
		if err := a.approvals.check(a.state, card, time.Now()); err != nil {
			return tools.AnswerUnavailable, err
		}
		res, ok := resp.(*mcp.ElicitResult)
		if !ok {
			return tools.AnswerUnavailable, fmt.Errorf("the approval answer is a %T, not an elicitation result", resp)
		}
		switch res.Action {
		case "accept":
			return tools.AnswerAccept, nil
		case "decline":
			return tools.AnswerDecline, nil
		case "cancel":
			return tools.AnswerCancel, nil
		}
		return tools.AnswerUnavailable, fmt.Errorf("unknown elicitation action %q", res.Action)
	}
	if !canElicit(a.session) {
		return tools.AnswerUnavailable, nil
	}
	return tools.AnswerUnavailable, &tools.ApprovalPending{Card: card}
}

// canElicit reports whether the session's client declared the elicitation capability.
func canElicit(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// inputRequest returns the tool result that asks the person about card.
func (a *elicitApprover) inputRequest(card *tools.Card) (*mcp.CallToolResult, error) {
	state, err := a.approvals.state(card, time.Now())
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: &mcp.ElicitParams{
			Mode:    "form",
			Message: "S-Code asks for your approval.\n\n" + card.Text() + "\nAccept runs exactly this, once. Decline runs nothing.",
			RequestedSchema: map[string]any{
				"type":       "object",
				"properties": map[string]any{},
			},
		}},
		RequestState: state,
	}, nil
}
