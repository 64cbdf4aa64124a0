package helperwire_test

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/s-code-dev/s-code/internal/helperwire"
	"github.com/s-code-dev/s-code/internal/permission"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

func samplePlan(command string) permission.Plan {
	return permission.Plan{
		Kind: permission.KindExec, Role: "user", Workspace: "/w", Cwd: "/w/sub", Command: command, Shell: "sh",
		Mode: permission.Workspace,
		Verdict: safety.Verdict{Decision: safety.Ask, Findings: []safety.Finding{
			{Rule: "network.access", Decision: safety.Ask, Command: command, Offset: 3, Message: "net <&>"},
			{Rule: "write.workspace", Decision: safety.Ask, Command: "x", Offset: 0, Message: "m"},
		}},
		Sandbox: permission.Sandbox{Sandboxed: true, Confined: true, WritableRoots: []string{"/w", "/c"}, ReadOnlyRoots: []string{"/usr"}, DeniedPaths: []string{"/h/.ssh"}, ProtectedPaths: []string{"/w/.git/hooks"}, Protection: "mount-namespace", Network: true},
		Env:     []string{"A=1", "PATH=/usr/bin"}, Path: "/usr/bin", Network: true, ExtraWritable: []string{"/tmp/out"}, TimeoutMs: 60000,
	}
}

// roundTrip sends p through the wire (PlanToProto, proto bytes, PlanFromProto).
func roundTrip(t testing.TB, p permission.Plan, o permission.Outcome) (permission.Plan, permission.Outcome, string) {
	t.Helper()
	pp := helperwire.PlanToProto(p, o)
	b, err := proto.Marshal(pp)
	if err != nil {
		t.Fatal(err)
	}
	var back helperv1.Plan
	if err := proto.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	q, qo := helperwire.PlanFromProto(&back)
	return q, qo, back.GetDigest()
}

// TestPlanRoundTrip: the client recomputes exactly the helper's digest from the plan it
// got, so the card it renders is what the approval names.
func TestPlanRoundTrip(t *testing.T) {
	p := samplePlan("curl https://example.com")
	o := permission.Decide(p.Mode, p)
	q, qo, digest := roundTrip(t, p, o)
	if digest != p.Digest() || q.Digest() != digest {
		t.Fatalf("digest sent %s, helper %s, recomputed %s\n%s\n%s", digest, p.Digest(), q.Digest(), p.Canonical(), q.Canonical())
	}
	if !reflect.DeepEqual(qo.Rules, o.Rules) || qo.Result != o.Result || qo.Reason != o.Reason {
		t.Errorf("outcome %+v, want %+v", qo, o)
	}
	// Empty lists stay the same plan.
	p = permission.Plan{Kind: permission.KindExec, Role: "root", Workspace: "/", Cwd: "/", Command: "id", Shell: "bash", Mode: permission.Manual, Verdict: safety.Verdict{Decision: safety.Allow}}
	if q, _, d := roundTrip(t, p, permission.Decide(p.Mode, p)); q.Digest() != d || d != p.Digest() {
		t.Fatalf("minimal plan: %s vs %s", q.Digest(), d)
	}
}

func TestEnumsFailClosed(t *testing.T) {
	if helperwire.DecisionFromProto(helperv1.Decision_DECISION_UNSPECIFIED) != safety.Deny || helperwire.DecisionFromProto(99) != safety.Deny {
		t.Error("unspecified or unknown decision is not deny")
	}
	if helperwire.ModeFromProto(helperv1.Mode_MODE_UNSPECIFIED) != permission.ModeUnset || helperwire.ModeFromProto(42) != permission.ModeUnset {
		t.Error("unspecified or unknown mode is not unset")
	}
	if helperwire.ResultFromProto(helperv1.Outcome_OUTCOME_UNSPECIFIED) != permission.Refused || helperwire.ResultFromProto(7) != permission.Refused {
		t.Error("unspecified or unknown outcome is not refused")
	}
	if helperwire.ChannelFromProto(9) != permission.ChannelUnset {
		t.Error("unknown channel is not unset")
	}
	if _, ok := helperwire.ShellFromProto(5); ok {
		t.Error("unknown shell accepted")
	}
	for _, m := range permission.Modes {
		if helperwire.ModeFromProto(helperwire.ModeToProto(m)) != m {
			t.Errorf("mode %v does not round-trip", m)
		}
	}
	a := permission.Approval{Digest: "d", Nonce: "n", Expiry: time.Unix(1700000000, 5).UTC(), Channel: permission.ChannelElicitation}
	if got := helperwire.ApprovalFromProto(helperwire.ApprovalToProto(a)); *got != a {
		t.Errorf("approval round trip %+v, want %+v", *got, a)
	}
	if helperwire.ApprovalFromProto(nil) != nil {
		t.Error("no approval became one")
	}
}

// FuzzPlanRoundTrip: whatever (valid UTF-8) text a plan holds, the client's recomputed
// digest equals the helper's.
func FuzzPlanRoundTrip(f *testing.F) {
	f.Add("curl https://example.com", "/w/sub", "A=<b>&c")
	f.Add("", "/", "")
	f.Add("echo '\u2028' \"\\\"\"", "/w/ü", "X=\u0000")
	f.Fuzz(func(t *testing.T, command, cwd, env string) {
		p := samplePlan(command)
		p.Cwd, p.Env = cwd, []string{env}
		if !utf8Valid(command, cwd, env) {
			return // proto3 strings are UTF-8; gRPC refuses to send anything else
		}
		q, _, d := roundTrip(t, p, permission.Decide(p.Mode, p))
		if q.Digest() != d {
			t.Fatalf("digest %s recomputed %s", d, q.Digest())
		}
	})
}

func TestEditPlanRoundTrip(t *testing.T) {
	p := permission.Plan{
		Kind: permission.KindEdit, Role: "user", Workspace: "/w", Cwd: "/w", Targets: []string{"/w/a.go", "/w/b.go"},
		PatchSHA256: "ab", Turn: "t1", Mode: permission.AcceptEdits,
		Verdict: safety.Verdict{Decision: safety.Ask, Findings: []safety.Finding{{Rule: permission.RuleEditWorkspace, Decision: safety.Ask, Command: "/w/a.go", Message: "m"}}},
	}
	q, _, d := roundTrip(t, p, permission.Decide(p.Mode, p))
	if q.Digest() != d || d != p.Digest() || q.Kind != permission.KindEdit {
		t.Fatalf("edit plan: %s vs %s\n%s\n%s", q.Digest(), d, p.Canonical(), q.Canonical())
	}
}
