package helperd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperwire"
	"github.com/s-code-dev/s-code/internal/peerauth"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/workspace"
	"github.com/s-code-dev/s-code/internal/wsfs"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// Planner is implemented by a Runner that confines commands (the user helper's sandbox):
// it returns the sandbox profile summary a Spec runs under and the complete environment the
// command gets once the profile's changes are applied. A Runner without it runs commands
// unsandboxed (the root helper), with Spec.Env as it is.
type Planner interface {
	// Plan returns the profile summary, the command's complete environment, and what the
	// Runner needs to run exactly this plan (stored in Spec.Prepared).
	Plan(spec execrun.Spec) (permission.Sandbox, []string, any, error)
}

// operation is the request fields that PlanRequest and ExecStart share.
type operation struct {
	command       string
	shell         helperv1.Shell
	workspace     string
	cwd           string
	env           map[string]string
	timeoutMs     uint32
	mode          helperv1.Mode
	network       bool
	extraWritable []string
	path          string
	client        *helperv1.ClientVerdict
}

func opOfStart(s *helperv1.ExecStart) operation {
	return operation{command: s.GetCommand(), shell: s.GetShell(), workspace: s.GetWorkspace(), cwd: s.GetCwd(), env: s.GetEnv(), timeoutMs: s.GetTimeoutMs(), mode: s.GetMode(), network: s.GetNetwork(), extraWritable: s.GetExtraWritable(), path: s.GetPath(), client: s.GetClientVerdict()}
}

func opOfPlan(r *helperv1.PlanRequest) operation {
	return operation{command: r.GetCommand(), shell: r.GetShell(), workspace: r.GetWorkspace(), cwd: r.GetCwd(), env: r.GetEnv(), timeoutMs: r.GetTimeoutMs(), mode: r.GetMode(), network: r.GetNetwork(), extraWritable: r.GetExtraWritable(), path: r.GetPath(), client: r.GetClientVerdict()}
}

// planned is the helper's plan of one operation, what its mode makes of it, and the Spec
// that runs it.
type planned struct {
	plan    permission.Plan
	digest  string
	outcome permission.Outcome
	spec    execrun.Spec
}

// verdict returns the plan's verdict for audit summaries (nil when none was reached).
func (p *planned) verdict() *safety.Verdict {
	if p == nil {
		return nil
	}
	return &p.plan.Verdict
}

// planOf computes the helper's plan of op for the peer c, in the same way at Plan and at
// Exec: validate the request, resolve and validate the workspace and cwd, resolve the extra
// writable paths, build the environment, judge the command in the helper's own context and
// policy, describe the sandbox profile, digest it all, and decide in op's mode. It returns a
// Denied when no plan can be made (a malformed request, a refused directory, a refused
// environment, a runner that cannot build the profile); a plan whose outcome is Refused is
// returned as a plan.
func (s *Server) planOf(c peercred.Creds, op operation) (*planned, *helperv1.Denied) {
	command := op.command
	switch {
	case command == "":
		return nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: "the command is empty"}
	case len(command) > MaxCommandLen:
		return nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: fmt.Sprintf("the command is longer than %d bytes", MaxCommandLen)}
	case strings.IndexByte(command, 0) >= 0:
		return nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: "the command contains a NUL byte"}
	}
	dialect, err := dialectOf(op.shell)
	if err != nil {
		return nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: err.Error()}
	}
	shellName, _ := helperwire.ShellFromProto(op.shell)
	shell, err := execrun.ShellPath(dialect.String())
	if err != nil {
		return nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: err.Error()}
	}
	d, denial := s.resolveDirs(c, op.workspace, op.cwd)
	if denial != nil {
		return nil, denial
	}
	extra, denial := s.resolveExtraWritable(c, d, op.extraWritable)
	if denial != nil {
		return nil, denial
	}
	env, denial := s.commandEnv(op.env, op.path, d.workspace, shell, extra)
	if denial != nil {
		return nil, denial
	}
	v := s.judge(command, s.safetyContext(d, dialect))
	mode := helperwire.ModeFromProto(op.mode)
	network := op.network || permission.NeedsNetwork(v)
	spec := execrun.Spec{
		Path:          shell,
		Args:          []string{filepath.Base(shell), "-c", command},
		Env:           env,
		Dir:           d.cwd,
		Workspace:     d.workspace,
		Network:       network,
		ExtraWritable: extra,
	}
	sb := permission.Sandbox{}
	finalEnv := env
	if pl, ok := s.cfg.Runner.(Planner); ok {
		if sb, finalEnv, spec.Prepared, err = pl.Plan(spec); err != nil {
			return nil, &helperv1.Denied{Rule: RuleRunnerFailed, Reason: "the helper cannot build the sandbox profile: " + err.Error()}
		}
		// No PATH entry the command itself may write: the profile's writable roots hold
		// more than the workspace and the extra writable paths (the tool cache namespace,
		// whose go/bin is where go install puts programs), and a program planted there
		// by one command would be run by the next, also one a person approved for network.
		if p := envValue(spec.Env, "PATH"); p != "" {
			kept := p
			for _, w := range sb.WritableRoots {
				kept = dropWithin(kept, w)
			}
			if kept != p {
				spec.Env = setEnv(spec.Env, "PATH", kept)
				finalEnv = setEnv(finalEnv, "PATH", kept)
			}
		}
	}
	finalEnv = slices.Clone(finalEnv)
	slices.Sort(finalEnv)
	plan := permission.Plan{
		Kind: permission.KindExec, Role: s.cfg.Role.String(), Workspace: d.workspace, Cwd: d.cwd,
		Command: command, Shell: shellName, Mode: mode, Verdict: v, Sandbox: sb,
		Env: finalEnv, Path: envValue(finalEnv, "PATH"), Network: network, ExtraWritable: extra,
		TimeoutMs: uint32(s.timeout(op.timeoutMs) / time.Millisecond),
	}
	return &planned{plan: plan, digest: plan.Digest(), outcome: permission.Decide(mode, plan), spec: spec}, nil
}

// setEnv returns a copy of env (NAME=value entries) with name's value set to value.
func setEnv(env []string, name, value string) []string {
	out := slices.Clone(env)
	for i, kv := range out {
		if strings.HasPrefix(kv, name+"=") {
			out[i] = name + "=" + value
			return out
		}
	}
	return append(out, name+"="+value)
}

// envValue returns the value of name in env (NAME=value entries), or "".
func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// validation returns the workspace validation for peer c: the helper's home, S-Code's
// state directories, and (RequireOwnedDirs) the peer's uid as the owner; the root helper
// allows / and directories above the home for admin work.
func (s *Server) validation(c peercred.Creds) workspace.Validation {
	v := workspace.Validation{Home: s.home, UID: -1, State: s.stateDirs}
	if s.cfg.RequireOwnedDirs {
		v.UID = int(c.UID)
	}
	if s.cfg.Role == safety.RoleRoot {
		v.AllowRoot, v.Home = true, ""
	}
	return v
}

// resolveDirs resolves and validates the workspace and cwd of a request: cwd absolute and
// an existing directory (symbolic links resolved); the workspace workspace.Resolve(cwd,
// override) (the Git top level above cwd, else cwd); cwd inside it; both accepted by
// workspace.Validate (refusals carry the workspace.* rule id).
func (s *Server) resolveDirs(c peercred.Creds, override, cwd string) (dirs, *helperv1.Denied) {
	var d dirs
	if !filepath.IsAbs(cwd) {
		return d, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: fmt.Sprintf("cwd %q is not an absolute path", cwd)}
	}
	if override != "" && !filepath.IsAbs(override) {
		return d, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: fmt.Sprintf("workspace %q is not an absolute path", override)}
	}
	r, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return d, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: fmt.Sprintf("cwd %q does not exist: %v", cwd, err)}
	}
	if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
		return d, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: fmt.Sprintf("cwd %q is not a directory", cwd)}
	}
	d.cwd = filepath.Clean(r)
	if d.workspace, err = workspace.Resolve(d.cwd, override); err != nil {
		return d, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: err.Error()}
	}
	if !workspace.Within(d.workspace, d.cwd) {
		return d, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: fmt.Sprintf("cwd %s is outside the workspace %s", d.cwd, d.workspace)}
	}
	v := s.validation(c)
	if err := workspace.Validate(d.workspace, v); err != nil {
		return d, workspaceDenied("workspace", err)
	}
	if d.cwd != d.workspace {
		v.UID = -1 // a directory inside the peer's workspace may belong to someone else
		if err := workspace.Validate(d.cwd, v); err != nil {
			return d, workspaceDenied("cwd", err)
		}
	}
	return d, nil
}

// workspaceDenied turns a workspace.Validate error into a Denied with its rule id.
func workspaceDenied(what string, err error) *helperv1.Denied {
	var we *workspace.Error
	if errors.As(err, &we) {
		return &helperv1.Denied{Rule: we.Rule, Reason: fmt.Sprintf("the %s %s: %s", what, we.Path, we.Reason)}
	}
	return &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: err.Error()}
}

// resolveExtraWritable resolves the extra writable paths of a request: absolute existing
// directories (symbolic links resolved) outside the workspace, each accepted by
// workspace.Validate (owned by the peer, not a configuration tree, not S-Code's state, not
// a Git directory), sorted and without duplicates. The root helper's commands are not
// sandboxed, so it refuses them.
func (s *Server) resolveExtraWritable(c peercred.Creds, d dirs, paths []string) ([]string, *helperv1.Denied) {
	if len(paths) == 0 {
		return nil, nil
	}
	if _, ok := s.cfg.Runner.(Planner); !ok {
		return nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: "extra writable paths apply to sandboxed commands; this helper runs commands without a sandbox"}
	}
	if len(paths) > 16 {
		return nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: "more than 16 extra writable paths"}
	}
	v := s.validation(c)
	v.UID = int(c.UID)
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: fmt.Sprintf("extra writable path %q is not absolute", p)}
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: fmt.Sprintf("extra writable path %q does not exist: %v", p, err)}
		}
		if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
			return nil, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: fmt.Sprintf("extra writable path %q is not a directory", p)}
		}
		if workspace.Within(d.workspace, r) {
			continue // already writable
		}
		if err := workspace.Validate(r, v); err != nil {
			return nil, workspaceDenied("extra writable path", err)
		}
		if found, err := holdsProtected(r); err != nil || found != "" {
			reason := fmt.Sprintf("extra writable path %s holds %s: Git metadata and agent or editor control files stay read-only, and an extra writable path has no protected paths inside it; approve a directory without them (a build or output directory)", r, found)
			if err != nil {
				reason = fmt.Sprintf("extra writable path %s cannot be checked for Git metadata and control files: %v", r, err)
			}
			return nil, &helperv1.Denied{Rule: RuleExtraProtected, Reason: reason}
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out, nil
}

// RuleExtraProtected is the rule id of an extra writable path that holds Git metadata or an
// agent or editor control file (wsfs.ProtectedComponent), or that is too large to check.
const RuleExtraProtected = "write.extra-protected"

// maxExtraEntries bounds how many entries holdsProtected looks at.
const maxExtraEntries = 20000

// holdsProtected returns the path of the first entry below dir (symbolic links not
// followed) whose name the file tools never write (".git", ".vscode", ".mcp.json", …: see
// wsfs.ProtectedComponent), or "" when there is none. The sandbox keeps these read-only in
// the workspace only; made writable through an extra writable path, a .git/hooks or a
// .vscode/tasks.json there would make the user's git or editor run what the command wrote.
// A directory with more than maxExtraEntries entries is an error (fail closed).
func holdsProtected(dir string) (string, error) {
	n := 0
	found := ""
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if n++; n > maxExtraEntries {
			return fmt.Errorf("more than %d entries", maxExtraEntries)
		}
		if _, ok := wsfs.ProtectedComponent(e.Name()); ok {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found, err
}

// Plan returns the helper's projection of one operation: see the Helper service in
// helper.proto.
func (s *Server) Plan(ctx context.Context, req *helperv1.PlanRequest) (*helperv1.PlanResponse, error) {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	op := opOfPlan(req)
	run := req.GetIntent() == helperv1.PlanIntent_PLAN_INTENT_RUN
	resp := &helperv1.PlanResponse{}
	var pl *planned
	var denial *helperv1.Denied
	if req.GetUndo() {
		var root *wsfs.Root
		pl, root, _, denial = s.planUndo(c, editOp{workspace: req.GetWorkspace(), cwd: req.GetCwd(), mode: req.GetMode(), turn: req.GetTurn()})
		if root != nil {
			root.Close()
		}
		if pl != nil {
			op.command = pl.plan.Command
		}
	} else if len(req.GetPatch()) > 0 {
		var root *wsfs.Root
		pl, _, root, denial = s.planEdit(c, editOp{workspace: req.GetWorkspace(), cwd: req.GetCwd(), mode: req.GetMode(), patch: req.GetPatch(), turn: req.GetTurn()})
		if root != nil {
			root.Close()
		}
		if pl != nil {
			op.command = editTarget(pl.plan.Targets)
		}
	} else {
		pl, denial = s.planOf(c, op)
	}
	if denial != nil {
		// No plan can be made: the answer is a refused plan naming the rule.
		resp.Plan = &helperv1.Plan{
			Command: op.command, Shell: op.shell, Cwd: op.cwd, Workspace: op.workspace, Mode: op.mode,
			Outcome: helperv1.Outcome_OUTCOME_REFUSED, Rules: append([]string{denial.GetRule()}, findingRules(denial)...),
			Reason: denial.GetReason(), Verdict: &helperv1.Verdict{Decision: helperv1.Decision_DECISION_DENY, Findings: denial.GetFindings()},
		}
		if run {
			resp.RequestId = s.recordDenied(ctx, c, op, nil, denial, nil)
		}
		return resp, nil
	}
	resp.Plan = helperwire.PlanToProto(pl.plan, pl.outcome)
	if !run {
		return resp, nil
	}
	switch {
	case pl.outcome.Result == permission.Refused:
		resp.RequestId = s.recordDenied(ctx, c, op, pl, outcomeDenial(pl), nil)
	case helperwire.DecisionFromProto(op.client.GetDecision()) == safety.Deny && op.client != nil:
		// The client's own pre-filter refused it and will not send it: record that, with
		// the helper's verdict beside the client's.
		rules := op.client.GetRules()
		if len(rules) == 0 {
			rules = []string{"client.deny"}
		}
		resp.RequestId = s.recordDenied(ctx, c, op, pl, &helperv1.Denied{Rule: rules[0], Reason: "refused by the client's own check (" + strings.Join(rules, ", ") + "); the command was not sent"}, nil)
	case pl.outcome.Result == permission.NeedsApproval:
		nonce, exp := s.nonces.Issue(pl.digest, c.UID, time.Now())
		resp.Nonce, resp.NonceExpiresAt = nonce, timestamppb.New(exp)
	}
	return resp, nil
}

func findingRules(d *helperv1.Denied) []string {
	var out []string
	for _, f := range d.GetFindings() {
		if f.GetRule() != d.GetRule() && !slices.Contains(out, f.GetRule()) {
			out = append(out, f.GetRule())
		}
	}
	return out
}

// outcomeDenial is the Denied of a plan its mode refuses: the first refusing rule, the
// reason, and the verdict's findings.
func outcomeDenial(pl *planned) *helperv1.Denied {
	rule := "safety.deny"
	if len(pl.outcome.Rules) > 0 {
		rule = pl.outcome.Rules[0]
	}
	return &helperv1.Denied{Rule: rule, Reason: pl.outcome.Reason, Findings: helperwire.VerdictToProto(pl.plan.Verdict).GetFindings()}
}

// baseRecord returns the fields every audit record about op carries.
func (s *Server) baseRecord(c peercred.Creds, op operation, requestID string) audit.Record {
	return audit.Record{
		RequestID: requestID,
		Helper:    s.cfg.Role.String(),
		Peer:      auditPeer(c),
		Command:   auditCommand(op.command),
		Cwd:       op.cwd,
		Workspace: op.workspace,
		Env:       auditEnv(op.env),
		Client:    clientVerdict(op.client),
		Mode:      helperwire.ModeFromProto(op.mode).String(),
		Network:   op.network,
	}
}

// withPlan fills r's plan fields from pl (resolved directories, digest, network, extra
// writable paths).
func withPlan(r *audit.Record, pl *planned) {
	if pl == nil {
		return
	}
	r.Cwd, r.Workspace = pl.plan.Cwd, pl.plan.Workspace
	r.PlanDigest = pl.digest
	r.Network = pl.plan.Network
	r.ExtraWritable = pl.plan.ExtraWritable
}

// auditApproval returns the audit form of an approval (nil for none).
func auditApproval(a *helperv1.Approval) *audit.Approval {
	if a == nil {
		return nil
	}
	return &audit.Approval{Channel: helperwire.ChannelFromProto(a.GetChannel()).String(), Digest: a.GetDigest(), Nonce: a.GetNonce(), ExpiresAt: helperwire.Expiry(a.GetExpiresAt())}
}

// recordDenied writes the denied record of an operation refused before it ran (by the
// helper, or by the client per its verdict) and returns its request id.
func (s *Server) recordDenied(ctx context.Context, c peercred.Creds, op operation, pl *planned, denial *helperv1.Denied, approval *helperv1.Approval) string {
	r := s.baseRecord(c, op, newRequestID())
	withPlan(&r, pl)
	r.Kind = audit.KindDenied
	r.Verdict = denialSummary(denial.GetRule(), pl.verdict())
	r.Reason = denial.GetRule() + ": " + denial.GetReason()
	r.Approval = auditApproval(approval)
	s.audit(ctx, &r, false)
	return r.RequestID
}

// checkApproval is the approval step of Exec: a plan its mode refuses is denied; one that
// runs without a person passes; one that needs approval passes only with an approval the
// nonce store redeems for this plan's digest and this peer.
func (s *Server) checkApproval(c peercred.Creds, pl *planned, a *helperv1.Approval) *helperv1.Denied {
	switch pl.outcome.Result {
	case permission.Run:
		return nil
	case permission.NeedsApproval:
	default:
		return outcomeDenial(pl)
	}
	findings := helperwire.VerdictToProto(pl.plan.Verdict).GetFindings()
	if a == nil {
		return &helperv1.Denied{
			Rule:     RuleApprovalRequired,
			Reason:   "this needs a person's approval (" + strings.Join(pl.outcome.Rules, ", ") + ": " + pl.outcome.Reason + ") and the request carries none; ask for a plan and approve it",
			Findings: findings,
		}
	}
	if err := s.nonces.Redeem(*helperwire.ApprovalFromProto(a), pl.digest, c.UID, time.Now()); err != nil {
		var pe *permission.Error
		if errors.As(err, &pe) {
			return &helperv1.Denied{Rule: pe.Rule, Reason: pe.Reason, Findings: findings}
		}
		return &helperv1.Denied{Rule: permission.RuleApprovalInvalid, Reason: err.Error(), Findings: findings}
	}
	return nil
}
