package helperwire

import (
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/s-code-dev/s-code/internal/permission"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// DecisionToProto maps a ShellSafety decision to the wire; anything but allow and ask is
// deny.
func DecisionToProto(d safety.Decision) helperv1.Decision {
	switch d {
	case safety.Allow:
		return helperv1.Decision_DECISION_ALLOW
	case safety.Ask:
		return helperv1.Decision_DECISION_ASK
	}
	return helperv1.Decision_DECISION_DENY
}

// DecisionFromProto maps the wire's decision back; DECISION_UNSPECIFIED and unknown values
// are deny.
func DecisionFromProto(d helperv1.Decision) safety.Decision {
	switch d {
	case helperv1.Decision_DECISION_ALLOW:
		return safety.Allow
	case helperv1.Decision_DECISION_ASK:
		return safety.Ask
	}
	return safety.Deny
}

// VerdictToProto maps a verdict to the wire.
func VerdictToProto(v safety.Verdict) *helperv1.Verdict {
	out := &helperv1.Verdict{Decision: DecisionToProto(v.Decision), Findings: make([]*helperv1.Finding, len(v.Findings))}
	for i, f := range v.Findings {
		out.Findings[i] = &helperv1.Finding{Rule: f.Rule, Decision: DecisionToProto(f.Decision), Command: f.Command, Offset: int32(f.Offset), Message: f.Message}
	}
	return out
}

// VerdictFromProto maps the wire's verdict back (nil is a deny verdict without findings).
func VerdictFromProto(v *helperv1.Verdict) safety.Verdict {
	out := safety.Verdict{Decision: DecisionFromProto(v.GetDecision())}
	for _, f := range v.GetFindings() {
		out.Findings = append(out.Findings, safety.Finding{Rule: f.GetRule(), Decision: DecisionFromProto(f.GetDecision()), Command: f.GetCommand(), Offset: int(f.GetOffset()), Message: f.GetMessage()})
	}
	return out
}

// ModeToProto maps a mode to the wire (ModeUnset to MODE_UNSPECIFIED).
func ModeToProto(m permission.Mode) helperv1.Mode {
	switch m {
	case permission.Manual:
		return helperv1.Mode_MODE_MANUAL
	case permission.AcceptEdits:
		return helperv1.Mode_MODE_ACCEPT_EDITS
	case permission.Workspace:
		return helperv1.Mode_MODE_WORKSPACE
	}
	return helperv1.Mode_MODE_UNSPECIFIED
}

// ModeFromProto maps the wire's mode back; unknown values are ModeUnset.
func ModeFromProto(m helperv1.Mode) permission.Mode {
	switch m {
	case helperv1.Mode_MODE_MANUAL:
		return permission.Manual
	case helperv1.Mode_MODE_ACCEPT_EDITS:
		return permission.AcceptEdits
	case helperv1.Mode_MODE_WORKSPACE:
		return permission.Workspace
	}
	return permission.ModeUnset
}

// ChannelToProto maps an approval channel to the wire.
func ChannelToProto(c permission.Channel) helperv1.ApprovalChannel {
	switch c {
	case permission.ChannelTerminal:
		return helperv1.ApprovalChannel_APPROVAL_CHANNEL_TERMINAL
	case permission.ChannelFlag:
		return helperv1.ApprovalChannel_APPROVAL_CHANNEL_FLAG
	case permission.ChannelElicitation:
		return helperv1.ApprovalChannel_APPROVAL_CHANNEL_ELICITATION
	case permission.ChannelTeam:
		return helperv1.ApprovalChannel_APPROVAL_CHANNEL_TEAM
	}
	return helperv1.ApprovalChannel_APPROVAL_CHANNEL_UNSPECIFIED
}

// ChannelFromProto maps the wire's channel back; unknown values are ChannelUnset.
func ChannelFromProto(c helperv1.ApprovalChannel) permission.Channel {
	switch c {
	case helperv1.ApprovalChannel_APPROVAL_CHANNEL_TERMINAL:
		return permission.ChannelTerminal
	case helperv1.ApprovalChannel_APPROVAL_CHANNEL_FLAG:
		return permission.ChannelFlag
	case helperv1.ApprovalChannel_APPROVAL_CHANNEL_ELICITATION:
		return permission.ChannelElicitation
	case helperv1.ApprovalChannel_APPROVAL_CHANNEL_TEAM:
		return permission.ChannelTeam
	}
	return permission.ChannelUnset
}

// ApprovalToProto maps an approval to the wire.
func ApprovalToProto(a permission.Approval) *helperv1.Approval {
	out := &helperv1.Approval{Digest: a.Digest, Nonce: a.Nonce, Channel: ChannelToProto(a.Channel)}
	if !a.Expiry.IsZero() {
		out.ExpiresAt = timestamppb.New(a.Expiry)
	}
	return out
}

// ApprovalFromProto maps the wire's approval back; nil stays nil (no approval).
func ApprovalFromProto(a *helperv1.Approval) *permission.Approval {
	if a == nil {
		return nil
	}
	out := &permission.Approval{Digest: a.GetDigest(), Nonce: a.GetNonce(), Channel: ChannelFromProto(a.GetChannel())}
	if a.GetExpiresAt() != nil {
		out.Expiry = a.GetExpiresAt().AsTime()
	}
	return out
}

// ShellToProto maps a shell name ("bash", "sh") to the wire.
func ShellToProto(s string) helperv1.Shell {
	if s == "sh" {
		return helperv1.Shell_SHELL_SH
	}
	return helperv1.Shell_SHELL_BASH
}

// ShellFromProto maps the wire's shell back to "bash" or "sh"; ok is false for an unknown
// value.
func ShellFromProto(s helperv1.Shell) (name string, ok bool) {
	switch s {
	case helperv1.Shell_SHELL_UNSPECIFIED, helperv1.Shell_SHELL_BASH:
		return "bash", true
	case helperv1.Shell_SHELL_SH:
		return "sh", true
	}
	return "", false
}

// planShell is a plan's shell on the wire: SHELL_UNSPECIFIED for a plan without one.
func planShell(s string) helperv1.Shell {
	if s == "" {
		return helperv1.Shell_SHELL_UNSPECIFIED
	}
	return ShellToProto(s)
}

// ResultToProto maps a Decide result to the wire's outcome.
func ResultToProto(r permission.Result) helperv1.Outcome {
	switch r {
	case permission.Run:
		return helperv1.Outcome_OUTCOME_RUN
	case permission.NeedsApproval:
		return helperv1.Outcome_OUTCOME_NEEDS_APPROVAL
	}
	return helperv1.Outcome_OUTCOME_REFUSED
}

// ResultFromProto maps the wire's outcome back; OUTCOME_UNSPECIFIED and unknown values are
// Refused.
func ResultFromProto(o helperv1.Outcome) permission.Result {
	switch o {
	case helperv1.Outcome_OUTCOME_RUN:
		return permission.Run
	case helperv1.Outcome_OUTCOME_NEEDS_APPROVAL:
		return permission.NeedsApproval
	}
	return permission.Refused
}

// PlanToProto maps a plan with its outcome to the wire, digest included.
func PlanToProto(p permission.Plan, o permission.Outcome) *helperv1.Plan {
	role := helperv1.Role_ROLE_USER
	if p.Role == "root" {
		role = helperv1.Role_ROLE_ROOT
	}
	sb := p.Sandbox
	return &helperv1.Plan{
		Workspace: p.Workspace, Cwd: p.Cwd, Command: p.Command, Shell: planShell(p.Shell),
		Mode: ModeToProto(p.Mode), Verdict: VerdictToProto(p.Verdict),
		Outcome: ResultToProto(o.Result), Rules: slices.Clone(o.Rules), Reason: o.Reason,
		Sandbox: &helperv1.SandboxSummary{
			Sandboxed: sb.Sandboxed, Confined: sb.Confined, Reason: sb.Reason,
			WritableRoots: sb.WritableRoots, ReadOnlyRoots: sb.ReadOnlyRoots, DeniedPaths: sb.DeniedPaths,
			ProtectedPaths: sb.ProtectedPaths, Protection: sb.Protection, Network: sb.Network,
		},
		Env: p.Env, Path: p.Path, Network: p.Network, ExtraWritable: p.ExtraWritable, TimeoutMs: p.TimeoutMs,
		Digest: p.Digest(), Role: role,
		Kind: string(p.Kind), Targets: p.Targets, PatchSha256: p.PatchSHA256, Turn: p.Turn,
	}
}

// PlanFromProto maps the wire's plan back to a permission.Plan and its outcome.
// The caller may compare the recomputed Digest with pp.Digest to check the helper's
// projection arrived whole.
func PlanFromProto(pp *helperv1.Plan) (permission.Plan, permission.Outcome) {
	shell, _ := ShellFromProto(pp.GetShell())
	if pp.GetShell() == helperv1.Shell_SHELL_UNSPECIFIED {
		shell = "" // a plan without a command (an edit)
	}
	role := "user"
	if pp.GetRole() == helperv1.Role_ROLE_ROOT {
		role = "root"
	}
	sb := pp.GetSandbox()
	kind := permission.KindExec
	if pp.GetKind() == string(permission.KindEdit) {
		kind = permission.KindEdit
	}
	p := permission.Plan{
		Kind: kind, Role: role, Targets: pp.GetTargets(), PatchSHA256: pp.GetPatchSha256(), Turn: pp.GetTurn(), Workspace: pp.GetWorkspace(), Cwd: pp.GetCwd(),
		Command: pp.GetCommand(), Shell: shell, Mode: ModeFromProto(pp.GetMode()),
		Verdict: VerdictFromProto(pp.GetVerdict()),
		Sandbox: permission.Sandbox{
			Sandboxed: sb.GetSandboxed(), Confined: sb.GetConfined(), Reason: sb.GetReason(),
			WritableRoots: sb.GetWritableRoots(), ReadOnlyRoots: sb.GetReadOnlyRoots(), DeniedPaths: sb.GetDeniedPaths(),
			ProtectedPaths: sb.GetProtectedPaths(), Protection: sb.GetProtection(), Network: sb.GetNetwork(),
		},
		Env: pp.GetEnv(), Path: pp.GetPath(), Network: pp.GetNetwork(), ExtraWritable: pp.GetExtraWritable(), TimeoutMs: pp.GetTimeoutMs(),
	}
	o := permission.Outcome{Result: ResultFromProto(pp.GetOutcome()), Rules: pp.GetRules(), Reason: pp.GetReason()}
	o.ByMode = o.Result == permission.Run && len(o.Rules) > 0
	return p, o
}

// Expiry returns the time of a proto timestamp, or the zero time for nil.
func Expiry(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}
