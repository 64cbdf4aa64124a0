package safety

import (
	"encoding/json"
	"fmt"
)

// Decision is what a verdict or a finding says may happen to a command.
// The zero value is Deny, so that a verdict or finding left unset never reads as permission
// (STYLE.md "Zero values fail closed"). Strictness is Allow < Ask < Deny (see Stricter); it
// is not the numeric order, and no code may compare decisions numerically.
type Decision int

const (
	// Deny means the command must not run; the client exits 126 and the helper refuses it.
	// It is the zero value.
	Deny Decision = iota
	// Ask means a person must approve this one command before it runs.
	Ask
	// Allow means the command may run without asking anyone.
	Allow
)

// String returns "allow", "ask" or "deny"; an out-of-range value prints as "deny" so that a
// corrupted decision never reads as permission.
func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	default:
		return "deny"
	}
}

// ParseDecision returns the Decision named by s ("allow", "ask" or "deny"), or an error
// naming the bad value.
func ParseDecision(s string) (Decision, error) {
	switch s {
	case "allow":
		return Allow, nil
	case "ask":
		return Ask, nil
	case "deny":
		return Deny, nil
	}
	return Deny, fmt.Errorf("unknown decision %q (want allow, ask or deny)", s)
}

// MarshalText encodes the decision as its String form.
func (d Decision) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes "allow", "ask" or "deny"; anything else is an error.
func (d *Decision) UnmarshalText(b []byte) error {
	v, err := ParseDecision(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Stricter returns the stricter of d and o (Deny > Ask > Allow); a value out of range
// counts as Deny.
func (d Decision) Stricter(o Decision) Decision {
	if o.rank() > d.rank() {
		return o.normal()
	}
	return d.normal()
}

// Known reports whether d is one of Allow, Ask and Deny.
func (d Decision) Known() bool { return d == Allow || d == Ask || d == Deny }

// rank is the strictness of d: 0 allow, 1 ask, 2 deny (and anything out of range).
func (d Decision) rank() int {
	switch d {
	case Allow:
		return 0
	case Ask:
		return 1
	}
	return 2
}

// normal returns d, or Deny for a value out of range.
func (d Decision) normal() Decision {
	if d == Allow || d == Ask {
		return d
	}
	return Deny
}

// Finding is one reason behind a verdict: a rule that matched one simple command.
type Finding struct {
	// Rule is the stable, dotted rule id, such as "destructive.rm-root" or "git.config-exec".
	Rule string `json:"rule"`
	// Decision is what this rule alone says.
	Decision Decision `json:"decision"`
	// Command is the source text of the simple command (or redirection) the rule is about.
	Command string `json:"command"`
	// Offset is the byte offset of Command in the judged command string (0-based).
	Offset int `json:"offset"`
	// Message says why, and what to do instead, in words a model will not read as an
	// invitation to retry a variant.
	Message string `json:"message"`
}

// Verdict is the result of Check: the strictest decision of its findings, and the findings.
// A verdict with no findings is Allow.
type Verdict struct {
	Decision Decision  `json:"decision"`
	Findings []Finding `json:"findings"`
}

// MarshalJSON encodes the verdict as {"decision":…,"findings":[…]}, with an empty array
// (never null) when there are no findings.
func (v Verdict) MarshalJSON() ([]byte, error) {
	type plain Verdict
	p := plain(v)
	if p.Findings == nil {
		p.Findings = []Finding{}
	}
	return json.Marshal(p)
}
