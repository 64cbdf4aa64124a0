package safety_test

import (
	"encoding/json"
	"testing"

	"github.com/s-code-dev/s-code/safety"
)

// TestZeroDecisionDenies: a decision, finding or verdict left unset means deny, and every
// way of combining decisions keeps a value out of range as deny.
func TestZeroDecisionDenies(t *testing.T) {
	var d safety.Decision
	if d != safety.Deny || d.String() != "deny" {
		t.Errorf("zero Decision = %v, want deny", d)
	}
	var f safety.Finding
	if f.Decision != safety.Deny {
		t.Errorf("zero Finding decides %v", f.Decision)
	}
	var v safety.Verdict
	if v.Decision != safety.Deny {
		t.Errorf("zero Verdict decides %v", v.Decision)
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) != `{"decision":"deny","findings":[]}` {
		t.Errorf("zero Verdict JSON %s, %v", b, err)
	}
	for _, tc := range []struct{ a, b, want safety.Decision }{
		{safety.Allow, safety.Ask, safety.Ask},
		{safety.Ask, safety.Allow, safety.Ask},
		{safety.Allow, safety.Deny, safety.Deny},
		{safety.Deny, safety.Allow, safety.Deny},
		{safety.Ask, safety.Deny, safety.Deny},
		{safety.Allow, safety.Allow, safety.Allow},
		{safety.Allow, safety.Decision(7), safety.Deny},
		{safety.Decision(-1), safety.Allow, safety.Deny},
	} {
		if got := tc.a.Stricter(tc.b); got != tc.want {
			t.Errorf("%v.Stricter(%v) = %v, want %v", int(tc.a), int(tc.b), got, tc.want)
		}
	}
	if safety.Decision(7).Known() || !safety.Deny.Known() {
		t.Error("Known is wrong")
	}
	// Check builds its verdicts from Allow explicitly: no findings means allow, and a
	// panic means deny.
	if got := safety.Check("ls", safety.Context{Workspace: "/w", Cwd: "/w"}); got.Decision != safety.Allow {
		t.Errorf("Check(ls) = %v", got.Decision)
	}
	var pd safety.Decision
	if err := pd.UnmarshalText([]byte("maybe")); err == nil || pd != safety.Deny {
		t.Errorf("UnmarshalText(maybe) = %v, %v", pd, err)
	}
}
