package audit

import "time"

// Kind names what an audit record reports.
type Kind string

// The record kinds the helpers write.
const (
	KindRequest Kind = "request" // a command request arrived (before any check)
	KindDenied  Kind = "denied"  // the helper's ShellSafety check refused it
	KindStart   Kind = "start"   // the command is about to start (written durably first)
	KindExit    Kind = "exit"    // the command ended (status or signal)
	KindRefused Kind = "refused" // the caller was not authenticated or not authorized
	KindRotate  Kind = "rotate"  // first record of a new file, linking to the old one
	KindSeal    Kind = "seal"    // a forward-secure HMAC seal over the chain so far
	KindRecover Kind = "recover" // Open cut a torn final record (left by a crash) off the newest file
	// KindCodeMode is a Code Mode program a client ran (Command holds its text) and its call
	// log (ChildCalls), as the client reported them.
	KindCodeMode Kind = "code_mode"
	// KindHostToolCall is a tool call s-code mcp forwarded to a host MCP server (Command is
	// "SERVER.TOOL", ChildCalls holds the call and its arguments), as the client reported it.
	KindHostToolCall Kind = "host_tool_call"
)

// ChildCall is one read-only tool call of a Code Mode program.
type ChildCall struct {
	Seq       uint32  `json:"seq"`
	Tool      string  `json:"tool"`
	Arguments string  `json:"arguments"` // JSON, redacted
	OK        bool    `json:"ok"`
	Error     string  `json:"error,omitempty"`
	Bytes     int64   `json:"bytes"`      // size of the result's JSON
	Duration  float64 `json:"duration_s"` // seconds
}

// Peer is the caller as the kernel reported it (peer credentials), never as it claimed.
type Peer struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	PID int32  `json:"pid"`
	Exe string `json:"exe,omitempty"` // executable path where known
}

// VerdictSummary is a ShellSafety verdict reduced to what the log keeps.
type VerdictSummary struct {
	Decision string   `json:"decision"`        // allow, ask or deny
	Rules    []string `json:"rules,omitempty"` // rule ids of the findings
}

// Approval is a person's approval as the request carried it.
type Approval struct {
	Channel   string    `json:"channel"`             // terminal, flag, elicitation, team, unset
	Digest    string    `json:"digest,omitempty"`    // the plan digest approved
	Nonce     string    `json:"nonce,omitempty"`     // the single-use nonce
	ExpiresAt time.Time `json:"expires_at,omitzero"` // when it lapses
	// Approver is the team approver who approved or denied the request (channel team):
	// another uid than the requester (the record's peer), in the policy's approvers group.
	Approver *Peer `json:"approver,omitempty"`
}

// Record is one audit record. The writer fills Seq, Time, Prev and Hash (and the fields of
// its own rotate, seal and recover records); callers fill the rest. Hash is the hex SHA-256
// over Prev and the record's canonical bytes (docs/audit.md).
//
// Prev and Hash must stay the last two fields: the canonical bytes are the JSON encoding up
// to, not including, the hash member. New fields go before Prev.
type Record struct {
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"` // UTC, RFC 3339 with nanoseconds
	Kind      Kind      `json:"kind"`
	RequestID string    `json:"request_id,omitempty"`
	Helper    string    `json:"helper,omitempty"` // "user" or "root"
	Peer      *Peer     `json:"peer,omitempty"`
	Command   string    `json:"command,omitempty"`
	Cwd       string    `json:"cwd,omitempty"`       // the plan's resolved cwd (absolute, links resolved) where there is a plan, else as asked
	Workspace string    `json:"workspace,omitempty"` // the plan's resolved workspace where there is a plan, else as asked
	// Env is, in request and denied records, the requested environment additions; in start
	// and exit records, the complete environment the command got. NAME=value, sorted;
	// values of secret-named variables and secrets found by shape redacted (internal/redact).
	Env      []string        `json:"env,omitempty"`
	Client   *VerdictSummary `json:"client_verdict,omitempty"` // what the client said it decided
	Verdict  *VerdictSummary `json:"helper_verdict,omitempty"` // the helper's own verdict
	Approved bool            `json:"approved,omitempty"`       // a person's approval of this plan was accepted (Approval says which)
	Reason   string          `json:"reason,omitempty"`
	ExitCode *int            `json:"exit_code,omitempty"`
	Signal   string          `json:"signal,omitempty"`
	Duration float64         `json:"duration_s,omitempty"` // seconds
	Stdout   int64           `json:"stdout_bytes,omitempty"`
	Stderr   int64           `json:"stderr_bytes,omitempty"`
	// Mode is the session's permission mode ("manual", "accept-edits", "workspace", or
	// "unset" for a request that named none).
	Mode string `json:"mode,omitempty"`
	// PlanDigest is the digest of the helper's plan of the operation (SHA-256 hex).
	PlanDigest string `json:"plan_digest,omitempty"`
	// Network reports whether the plan runs with network access.
	Network bool `json:"network,omitempty"`
	// ExtraWritable are the paths outside the workspace the plan makes writable for one run.
	ExtraWritable []string `json:"extra_writable,omitempty"`
	// Approval is the approval the request carried, whether or not it was accepted.
	Approval *Approval `json:"approval,omitempty"`
	// Turn is the turn id a batch of file edits is recorded under.
	Turn string `json:"turn,omitempty"`
	// Applied are the files a batch of edits wrote, "PATH@REVISION" (the new revision).
	Applied []string `json:"applied,omitempty"`
	// Quarantined lists, in an exit record, the paths the sandbox removed or quarantined
	// after the command because git would read them as configuration or indirection.
	Quarantined []string `json:"quarantined,omitempty"`
	// ChildCalls is, in a code_mode record, the program's call log in order.
	ChildCalls []ChildCall `json:"child_calls,omitempty"`
	// ChildBytes and ResultBytes are, in a code_mode record, the total size of the child
	// calls' results and the size of the returned value, in bytes of JSON.
	ChildBytes  int64 `json:"child_bytes,omitempty"`
	ResultBytes int64 `json:"result_bytes,omitempty"`

	// Written by the log itself.
	File          string  `json:"file,omitempty"`           // rotate: the previous file's name; recover: the repaired file
	PrunedThrough uint64  `json:"pruned_through,omitempty"` // rotate: retention removed every record up to this seq
	TornBytes     int64   `json:"torn_bytes,omitempty"`     // recover: bytes of the torn record that Open cut off
	SealIndex     *uint64 `json:"seal_index,omitempty"`     // seal: i, the number of seals before this one
	Seal          string  `json:"seal,omitempty"`           // seal: hex HMAC-SHA256 with key K_i (docs/audit.md)
	Prev          string  `json:"prev"`
	Hash          string  `json:"hash"`
}
