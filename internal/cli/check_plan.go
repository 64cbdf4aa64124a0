package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/sandbox"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// planJSON is the --json output of `s-code check --mode` (and of a --batch line with a
// mode): the verdict, and the outcome the command gets in the mode.
type planJSON struct {
	Decision safety.Decision  `json:"decision"`
	Findings []safety.Finding `json:"findings"`
	// Mode is the permission mode judged in; Outcome is "run", "needs-approval" or
	// "refused"; Rules are the rule ids behind it; ByMode says the mode approved it.
	Mode    permission.Mode `json:"mode"`
	Outcome string          `json:"outcome"`
	Rules   []string        `json:"rules"`
	ByMode  bool            `json:"by_mode,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	// Source is "helper" when the helper's own plan answered (--helper), else "local".
	Source    string `json:"source"`
	Workspace string `json:"workspace"`
	Cwd       string `json:"cwd"`
	Network   bool   `json:"network"`
	Digest    string `json:"digest,omitempty"`
}

func newPlanJSON(p permission.Plan, o permission.Outcome, source, digest string) planJSON {
	f := p.Verdict.Findings
	if f == nil {
		f = []safety.Finding{}
	}
	rules := o.Rules
	if rules == nil {
		rules = []string{}
	}
	return planJSON{Decision: p.Verdict.Decision, Findings: f, Mode: p.Mode, Outcome: o.Result.String(), Rules: rules, ByMode: o.ByMode, Reason: o.Reason, Source: source, Workspace: p.Workspace, Cwd: p.Cwd, Network: p.Network, Digest: digest}
}

// localPlan returns the plan the client can make by itself of command in ctx: its own
// verdict (made at least ask where the sandbox cannot confine, as the user helper does),
// the sandbox's confinement on this machine, network as the verdict or the request says.
// Only the helper knows its policy, environment and profile: see --helper.
func localPlan(command string, ctx safety.Context, mode permission.Mode, network bool, writable []string) permission.Plan {
	v := safety.Check(command, ctx)
	p := permission.Plan{
		Kind: permission.KindExec, Role: ctx.Role.String(), Workspace: ctx.Workspace, Cwd: ctx.Cwd,
		Command: command, Shell: ctx.Dialect.String(), Mode: mode, ExtraWritable: writable,
	}
	if ctx.Role == safety.RoleUser {
		f := sandbox.ProbeFeatures()
		v = sandbox.GateVerdict(v, command, f)
		p.Sandbox = permission.Sandbox{Sandboxed: true, Confined: f.Confines(), Reason: f.Problem, WritableRoots: []string{ctx.Workspace}}
	}
	p.Verdict = v
	p.Network = network || permission.NeedsNetwork(v)
	p.Sandbox.Network = p.Network && p.Sandbox.Sandboxed
	return p
}

// helperPlan asks the helper of ctx's role for its plan of command (a preview: nothing is
// recorded, no nonce).
func helperPlan(command string, ctx safety.Context, o checkOptions, mode permission.Mode) (*helperclient.Planned, error) {
	role := helperclient.User
	if ctx.Role == safety.RoleRoot {
		role = helperclient.Root
	}
	socket := o.socket
	if socket == "" {
		var err error
		if socket, err = helperclient.DefaultSocket(role); err != nil {
			return nil, &ExitError{Code: ExitHelperUnavailable, Err: err}
		}
	}
	dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := helperclient.Dial(dctx, role, socket)
	if err != nil {
		return nil, &ExitError{Code: ExitHelperUnavailable, Err: err}
	}
	defer c.Close()
	op := helperclient.Operation{Command: command, Shell: ctx.Dialect.String(), Workspace: o.workspace, Cwd: ctx.Cwd, Mode: mode, Network: o.network, ExtraWritable: o.writable}
	if o.workspace != "" {
		op.Workspace = ctx.Workspace
	}
	pl, err := c.Plan(dctx, op, helperv1.PlanIntent_PLAN_INTENT_PREVIEW)
	if err != nil {
		return nil, &ExitError{Code: ExitHelperUnavailable, Err: fmt.Errorf("%s helper: %w", role, err)}
	}
	return pl, nil
}

// outcomeExit maps an outcome to the exit status of `s-code check --mode`: 0 runs without a
// person, 1 needs approval, 126 refused.
func outcomeExit(r permission.Result) error {
	switch r {
	case permission.Run:
		return nil
	case permission.NeedsApproval:
		return &ExitError{Code: ExitFailure}
	}
	return &ExitError{Code: ExitDenied}
}
