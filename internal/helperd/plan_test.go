package helperd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/helperwire"
	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/internal/workspace"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// planOf asks the helper for the plan of start with intent run.
func (e *env) mustPlan(t *testing.T, start *helperv1.ExecStart) *helperv1.PlanResponse {
	t.Helper()
	if start.Cwd == "" {
		start.Cwd = e.work
	}
	if start.Mode == helperv1.Mode_MODE_UNSPECIFIED {
		start.Mode = helperv1.Mode_MODE_MANUAL
	}
	resp, err := e.planFor(ctx(t), start)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func approvalOf(resp *helperv1.PlanResponse) *helperv1.Approval {
	return &helperv1.Approval{Digest: resp.GetPlan().GetDigest(), Nonce: resp.GetNonce(), ExpiresAt: resp.GetNonceExpiresAt(), Channel: helperv1.ApprovalChannel_APPROVAL_CHANNEL_TERMINAL}
}

// TestApprovalIsForOnePlanOnce: an approval authorizes exactly the plan it names, once.
func TestApprovalIsForOnePlanOnce(t *testing.T) {
	e := newEnv(t, nil)
	a := &helperv1.ExecStart{Command: "touch a"}
	resp := e.mustPlan(t, a)
	p := resp.GetPlan()
	if p.GetOutcome() != helperv1.Outcome_OUTCOME_NEEDS_APPROVAL || resp.GetNonce() == "" || len(p.GetDigest()) != 64 || !slices.Contains(p.GetRules(), "write.workspace") {
		t.Fatalf("plan of touch a: %v nonce %q", p, resp.GetNonce())
	}
	// The digest is the SHA-256 of the plan's canonical JSON: the client recomputes it.
	if plan, _ := helperwire.PlanFromProto(p); plan.Digest() != p.GetDigest() {
		t.Fatalf("digest %s, recomputed %s", p.GetDigest(), plan.Digest())
	}
	approval := approvalOf(resp)

	// Without an approval: approval.required.
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a"}, nil); r.denied.GetRule() != helperd.RuleApprovalRequired {
		t.Fatalf("no approval: %+v", r.denied)
	}
	// Command A's approval sent with command B: approval.mismatch, and nothing ran.
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch b", Approval: approval}, nil)
	if r.denied.GetRule() != helperd.RuleApprovalMismatch || r.pid != 0 {
		t.Fatalf("A's approval with B: %+v", r.denied)
	}
	if _, err := os.Stat(filepath.Join(e.work, "b")); err == nil {
		t.Fatal("b was created")
	}
	// The nonce is used up by the refused attempt: approval.replayed, also for A.
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a", Approval: approval}, nil); r.denied.GetRule() != helperd.RuleApprovalReplayed {
		t.Fatalf("after a mismatch: %+v", r.denied)
	}
	// A fresh plan: its approval runs A once; sent again it is replayed.
	approval = approvalOf(e.mustPlan(t, &helperv1.ExecStart{Command: "touch a"}))
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a", Approval: approval}, nil); r.status() != 0 {
		t.Fatalf("approved A: %+v %v", r.denied, r.err)
	}
	st, ok := e.aud.find(audit.KindStart, "")
	if !ok || !st.Approved || st.Approval == nil || st.Approval.Channel != "terminal" || st.Approval.Digest != st.PlanDigest {
		t.Fatalf("start record %+v", st)
	}
	r = e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a", Approval: approval}, nil)
	if r.denied.GetRule() != helperd.RuleApprovalReplayed {
		t.Fatalf("replayed approval: %+v", r.denied)
	}
	d, ok := e.aud.find(audit.KindDenied, r.requestID)
	if !ok || audit.Rules(&d)[0] != helperd.RuleApprovalReplayed || d.Approval == nil || d.Mode != "manual" {
		t.Fatalf("denied record %+v", d)
	}
	// The same command in another mode or with network is another plan.
	approval = approvalOf(e.mustPlan(t, &helperv1.ExecStart{Command: "touch a"}))
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a", Mode: helperv1.Mode_MODE_WORKSPACE, Approval: approval}, nil); r.denied.GetRule() != helperd.RuleApprovalMismatch {
		t.Fatalf("approval in another mode: %+v", r.denied)
	}
	approval = approvalOf(e.mustPlan(t, &helperv1.ExecStart{Command: "touch a"}))
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a", Network: true, Approval: approval}, nil); r.denied.GetRule() != helperd.RuleApprovalMismatch {
		t.Fatalf("approval without network sent with network: %+v", r.denied)
	}
	// A made-up nonce is unknown; an approval without a channel is invalid.
	bad := approvalOf(e.mustPlan(t, &helperv1.ExecStart{Command: "touch a"}))
	bad.Nonce = strings.Repeat("0", 32)
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a", Approval: bad}, nil); r.denied.GetRule() != "approval.unknown" {
		t.Fatalf("made-up nonce: %+v", r.denied)
	}
	bad = approvalOf(e.mustPlan(t, &helperv1.ExecStart{Command: "touch a"}))
	bad.Channel = helperv1.ApprovalChannel_APPROVAL_CHANNEL_UNSPECIFIED
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a", Approval: bad}, nil); r.denied.GetRule() != "approval.invalid" {
		t.Fatalf("no channel: %+v", r.denied)
	}
}

func TestApprovalExpires(t *testing.T) {
	e := newEnv(t, func(c *helperd.Config) { c.ApprovalTTL = 100 * time.Millisecond })
	approval := approvalOf(e.mustPlan(t, &helperv1.ExecStart{Command: "touch a"}))
	time.Sleep(200 * time.Millisecond)
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a", Approval: approval}, nil); r.denied.GetRule() != helperd.RuleApprovalExpired {
		t.Fatalf("after the helper's limit: %+v", r.denied)
	}
	// The approval's own expiry counts too.
	e = newEnv(t, nil)
	approval = approvalOf(e.mustPlan(t, &helperv1.ExecStart{Command: "touch a"}))
	approval.ExpiresAt = timestamppb.New(time.Now().Add(-time.Second))
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch a", Approval: approval}, nil); r.denied.GetRule() != helperd.RuleApprovalExpired {
		t.Fatalf("approval past its own expiry: %+v", r.denied)
	}
}

// TestApprovalNeverWidensARefusal: a deny plan, a refused workspace and a refused extra
// writable path stay refused whatever approval comes.
func TestApprovalNeverWidensARefusal(t *testing.T) {
	e := newEnv(t, nil)
	resp := e.mustPlan(t, &helperv1.ExecStart{Command: "rm -rf /"})
	if resp.GetPlan().GetOutcome() != helperv1.Outcome_OUTCOME_REFUSED || resp.GetNonce() != "" || resp.GetRequestId() == "" {
		t.Fatalf("plan of rm -rf /: %v", resp)
	}
	// A refused plan is recorded (intent run) with its rule.
	if d, ok := e.aud.find(audit.KindDenied, resp.GetRequestId()); !ok || audit.Rules(&d)[0] != "destructive.rm-root" || d.Mode != "manual" {
		t.Fatalf("denied record %+v", d)
	}
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "rm -rf /", Approval: &helperv1.Approval{Digest: resp.GetPlan().GetDigest(), Nonce: "x", Channel: helperv1.ApprovalChannel_APPROVAL_CHANNEL_FLAG}}, nil)
	if r.denied.GetRule() != "destructive.rm-root" {
		t.Fatalf("approved deny: %+v", r.denied)
	}
	// A mode never lowers a deny either.
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "rm -rf /", Mode: helperv1.Mode_MODE_WORKSPACE, Approval: approve()}, nil); r.denied.GetRule() != "destructive.rm-root" {
		t.Fatalf("deny in workspace mode: %+v", r.denied)
	}
}

// TestModeUnsetRefused: a request that names no mode gets nothing, not even an allow.
func TestModeUnsetRefused(t *testing.T) {
	e := newEnv(t, nil)
	r := e.execRaw(ctx(t), &helperv1.ExecStart{Command: "true", Cwd: e.work}, nil)
	if r.denied.GetRule() != "mode.unset" || r.pid != 0 {
		t.Fatalf("unset mode: %+v", r.denied)
	}
	d, ok := e.aud.find(audit.KindDenied, r.requestID)
	if !ok || d.Mode != "unset" || audit.Rules(&d)[0] != "mode.unset" {
		t.Fatalf("denied record %+v", d)
	}
}

// TestClientDenialRecorded: a command only the client refused (its own check) is in the
// audit log as denied, with the client's rules beside the helper's verdict.
func TestClientDenialRecorded(t *testing.T) {
	e := newEnv(t, nil)
	resp := e.mustPlan(t, &helperv1.ExecStart{Command: "ls", ClientVerdict: &helperv1.ClientVerdict{Decision: helperv1.Decision_DECISION_DENY, Rules: []string{"destructive.rm-home"}}})
	if resp.GetRequestId() == "" {
		t.Fatal("no record id")
	}
	d, ok := e.aud.find(audit.KindDenied, resp.GetRequestId())
	if !ok || d.Client == nil || d.Client.Decision != "deny" || d.Client.Rules[0] != "destructive.rm-home" || audit.Rules(&d)[0] != "destructive.rm-home" || !strings.Contains(d.Reason, "client") {
		t.Fatalf("denied record %+v", d)
	}
	// A preview (s-code check) records nothing.
	n := len(e.aud.records)
	if _, err := e.client.Plan(ctx(t), &helperv1.PlanRequest{Command: "rm -rf /", Cwd: e.work, Mode: helperv1.Mode_MODE_MANUAL}); err != nil {
		t.Fatal(err)
	}
	if len(e.aud.records) != n {
		t.Fatal("a preview plan wrote a record")
	}
}

// TestPlanFromSubdirectory: the helper's workspace is the Git top level above the cwd, so a
// command in a subdirectory of a repository sees the whole repository.
func TestPlanFromSubdirectory(t *testing.T) {
	git := testenv.RequireTool(t, "git")
	e := newEnv(t, nil)
	repo := filepath.Join(e.work, "repo")
	if out, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	sub := mkdir(t, filepath.Join(repo, "a", "b"))
	resp := e.mustPlan(t, &helperv1.ExecStart{Command: "git status", Cwd: sub})
	if p := resp.GetPlan(); p.GetWorkspace() != repo || p.GetCwd() != sub || p.GetOutcome() != helperv1.Outcome_OUTCOME_RUN {
		t.Fatalf("plan %v", p)
	}
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "git status --short --branch", Cwd: sub}, nil)
	if r.status() != 0 || !strings.Contains(r.stdout.String(), "##") {
		t.Fatalf("git status from a subdirectory: %d %q %q %+v", r.status(), r.stdout.String(), r.stderr.String(), r.denied)
	}
}

// TestHelperRefusesWorkspaces: whatever the client sends, the helper refuses a workspace
// workspace.Validate refuses, with the rule id.
func TestHelperRefusesWorkspaces(t *testing.T) {
	git := testenv.RequireTool(t, "git")
	home := t.TempDir()
	e := newEnv(t, func(c *helperd.Config) { c.Home = home })
	repo := filepath.Join(e.work, "repo")
	if out, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	state := mkdir(t, filepath.Join(e.work, "state"))
	e2 := newEnv(t, func(c *helperd.Config) { c.Home = home; c.StateDirs = []string{state} })
	for _, tc := range []struct {
		name      string
		e         *env
		ws, cwd   string
		rule      string
		extraPath string
	}{
		{"root", e, "/", "/", workspace.RuleRoot, ""},
		{"home", e, home, home, workspace.RuleHome, ""},
		{"above-home", e, filepath.Dir(home), filepath.Dir(home), workspace.RuleHome, ""},
		{"git-dir", e, "", filepath.Join(repo, ".git"), workspace.RuleGitDir, ""},
		{"cwd-in-git-dir", e, repo, filepath.Join(repo, ".git", "hooks"), workspace.RuleGitDir, ""},
		{"config-tree", e, "", mkdir(t, filepath.Join(home, ".config", "proj")), workspace.RuleConfigTree, ""},
		{"ssh", e, "", mkdir(t, filepath.Join(home, ".ssh")), workspace.RuleConfigTree, ""},
		{"state", e2, "", state, workspace.RuleState, ""},
		{"holds-state", e2, "", e.work, workspace.RuleState, ""},
		{"extra-writable-config-tree", e, "", "", workspace.RuleConfigTree, mkdir(t, filepath.Join(home, ".local", "bin"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd := tc.cwd
			if cwd == "" {
				cwd = repo
			}
			start := &helperv1.ExecStart{Command: "true", Workspace: tc.ws, Cwd: cwd, Approval: approve()}
			if tc.extraPath != "" {
				start.ExtraWritable = []string{tc.extraPath}
			}
			r := tc.e.exec(ctx(t), start, nil)
			want := tc.rule
			if tc.extraPath != "" {
				// The plain runner has no sandbox: the extra writable path is refused before
				// its validation (see the daemon's sandbox tests for that path).
				want = helperd.RuleInvalidRequest
			}
			if r.denied.GetRule() != want || r.pid != 0 {
				t.Fatalf("denied %+v, want %s", r.denied, want)
			}
			if d, ok := tc.e.aud.find(audit.KindDenied, r.requestID); !ok || audit.Rules(&d)[0] != want {
				t.Fatalf("denied record %+v", d)
			}
		})
	}
}
