package permission

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// Channel is where a person's approval came from.
type Channel int

// The approval channels. The zero value is unset and never approves.
const (
	ChannelUnset Channel = iota
	// ChannelTerminal: a person answered the prompt on a terminal.
	ChannelTerminal
	// ChannelFlag: --yes on the command line (automation).
	ChannelFlag
	// ChannelElicitation: an MCP elicitation answered by the person.
	ChannelElicitation
	// ChannelTeam: a team approver of the root helper.
	ChannelTeam
)

// String returns "terminal", "flag", "elicitation", "team" or "unset".
func (c Channel) String() string {
	switch c {
	case ChannelTerminal:
		return "terminal"
	case ChannelFlag:
		return "flag"
	case ChannelElicitation:
		return "elicitation"
	case ChannelTeam:
		return "team"
	}
	return "unset"
}

// DefaultTTL is how long an approval stays valid after its plan was issued.
const DefaultTTL = 5 * time.Minute

// Approval is a person's approval of one plan: its digest, the single-use nonce the helper
// issued with it, when it lapses, and where it came from.
type Approval struct {
	Digest  string
	Nonce   string
	Expiry  time.Time
	Channel Channel
}

// Error is a refused approval (or another permission refusal): a rule id and one line.
type Error struct {
	Rule   string
	Reason string
}

// Error returns "RULE: REASON".
func (e *Error) Error() string { return e.Rule + ": " + e.Reason }

// Nonces issues and redeems the single-use nonces of plans that need approval. It is safe
// for concurrent use. A nonce is bound to the plan digest and the uid it was issued to; it
// can be redeemed once, before its expiry.
type Nonces struct {
	ttl time.Duration
	max int

	mu     sync.Mutex // guards issued
	issued map[string]*issued
}

type issued struct {
	digest  string
	uid     uint32
	expires time.Time
	used    bool
}

// NewNonces returns a nonce store whose nonces live ttl (0: DefaultTTL) and which holds at
// most max of them (0: 4096); beyond that, of the uid holding the most, the one closest to
// expiry is forgotten first.
func NewNonces(ttl time.Duration, max int) *Nonces {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if max <= 0 {
		max = 4096
	}
	return &Nonces{ttl: ttl, max: max, issued: map[string]*issued{}}
}

// TTL returns how long a nonce lives.
func (n *Nonces) TTL() time.Duration { return n.ttl }

// Issue returns a fresh nonce (32 hex digits) for the plan digest issued to uid at now, and
// the latest expiry an approval with it may have.
func (n *Nonces) Issue(digest string, uid uint32, now time.Time) (string, time.Time) {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	nonce := hex.EncodeToString(b[:])
	exp := now.Add(n.ttl)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pruneLocked(now)
	if len(n.issued) >= n.max {
		// Forget a nonce of the uid that holds the most, so that one caller issuing plans
		// in a loop (the root helper admits several users) forgets its own approvals,
		// never another uid's pending one.
		held := map[uint32]int{}
		for _, e := range n.issued {
			held[e.uid]++
		}
		var oldest string
		for k, e := range n.issued {
			if oldest == "" {
				oldest = k
				continue
			}
			o := n.issued[oldest]
			if held[e.uid] > held[o.uid] || held[e.uid] == held[o.uid] && e.expires.Before(o.expires) {
				oldest = k
			}
		}
		delete(n.issued, oldest)
	}
	n.issued[nonce] = &issued{digest: digest, uid: uid, expires: exp}
	return nonce, exp
}

func (n *Nonces) pruneLocked(now time.Time) {
	for k, e := range n.issued {
		if now.After(e.expires) {
			delete(n.issued, k)
		}
	}
}

// Redeem checks approval a for the plan whose recomputed digest is digest, from uid at now,
// and uses its nonce up (also when the check fails, so a refused approval cannot be retried
// with variants). It returns nil, or an *Error with rule approval.invalid (no digest,
// nonce or channel), approval.unknown (the nonce was not issued to uid, or has been
// forgotten), approval.replayed (used before), approval.mismatch (a, or the plan it was
// issued for, has another digest) or approval.expired (past a.Expiry or the nonce's own
// expiry).
func (n *Nonces) Redeem(a Approval, digest string, uid uint32, now time.Time) error {
	if a.Digest == "" || a.Nonce == "" || a.Channel == ChannelUnset {
		return &Error{RuleApprovalInvalid, "the approval lacks a digest, a nonce or a channel"}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	e, ok := n.issued[a.Nonce]
	if !ok || e.uid != uid {
		return &Error{RuleApprovalUnknown, "the approval's nonce was not issued by this helper to this caller, or it has lapsed; ask for a new plan"}
	}
	if e.used {
		return &Error{RuleApprovalReplayed, "the approval was used before: one approval authorizes one operation"}
	}
	e.used = true
	if a.Digest != e.digest || a.Digest != digest {
		return &Error{RuleApprovalMismatch, fmt.Sprintf("the approval is for plan %.12s…, but this operation's plan is %.12s…: what was approved is not what was sent", a.Digest, digest)}
	}
	exp := e.expires
	if !a.Expiry.IsZero() && a.Expiry.Before(exp) {
		exp = a.Expiry
	}
	if now.After(exp) {
		return &Error{RuleApprovalExpired, "the approval expired at " + exp.UTC().Format(time.RFC3339) + "; ask again"}
	}
	return nil
}
