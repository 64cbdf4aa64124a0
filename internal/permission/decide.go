package permission

import (
	"slices"
	"strings"

	"github.com/s-code-dev/s-code/safety"
)

// Result is what Decide makes of a plan. The zero value is Refused.
type Result int

// The results.
const (
	// Refused: the plan never runs; no approval can change that.
	Refused Result = iota
	// Run: the plan runs without a person (its verdict allows it, or the mode approves it).
	Run
	// NeedsApproval: the plan runs only with a person's Approval of its digest.
	NeedsApproval
)

// String returns "refused", "run" or "needs-approval".
func (r Result) String() string {
	switch r {
	case Run:
		return "run"
	case NeedsApproval:
		return "needs-approval"
	}
	return "refused"
}

// MarshalText encodes the result as its String form.
func (r Result) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Rule ids of the permission model's own findings.
const (
	RuleModeUnset        = "mode.unset"           // no mode was chosen
	RuleNetworkRequested = "network.requested"    // the operation asks for network access
	RuleExtraWritable    = "write.extra-writable" // the operation asks for a path outside the workspace to be writable
	RuleUnsandboxed      = "sandbox.none"         // the command does not run in the sandbox (Workspace mode cannot approve it)
	RuleEditWorkspace    = "edit.workspace"       // a file edit inside the workspace (ask)
	RuleApprovalRequired = "approval.required"    // needs approval and none came
	RuleApprovalMismatch = "approval.mismatch"    // the approval is for another plan
	RuleApprovalReplayed = "approval.replayed"    // the approval's nonce was used before
	RuleApprovalExpired  = "approval.expired"     // the approval lapsed
	RuleApprovalUnknown  = "approval.unknown"     // the nonce was never issued to this caller, or is forgotten
	RuleApprovalInvalid  = "approval.invalid"     // the approval lacks a digest, nonce or channel
)

// workspaceApprovable are the ask rules that Workspace mode approves without asking when the
// command runs confined, without network and with no extra writable path: the sandbox then
// confines what they are about (writes land in the workspace, nothing leaves the machine).
// Every other ask rule stays governed as in Manual; a rule missing here is governed, so a
// new rule fails closed.
var workspaceApprovable = map[string]bool{
	"write.workspace":         true,
	"redirect.workspace":      true,
	"unknown.command":         true,
	"exec.workspace-code":     true,
	"exec.interpreter-inline": true,
	"exec.shell-stdin":        true,
	"exec.source":             true,
	"exec.tool-exec":          true,
	"dynamic.command":         true,
	"dynamic.script":          true,
	"function.shadow":         true,
	"env.ifs":                 true,
	"env.dynamic":             true,
	"git.state":               true,
	"git.pager":               true,
}

// editApprovable are the ask rules that Accept-edits and Workspace modes approve for a
// KindEdit plan.
var editApprovable = map[string]bool{RuleEditWorkspace: true}

// networkRules are the ask rules that mean the command uses the network: its plan runs
// with network on once approved (what the card shows is what is granted).
var networkRules = map[string]bool{"network.access": true, "package.install": true, "exec.remote-package": true}

// NeedsNetwork reports whether verdict v says the command uses the network.
func NeedsNetwork(v safety.Verdict) bool {
	for _, f := range v.Findings {
		if networkRules[f.Rule] && f.Decision != safety.Deny {
			return true
		}
	}
	return false
}

// WorkspaceApprovable reports whether Workspace mode approves the ask rule id without
// asking (given a confined, no-network plan).
func WorkspaceApprovable(rule string) bool { return workspaceApprovable[rule] }

// Outcome is Decide's answer.
type Outcome struct {
	Result Result `json:"outcome"`
	// Rules are the rule ids behind the result: the refusing rules when Refused, what needs
	// approval when NeedsApproval, what the mode approved when Run by mode.
	Rules []string `json:"rules"`
	// Reason is one line for a person or a model.
	Reason string `json:"reason"`
	// ByMode reports whether the mode approved what would otherwise need a person.
	ByMode bool `json:"by_mode,omitempty"`
}

// Decide returns what mode makes of plan p:
//   - Refused when the mode is unset (mode.unset) or the verdict is deny (its deny rules);
//   - Run when nothing needs a person: the verdict allows, no network, no extra writable
//     path, and the command is confined or not sandboxed by design (the root helper);
//   - otherwise NeedsApproval, unless the mode approves every reason: Accept-edits and
//     Workspace approve edit.workspace edits; Workspace also approves a confined command
//     without network or extra writable paths whose ask rules are all WorkspaceApprovable.
//
// Network, writes outside the workspace, an unconfined command and every deny stay governed
// exactly as in Manual in every mode.
func Decide(mode Mode, p Plan) Outcome {
	if mode < Manual || mode > Workspace {
		return Outcome{Result: Refused, Rules: []string{RuleModeUnset}, Reason: "no permission mode was chosen (manual, accept-edits or workspace), so nothing runs"}
	}
	v := p.Verdict
	if v.Decision != safety.Allow && v.Decision != safety.Ask {
		var rules []string
		reason := "the helper's verdict is deny"
		for _, f := range v.Findings {
			if f.Decision != safety.Allow && f.Decision != safety.Ask {
				if len(rules) == 0 {
					reason = f.Message
				}
				rules = appendNew(rules, f.Rule)
			}
		}
		if len(rules) == 0 {
			rules = []string{"safety.deny"}
		}
		return Outcome{Result: Refused, Rules: rules, Reason: reason}
	}
	var need []string
	var why []string
	for _, f := range v.Findings {
		if f.Decision == safety.Ask {
			if len(need) == 0 {
				why = append(why, f.Message)
			}
			need = appendNew(need, f.Rule)
		}
	}
	modeable := true // every reason so far is one the mode may approve
	for _, r := range need {
		switch p.Kind {
		case KindEdit:
			modeable = modeable && editApprovable[r] && mode >= AcceptEdits
		default:
			modeable = modeable && workspaceApprovable[r] && mode >= Workspace
		}
	}
	if p.Network {
		if !NeedsNetwork(v) {
			need = appendNew(need, RuleNetworkRequested)
			why = append(why, "the operation asks for network access")
		}
		modeable = false
	}
	if len(p.ExtraWritable) > 0 {
		need = appendNew(need, RuleExtraWritable)
		why = append(why, "the operation asks for "+strings.Join(p.ExtraWritable, ", ")+" to be writable for this run")
		modeable = false
	}
	if p.Kind != KindEdit {
		if p.Sandbox.Sandboxed && !p.Sandbox.Confined {
			modeable = false
			if !slices.Contains(need, "sandbox.unconfined") {
				need = appendNew(need, "sandbox.unconfined")
				why = append(why, "the command would run without an OS sandbox: "+p.Sandbox.Reason)
			}
		}
		if !p.Sandbox.Sandboxed && len(need) > 0 {
			modeable = false
		}
	}
	if len(need) == 0 {
		return Outcome{Result: Run, Rules: []string{}, Reason: "the helper's verdict allows it"}
	}
	if modeable {
		return Outcome{Result: Run, Rules: need, Reason: "approved by the " + mode.String() + " mode", ByMode: true}
	}
	return Outcome{Result: NeedsApproval, Rules: need, Reason: strings.Join(why, "; ")}
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
