package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/redact"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/safety"
)

// Answer is a person's answer to an approval request.
type Answer int

// The answers. The zero value is AnswerUnavailable: nobody could be asked, so nothing runs.
const (
	AnswerUnavailable Answer = iota // no approval channel (the client cannot elicit)
	AnswerAccept                    // the person approved this one operation
	AnswerDecline                   // the person refused
	AnswerCancel                    // the person dismissed the request without choosing
)

// String returns "unavailable", "accept", "decline" or "cancel".
func (a Answer) String() string {
	switch a {
	case AnswerAccept:
		return "accept"
	case AnswerDecline:
		return "decline"
	case AnswerCancel:
		return "cancel"
	}
	return "unavailable"
}

// Card is the approval card a person is shown: what will run, where, with which sandbox
// profile, filesystem scope and network, and the findings that made it need approval.
type Card struct {
	Kind      string           `json:"kind"` // "exec_command", "apply_patch" or "undo_turn"
	Title     string           `json:"title"`
	Command   string           `json:"command,omitempty"`
	Shell     string           `json:"shell,omitempty"`
	Workspace string           `json:"workspace"`
	Cwd       string           `json:"cwd,omitempty"`
	Network   bool             `json:"network"`
	Mode      string           `json:"mode"`
	Paths     []string         `json:"paths,omitempty"`        // files a patch changes
	Batch     string           `json:"batch_sha256,omitempty"` // SHA-256 of the decoded patch batch
	Findings  []safety.Finding `json:"findings,omitempty"`
	Sandbox   *SandboxSummary  `json:"sandbox,omitempty"`
	// Digest is the digest of the helper's plan the person approves (exec_command), Rules
	// and Reason what needs the approval.
	Digest string   `json:"digest,omitempty"`
	Rules  []string `json:"rules,omitempty"`
	Reason string   `json:"reason,omitempty"`
	// Server, Tool and Arguments name a call of a host MCP server's tool (Kind
	// "host_tool_call"): the server's definition name, the server's own tool name and the
	// call's arguments (JSON). HostCommand is the server's command line; Authority the
	// sentence that it runs outside the sandbox (hostdef.AmbientAuthority).
	Server      string `json:"server,omitempty"`
	Tool        string `json:"tool,omitempty"`
	Arguments   string `json:"arguments,omitempty"`
	HostCommand string `json:"host_command,omitempty"`
	Authority   string `json:"authority,omitempty"`
}

// SandboxSummary is the part of the sandbox profile a card shows: the filesystem scope.
type SandboxSummary struct {
	Confined       bool     `json:"confined"`
	Reason         string   `json:"reason,omitempty"` // why not confined
	WritableRoots  []string `json:"writable_roots"`
	ReadOnlyRoots  int      `json:"read_only_roots"` // how many (system and toolchain directories)
	DeniedPaths    []string `json:"denied_paths"`
	ProtectedPaths []string `json:"protected_paths"`
	Network        bool     `json:"network"`
}

// Text renders the card as the lines a person reads. Every value is redacted as the audit
// log redacts it and shown with its visible escapes (audit.RedactText: control characters,
// invisible and bidirectional Unicode, invalid UTF-8), and a command of more than one line
// is shown as numbered, indented lines under a header that gives their count, so that text
// chosen by the agent (a command, a directory name, a finding quoting them) can neither
// hide what runs nor draw card lines of its own ("network:   off" on a line of the command
// stays inside the command's block).
func (c *Card) Text() string {
	var b strings.Builder
	show := audit.RedactText
	fmt.Fprintf(&b, "%s\n", show(c.Title))
	if c.Server != "" {
		fmt.Fprintf(&b, "server:    %s\n", show(c.Server))
	}
	if c.Tool != "" {
		fmt.Fprintf(&b, "tool:      %s\n", show(c.Tool))
	}
	if c.Arguments != "" {
		fmt.Fprintf(&b, "arguments: %s\n", show(c.Arguments))
	}
	if c.HostCommand != "" {
		fmt.Fprintf(&b, "runs:      %s\n", show(c.HostCommand))
		if c.Command == "" && c.Cwd != "" {
			fmt.Fprintf(&b, "in:        %s\n", show(c.Cwd))
		}
	}
	if c.Authority != "" {
		fmt.Fprintf(&b, "authority: %s\n", c.Authority)
	}
	if c.Command != "" {
		var r *redact.Redactor // redaction by shape, before the lines are split
		lines := strings.Split(r.String(c.Command), "\n")
		if len(lines) == 1 {
			fmt.Fprintf(&b, "command:   %s\n", show(c.Command))
		} else {
			fmt.Fprintf(&b, "command:   %d lines:\n", len(lines))
			for i, l := range lines {
				fmt.Fprintf(&b, "  %3d | %s\n", i+1, audit.Escape(l))
			}
		}
		fmt.Fprintf(&b, "cwd:       %s\n", show(c.Cwd))
	}
	fmt.Fprintf(&b, "workspace: %s\n", show(c.Workspace))
	for _, p := range c.Paths {
		fmt.Fprintf(&b, "file:      %s\n", show(p))
	}
	if c.Command != "" {
		net := "off"
		if c.Network {
			net = "ON (requested for this command)"
		}
		fmt.Fprintf(&b, "network:   %s\n", net)
	}
	if s := c.Sandbox; s != nil {
		if s.Confined {
			roots := make([]string, len(s.WritableRoots))
			for i, r := range s.WritableRoots {
				roots[i] = show(r)
			}
			fmt.Fprintf(&b, "sandbox:   confined; writable: %s; denied: %d paths; protected: %d paths\n", strings.Join(roots, ", "), len(s.DeniedPaths), len(s.ProtectedPaths))
		} else {
			fmt.Fprintf(&b, "sandbox:   NOT CONFINED: %s\n", show(s.Reason))
		}
	}
	fmt.Fprintf(&b, "mode:      %s\n", show(c.Mode))
	if c.Digest != "" {
		fmt.Fprintf(&b, "plan:      %s\n", show(c.Digest))
	}
	if len(c.Rules) > 0 {
		fmt.Fprintf(&b, "needs:     %s: %s\n", show(strings.Join(c.Rules, ", ")), show(c.Reason))
	}
	for _, f := range c.Findings {
		fmt.Fprintf(&b, "%s %s: %s\n", f.Decision, show(f.Rule), show(f.Message))
	}
	return b.String()
}

// Approver asks a person whether one operation may run. It returns AnswerUnavailable when
// there is nobody to ask (never an implicit accept).
type Approver interface {
	Approve(ctx context.Context, card *Card) (Answer, error)
}

// ApprovalPending is the error of an Approver that cannot answer within this call (MCP's
// multi round-trip requests: the server returns an input request, the person answers, the
// client calls again). A tool returns it unchanged; nothing has run.
type ApprovalPending struct {
	Card *Card
}

// Error says that a person's answer is pending.
func (e *ApprovalPending) Error() string { return "approval pending: " + e.Card.Title }

// ExecRequest is one command for an Executor.
type ExecRequest struct {
	Command   string
	Shell     string // "bash" or "sh"
	Workspace string // absolute: the workspace root the session serves
	Cwd       string // absolute, inside Workspace
	Timeout   time.Duration
	Network   bool
	Mode      permission.Mode
	Verdict   safety.Verdict // the client's pre-filter verdict (a deny is recorded, nothing runs)
}

// ApproveFunc asks a person to approve the plan a card shows.
type ApproveFunc func(ctx context.Context, card *Card) (Answer, error)

// ExecOutcome is how an Executor's run ended.
type ExecOutcome struct {
	RequestID string
	// Denied: the helper refused the plan, or recorded the client's deny; nothing ran.
	Denied *Denial
	// NotApproved: the plan needed a person and approve did not accept (Answer says what
	// came back; AnswerUnavailable when nobody could be asked); nothing ran. Card is the
	// card shown (or that would have been), AskErr why asking failed.
	NotApproved bool
	Answer      Answer
	Card        *Card
	AskErr      error
	ExitStatus  int // shell-style: the exit code, 128+N for signal N, 126 when refused
	TimedOut    bool
	Duration    time.Duration
}

// Executor runs commands through the user helper: it asks the helper for its plan, asks
// approve (with the card of exactly that plan) when the plan needs a person, and sends the
// approval of that plan only, writing the command's output to stdout and stderr. An
// *ApprovalPending error from approve is returned unchanged.
type Executor interface {
	Exec(ctx context.Context, req ExecRequest, approve ApproveFunc, stdout, stderr io.Writer) (*ExecOutcome, error)
}

// Denial says who refused a command and by which rule.
type Denial struct {
	By     string `json:"by"` // "shellsafety", "helper" or "person"
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// ExecInput is exec_command's arguments.
type ExecInput struct {
	Command        string `json:"command" jsonschema:"the shell command, run as bash -c COMMAND (or sh)"`
	Cwd            string `json:"cwd,omitempty" jsonschema:"working directory relative to the workspace root (default: the root)"`
	Shell          string `json:"shell,omitempty" jsonschema:"bash (default) or sh"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"kill the command's process group after this many seconds (default: the helper's)"`
	Network        bool   `json:"network,omitempty" jsonschema:"request network access for this one command (a person must approve)"`
	MaxOutputBytes int    `json:"max_output_bytes,omitempty" jsonschema:"bytes of stdout and of stderr kept each, head and tail (default 32768)"`
}

// Output budget of exec_command.
const (
	DefaultExecOutputBytes = 32 << 10
	MaxExecOutputBytes     = 1 << 20
)

// ApprovalRequired tells the model that a person must approve the command and how.
type ApprovalRequired struct {
	Rules    []string `json:"rules"`
	Card     *Card    `json:"card"`
	WhatToDo string   `json:"what_to_do"`
}

// ExecResult is exec_command's answer.
type ExecResult struct {
	Ran              bool              `json:"ran"`
	ExitStatus       int               `json:"exit_status"` // 126 when refused or not approved, 128+N on signal N
	Stdout           string            `json:"stdout"`
	Stderr           string            `json:"stderr"`
	StdoutBytes      int64             `json:"stdout_bytes"` // bytes the command wrote, before cutting
	StderrBytes      int64             `json:"stderr_bytes"`
	Truncated        bool              `json:"truncated"`
	Note             string            `json:"note,omitempty"` // what was cut, or why nothing ran
	RequestID        string            `json:"request_id,omitempty"`
	TimedOut         bool              `json:"timed_out,omitempty"`
	DurationMs       int64             `json:"duration_ms,omitempty"`
	Approval         string            `json:"approval,omitempty"` // "accept", "decline", "cancel" when a person was asked
	Denied           *Denial           `json:"denied,omitempty"`
	ApprovalRequired *ApprovalRequired `json:"approval_required,omitempty"`
	Findings         []safety.Finding  `json:"findings,omitempty"`
}

// ExitDenied is the exit status of a command that was refused or not approved.
const ExitDenied = 126

var (
	featuresOnce sync.Once
	features     sandbox.Features
)

// sandboxFeatures probes the kernel's sandbox features once per process.
func sandboxFeatures() sandbox.Features {
	featuresOnce.Do(func() { features = sandbox.ProbeFeatures() })
	return features
}

func execCommand(ctx context.Context, env *Env, in ExecInput) (ExecResult, error) {
	if strings.TrimSpace(in.Command) == "" {
		return ExecResult{}, &Error{Code: "invalid_arguments", Message: "command is empty"}
	}
	if env.Exec == nil {
		return ExecResult{}, &Error{Code: "unavailable", Message: "this session has no user helper connection; start s-code-userhelper and restart the session"}
	}
	shell, dialect := "bash", safety.Bash
	switch in.Shell {
	case "", "bash":
	case "sh":
		shell, dialect = "sh", safety.POSIX
	default:
		return ExecResult{}, &Error{Code: "invalid_arguments", Message: fmt.Sprintf("shell %q: use bash or sh", in.Shell)}
	}
	if in.TimeoutSeconds < 0 || in.TimeoutSeconds > 24*3600 {
		return ExecResult{}, &Error{Code: "invalid_arguments", Message: "timeout_seconds must be 0 to 86400"}
	}
	budget := in.MaxOutputBytes
	if budget <= 0 {
		budget = DefaultExecOutputBytes
	}
	budget = min(budget, MaxExecOutputBytes)
	ws := env.Root.Path()
	cwd := ws
	if in.Cwd != "" && in.Cwd != "." {
		d, err := env.Root.OpenDir(in.Cwd)
		if err != nil {
			return ExecResult{}, pathErr(err)
		}
		if d.Rel() != "" {
			cwd = env.Root.Abs(d.Rel())
		}
		d.Close()
	}

	v := safety.Check(in.Command, safety.Context{Role: safety.RoleUser, Workspace: ws, Cwd: cwd, Home: env.Home, Dialect: dialect})
	res := ExecResult{Findings: v.Findings}
	clientDeny := v.Decision != safety.Allow && v.Decision != safety.Ask
	approve := func(ctx context.Context, card *Card) (Answer, error) {
		card.Mode = env.Mode.String()
		return askApproval(ctx, env, card)
	}
	stdout, stderr := newHeadTail(budget), newHeadTail(budget)
	out, err := env.Exec.Exec(ctx, ExecRequest{Command: in.Command, Shell: shell, Workspace: ws, Cwd: cwd,
		Timeout: time.Duration(in.TimeoutSeconds) * time.Second, Network: in.Network, Mode: env.Mode, Verdict: v}, approve, stdout, stderr)
	var pending *ApprovalPending
	switch {
	case errors.As(err, &pending):
		return ExecResult{}, err
	case err != nil && clientDeny:
		// The deny stands even though the helper could not record it.
		rule, msg := firstFinding(v, safety.Deny)
		res.ExitStatus = ExitDenied
		res.Denied = &Denial{By: "shellsafety", Rule: rule, Reason: msg}
		res.Note = "denied by ShellSafety (" + rule + "); nothing ran (the helper could not be reached to record it: " + err.Error() + "). Do not retry a variant of this command: " + msg
		return res, nil
	case errors.Is(err, context.Canceled):
		return ExecResult{}, &Error{Code: "cancelled", Message: "the call was cancelled; the helper kills the command's process group", Err: err}
	case err != nil:
		return ExecResult{}, &Error{Code: "helper_failed", Message: err.Error(), Err: err}
	}
	res.RequestID = out.RequestID
	if out.Card != nil && out.Card.Findings != nil {
		res.Findings = out.Card.Findings // the helper's own verdict
	}
	if out.Denied != nil {
		res.ExitStatus = ExitDenied
		res.Denied = out.Denied
		if out.Denied.By == "shellsafety" {
			res.Note = "denied by ShellSafety (" + out.Denied.Rule + "); nothing ran. Do not retry a variant of this command: " + out.Denied.Reason
		} else {
			res.Note = "refused by the user helper (" + out.Denied.Rule + "); nothing ran: " + out.Denied.Reason
		}
		return res, nil
	}
	if out.NotApproved {
		res.ExitStatus = ExitDenied
		var rules []string
		if out.Card != nil {
			rules = out.Card.Rules
		}
		switch out.Answer {
		case AnswerDecline, AnswerCancel:
			res.Approval = out.Answer.String()
			res.Denied = &Denial{By: "person", Rule: strings.Join(rules, ","), Reason: notApprovedMessage(out.Answer, "the command", "nothing ran")}
			res.Note = res.Denied.Reason + " (rules: " + strings.Join(rules, ", ") + ")"
		default:
			res.ApprovalRequired = &ApprovalRequired{Rules: rules, Card: out.Card,
				WhatToDo: "a person must approve this command; this client cannot ask (no MCP elicitation). Ask the user to run it themselves with `s-code run -- COMMAND` on a terminal, or to use a client that supports elicitation; do not retry it here."}
			res.Note = "approval required (rules: " + strings.Join(rules, ", ") + "); nothing ran"
			if out.AskErr != nil {
				res.Note += "; the approval request failed: " + out.AskErr.Error()
			}
		}
		return res, nil
	}
	if out.Answer == AnswerAccept {
		res.Approval = out.Answer.String()
	}
	res.Ran = true
	res.ExitStatus = out.ExitStatus
	res.TimedOut = out.TimedOut
	res.DurationMs = out.Duration.Milliseconds()
	res.Stdout, res.StdoutBytes = stdout.String(), stdout.total
	res.Stderr, res.StderrBytes = stderr.String(), stderr.total
	var notes []string
	if stdout.cut() > 0 {
		notes = append(notes, fmt.Sprintf("stdout: %d of %d bytes kept (first and last %d), %d cut from the middle", stdout.kept(), stdout.total, budget/2, stdout.cut()))
	}
	if stderr.cut() > 0 {
		notes = append(notes, fmt.Sprintf("stderr: %d of %d bytes kept (first and last %d), %d cut from the middle", stderr.kept(), stderr.total, budget/2, stderr.cut()))
	}
	if out.TimedOut {
		notes = append(notes, "the command timed out and its process group was killed")
	}
	res.Truncated = stdout.cut() > 0 || stderr.cut() > 0
	res.Note = strings.Join(notes, "; ")
	return res, nil
}

// askApproval asks env's approver; a missing approver or a failed request is no approval
// (the error says why the request failed).
func askApproval(ctx context.Context, env *Env, card *Card) (Answer, error) {
	if env.Approver == nil {
		return AnswerUnavailable, nil
	}
	a, err := env.Approver.Approve(ctx, card)
	if err != nil {
		return AnswerUnavailable, err
	}
	return a, nil
}

func notApprovedMessage(a Answer, what, nothing string) string {
	switch a {
	case AnswerDecline:
		return "the person declined " + what + "; " + nothing + ". Do not retry it; ask the user what to do instead"
	case AnswerCancel:
		return "the person cancelled the approval of " + what + "; " + nothing + ". Do not retry it unless the user asks"
	}
	return "nobody could approve " + what + "; " + nothing
}

func firstFinding(v safety.Verdict, d safety.Decision) (string, string) {
	for _, f := range v.Findings {
		if f.Decision == d {
			return f.Rule, f.Message
		}
	}
	if len(v.Findings) > 0 {
		return v.Findings[0].Rule, v.Findings[0].Message
	}
	return "safety.unknown", "refused"
}

// SandboxSummaryOf returns the card's summary of a plan's sandbox profile.
func SandboxSummaryOf(p permission.Sandbox) *SandboxSummary {
	return &SandboxSummary{Confined: p.Confined && p.Sandboxed, Reason: p.Reason, WritableRoots: p.WritableRoots, ReadOnlyRoots: len(p.ReadOnlyRoots),
		DeniedPaths: p.DeniedPaths, ProtectedPaths: p.ProtectedPaths, Network: p.Network}
}

// headTail keeps the first and last half of a byte budget of what is written to it.
type headTail struct {
	mu    sync.Mutex // guards the fields below (stdout and stderr may be written concurrently)
	half  int
	head  []byte
	tail  []byte // ring of the last half bytes
	pos   int    // next write position in tail once full
	total int64
}

func newHeadTail(budget int) *headTail { return &headTail{half: max(budget/2, 1)} }

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total += int64(len(p))
	n := len(p)
	if room := h.half - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(h.tail) < h.half {
			k := min(h.half-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(h.tail[h.pos:], p)
		h.pos = (h.pos + k) % h.half
		p = p[k:]
	}
	return n, nil
}

func (h *headTail) kept() int64 { return int64(len(h.head) + len(h.tail)) }
func (h *headTail) cut() int64  { return h.total - h.kept() }

// String returns the head, a marker naming the bytes cut (if any), and the tail.
func (h *headTail) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := append(append([]byte{}, h.tail[h.pos:]...), h.tail[:h.pos]...)
	if c := h.total - int64(len(h.head)+len(h.tail)); c > 0 {
		return strings.ToValidUTF8(string(h.head), "\uFFFD") + fmt.Sprintf("\n… [%d bytes cut] …\n", c) + strings.ToValidUTF8(string(tail), "\uFFFD")
	}
	return strings.ToValidUTF8(string(h.head)+string(tail), "\uFFFD")
}

var execCommandTool = Must(Spec[ExecInput, ExecResult]{
	Name: "exec_command",
	Description: "Run a shell command in the workspace through the user helper, in the sandbox (no network unless requested and approved). " +
		"The helper plans it (ShellSafety verdict, sandbox profile, mode): a refused command never runs (exit_status 126, with the rule id); one whose plan " +
		"needs a person's approval is asked for through the client, showing the plan's card; declined or unapprovable commands do not run. Returns stdout, " +
		"stderr (head and tail within a byte budget), exit_status (128+N for signal N) and the audit request_id.",
	Call: execCommand,
})
