package permission_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/safety"
)

const ws = "/home/u/proj"

// execPlan returns the plan of command as a user helper with a confining sandbox would
// build it, its verdict from ShellSafety itself.
func execPlan(mode permission.Mode, command string) permission.Plan {
	v := safety.Check(command, safety.Context{Role: safety.RoleUser, Workspace: ws, Cwd: ws, Home: "/home/u"})
	return permission.Plan{
		Kind: permission.KindExec, Role: "user", Workspace: ws, Cwd: ws, Command: command, Shell: "bash", Mode: mode,
		Verdict: v, Network: permission.NeedsNetwork(v),
		Sandbox: permission.Sandbox{Sandboxed: true, Confined: true, WritableRoots: []string{ws}},
	}
}

func editPlan(mode permission.Mode, v safety.Verdict) permission.Plan {
	return permission.Plan{Kind: permission.KindEdit, Role: "user", Workspace: ws, Cwd: ws, Targets: []string{ws + "/a.go"}, Mode: mode, Verdict: v}
}

// TestModeMatrix covers each mode against each class of operation.
func TestModeMatrix(t *testing.T) {
	const (
		run   = permission.Run
		ask   = permission.NeedsApproval
		never = permission.Refused
	)
	editVerdict := func(d safety.Decision, rule string) safety.Verdict {
		return safety.Verdict{Decision: d, Findings: []safety.Finding{{Rule: rule, Decision: d, Message: rule}}}
	}
	unconfined := func(mode permission.Mode) permission.Plan {
		p := execPlan(mode, "make")
		p.Sandbox.Confined, p.Sandbox.Reason = false, "no Landlock"
		return p
	}
	extra := func(mode permission.Mode) permission.Plan {
		p := execPlan(mode, "echo hi > /tmp/out/x")
		p.ExtraWritable = []string{"/tmp/out"}
		return p
	}
	flagNetwork := func(mode permission.Mode) permission.Plan {
		p := execPlan(mode, "go test ./...")
		p.Network = true
		return p
	}
	root := func(mode permission.Mode) permission.Plan {
		p := execPlan(mode, "touch x")
		p.Role, p.Sandbox = "root", permission.Sandbox{}
		return p
	}
	cases := []struct {
		class string
		plan  func(permission.Mode) permission.Plan
		want  [3]permission.Result // Manual, AcceptEdits, Workspace
		rule  string
	}{
		{"read", func(m permission.Mode) permission.Plan { return execPlan(m, "cat README") }, [3]permission.Result{run, run, run}, ""},
		{"workspace-write", func(m permission.Mode) permission.Plan { return execPlan(m, "touch x") }, [3]permission.Result{ask, ask, run}, "write.workspace"},
		{"workspace-redirect", func(m permission.Mode) permission.Plan { return execPlan(m, "echo hi > x") }, [3]permission.Result{ask, ask, run}, "redirect.workspace"},
		{"workspace-edit", func(m permission.Mode) permission.Plan {
			return editPlan(m, editVerdict(safety.Ask, permission.RuleEditWorkspace))
		}, [3]permission.Result{ask, run, run}, permission.RuleEditWorkspace},
		{"protected-write", func(m permission.Mode) permission.Plan { return execPlan(m, "echo x > .git/config") }, [3]permission.Result{never, never, never}, "redirect.protected"},
		{"protected-edit", func(m permission.Mode) permission.Plan {
			return editPlan(m, editVerdict(safety.Deny, "write.protected"))
		}, [3]permission.Result{never, never, never}, "write.protected"},
		{"outside-write-tmp", func(m permission.Mode) permission.Plan { return execPlan(m, "echo hi > /tmp/out/x") }, [3]permission.Result{ask, ask, ask}, "redirect.tmp"},
		{"outside-write-extra-writable", extra, [3]permission.Result{ask, ask, ask}, permission.RuleExtraWritable},
		{"outside-write-system", func(m permission.Mode) permission.Plan { return execPlan(m, "cp a /etc/x") }, [3]permission.Result{never, never, never}, "write.system"},
		{"network-command", func(m permission.Mode) permission.Plan { return execPlan(m, "curl https://example.com") }, [3]permission.Result{ask, ask, ask}, "network.access"},
		{"network-requested", flagNetwork, [3]permission.Result{ask, ask, ask}, permission.RuleNetworkRequested},
		{"unconfined", unconfined, [3]permission.Result{ask, ask, ask}, "sandbox.unconfined"},
		{"root-helper-write", root, [3]permission.Result{ask, ask, ask}, "write.workspace"},
		{"deny", func(m permission.Mode) permission.Plan { return execPlan(m, "rm -rf /") }, [3]permission.Result{never, never, never}, "destructive.rm-root"},
	}
	for _, tc := range cases {
		for i, mode := range permission.Modes {
			t.Run(tc.class+"/"+mode.String(), func(t *testing.T) {
				p := tc.plan(mode)
				o := permission.Decide(mode, p)
				if o.Result != tc.want[i] {
					t.Fatalf("Decide = %v (%v: %s), want %v", o.Result, o.Rules, o.Reason, tc.want[i])
				}
				if tc.rule != "" && !contains(o.Rules, tc.rule) {
					t.Errorf("rules %v lack %s", o.Rules, tc.rule)
				}
				if o.Result != permission.Run && o.Reason == "" {
					t.Error("no reason")
				}
				if o.ByMode != (o.Result == permission.Run && tc.rule != "") {
					t.Errorf("ByMode = %v", o.ByMode)
				}
			})
		}
	}
	t.Run("unset-mode-refuses-everything", func(t *testing.T) {
		for _, tc := range cases {
			if o := permission.Decide(permission.ModeUnset, tc.plan(permission.ModeUnset)); o.Result != permission.Refused || o.Rules[0] != permission.RuleModeUnset {
				t.Errorf("%s: Decide(unset) = %+v, want refused mode.unset", tc.class, o)
			}
		}
		if o := permission.Decide(permission.Mode(9), execPlan(permission.Manual, "ls")); o.Result != permission.Refused {
			t.Errorf("Decide(out-of-range mode) = %v, want refused", o.Result)
		}
	})
	t.Run("zero-verdict-refuses", func(t *testing.T) {
		p := execPlan(permission.Workspace, "ls")
		p.Verdict = safety.Verdict{}
		if o := permission.Decide(permission.Workspace, p); o.Result != permission.Refused {
			t.Errorf("Decide with a zero verdict = %v, want refused", o.Result)
		}
	})
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestDigest(t *testing.T) {
	p := execPlan(permission.Manual, "curl https://example.com")
	d := p.Digest()
	if len(d) != 64 || strings.Trim(d, "0123456789abcdef") != "" {
		t.Fatalf("digest %q is not 64 hex digits", d)
	}
	if p.Digest() != d {
		t.Fatal("digest not stable")
	}
	var back permission.Plan
	if err := json.Unmarshal(p.Canonical(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Digest() != d {
		t.Errorf("digest after a JSON round trip %s, want %s:\n%s\n%s", back.Digest(), d, p.Canonical(), back.Canonical())
	}
	if strings.Contains(string(p.Canonical()), "\\u003c") || strings.Contains(string(p.Canonical()), "\n") {
		t.Errorf("canonical JSON escapes HTML or has newlines: %s", p.Canonical())
	}
	for name, change := range map[string]func(*permission.Plan){
		"command":        func(q *permission.Plan) { q.Command = "curl https://example.org" },
		"mode":           func(q *permission.Plan) { q.Mode = permission.Workspace },
		"network":        func(q *permission.Plan) { q.Network = !q.Network },
		"extra-writable": func(q *permission.Plan) { q.ExtraWritable = []string{"/tmp/out"} },
		"cwd":            func(q *permission.Plan) { q.Cwd = ws + "/sub" },
		"env":            func(q *permission.Plan) { q.Env = []string{"A=1"} },
		"path":           func(q *permission.Plan) { q.Path = "/usr/bin" },
		"sandbox":        func(q *permission.Plan) { q.Sandbox.WritableRoots = append(q.Sandbox.WritableRoots, "/x") },
		"verdict":        func(q *permission.Plan) { q.Verdict.Findings = nil },
	} {
		q := p
		q.Sandbox.WritableRoots = append([]string(nil), p.Sandbox.WritableRoots...)
		change(&q)
		if q.Digest() == d {
			t.Errorf("changing %s keeps the digest", name)
		}
	}
	// nil and empty slices are the same plan.
	q := p
	q.Env = []string{}
	if q.Digest() != d {
		t.Error("nil and empty env differ in digest")
	}
}

func TestNonces(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	n := permission.NewNonces(5*time.Minute, 0)
	digest := strings.Repeat("a", 64)
	other := strings.Repeat("b", 64)
	approve := func(nonce, d string, exp time.Time) permission.Approval {
		return permission.Approval{Digest: d, Nonce: nonce, Expiry: exp, Channel: permission.ChannelFlag}
	}
	rule := func(err error) string {
		var pe *permission.Error
		if errors.As(err, &pe) {
			return pe.Rule
		}
		if err != nil {
			return "?" + err.Error()
		}
		return ""
	}
	nonce, max := n.Issue(digest, 1000, now)
	if !max.Equal(now.Add(5 * time.Minute)) {
		t.Errorf("expiry %v", max)
	}
	if got := rule(n.Redeem(approve(nonce, digest, now.Add(time.Minute)), digest, 1000, now)); got != "" {
		t.Fatalf("first redeem: %s", got)
	}
	if got := rule(n.Redeem(approve(nonce, digest, now.Add(time.Minute)), digest, 1000, now)); got != permission.RuleApprovalReplayed {
		t.Errorf("replay: %s", got)
	}
	for _, tc := range []struct {
		name         string
		a            func(nonce string) permission.Approval
		planDigest   string
		uid          uint32
		at           time.Time
		want, second string
	}{
		{"mismatch-sent-other-command", func(x string) permission.Approval { return approve(x, digest, time.Time{}) }, other, 1000, now, permission.RuleApprovalMismatch, permission.RuleApprovalReplayed},
		{"mismatch-claims-other-digest", func(x string) permission.Approval { return approve(x, other, time.Time{}) }, other, 1000, now, permission.RuleApprovalMismatch, permission.RuleApprovalReplayed},
		{"expired-by-approval", func(x string) permission.Approval { return approve(x, digest, now.Add(time.Second)) }, digest, 1000, now.Add(2 * time.Second), permission.RuleApprovalExpired, permission.RuleApprovalReplayed},
		{"expired-by-nonce", func(x string) permission.Approval { return approve(x, digest, now.Add(time.Hour)) }, digest, 1000, now.Add(6 * time.Minute), permission.RuleApprovalExpired, permission.RuleApprovalReplayed},
		{"other-uid", func(x string) permission.Approval { return approve(x, digest, time.Time{}) }, digest, 1001, now, permission.RuleApprovalUnknown, ""},
		{"unknown-nonce", func(string) permission.Approval { return approve("feed", digest, time.Time{}) }, digest, 1000, now, permission.RuleApprovalUnknown, permission.RuleApprovalUnknown},
		{"no-channel", func(x string) permission.Approval { a := approve(x, digest, time.Time{}); a.Channel = 0; return a }, digest, 1000, now, permission.RuleApprovalInvalid, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, _ := n.Issue(digest, 1000, now)
			if got := rule(n.Redeem(tc.a(x), tc.planDigest, tc.uid, tc.at)); got != tc.want {
				t.Errorf("redeem: %s, want %s", got, tc.want)
			}
			if tc.second != "" {
				if got := rule(n.Redeem(tc.a(x), tc.planDigest, tc.uid, tc.at)); got != tc.second {
					t.Errorf("second redeem: %s, want %s", got, tc.second)
				}
			}
		})
	}
}

func TestNoncesBounded(t *testing.T) {
	now := time.Now()
	n := permission.NewNonces(time.Minute, 3)
	first, _ := n.Issue("d", 1, now)
	for i := 0; i < 3; i++ {
		n.Issue("d", 1, now.Add(time.Duration(i+1)*time.Second))
	}
	var pe *permission.Error
	if err := n.Redeem(permission.Approval{Digest: "d", Nonce: first, Channel: permission.ChannelFlag}, "d", 1, now); !errors.As(err, &pe) || pe.Rule != permission.RuleApprovalUnknown {
		t.Errorf("oldest nonce beyond the bound: %v, want approval.unknown", err)
	}
}

// TestNoncesFloodForgetsOnlyTheFlooder: a uid that issues plans in a loop (the root helper
// admits several users) fills the store with its own nonces; the bound then forgets its
// nonces, never another uid's pending approval.
func TestNoncesFloodForgetsOnlyTheFlooder(t *testing.T) {
	now := time.Now()
	n := permission.NewNonces(time.Minute, 8)
	victim, _ := n.Issue("a", 1000, now)
	for i := 0; i < 100; i++ {
		n.Issue("b", 2000, now.Add(time.Duration(i+1)*time.Millisecond))
	}
	if err := n.Redeem(permission.Approval{Digest: "a", Nonce: victim, Channel: permission.ChannelTerminal}, "a", 1000, now.Add(time.Second)); err != nil {
		t.Fatalf("uid 1000's pending approval after uid 2000 issued 100 plans: %v, want it redeemed", err)
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range permission.Modes {
		got, err := permission.ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := permission.ParseMode("yolo"); err == nil || !strings.Contains(err.Error(), "manual, accept-edits or workspace") {
		t.Errorf("ParseMode(yolo) = %v", err)
	}
	var zero permission.Mode
	if zero != permission.ModeUnset {
		t.Error("zero mode is not unset")
	}
}
