package safety

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Policy is a set of extra rules loaded from TOML (see docs/policy.md): argv prefix rules
// with a decision, extra protected paths (writes are denied) and extra credential paths
// (reads ask; uploads are denied). A policy can make verdicts stricter, or raise ask to allow
// for the commands its allow rules match; a built-in deny is never lowered. A Policy is
// immutable after ParsePolicy and safe for concurrent use.
type Policy struct {
	Rules           []PolicyRule
	ProtectedPaths  []string // absolute, "~/…" or workspace-relative paths
	CredentialPaths []string // absolute, "~/…" or workspace-relative paths
	// EnvAllow are the environment variable names a helper request may add beyond the
	// helper's built-in allowlist (a name, or a prefix followed by "*"); ShellSafety itself
	// does not use them. The helper checks each pattern (execrun.ValidateEnvAllow) and
	// still refuses the names its floor refuses (execrun.CheckEnvName).
	EnvAllow []string
}

// PolicyRule is one argv prefix rule of a policy.
type PolicyRule struct {
	// ID names the rule; findings carry the rule id "policy.<ID>".
	ID string
	// Match is an argv prefix: each element matches one argument exactly, and a final "*"
	// matches any remaining arguments (none included). Without a final "*" the argv must
	// match exactly.
	Match []string
	// Decision is what a matching command gets: deny and ask add a finding; allow lowers the
	// command's own ask findings to allow (never a deny).
	Decision Decision
	// Message is shown in the finding.
	Message string
}

// PolicyError is a policy file that could not be used: the line (1-based, 0 when unknown)
// and the reason.
type PolicyError struct {
	Line   int
	Reason string
}

// Error returns "policy line N: reason".
func (e *PolicyError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("policy line %d: %s", e.Line, e.Reason)
	}
	return "policy: " + e.Reason
}

type policyFile struct {
	ProtectedPaths  []string         `toml:"protected_paths"`
	CredentialPaths []string         `toml:"credential_paths"`
	EnvAllow        []string         `toml:"env_allow"`
	Rules           []policyRuleFile `toml:"rule"`
}

type policyRuleFile struct {
	ID       string   `toml:"id"`
	Match    []string `toml:"match"`
	Decision string   `toml:"decision"`
	Message  string   `toml:"message"`
}

// ParsePolicy parses a policy file's bytes. Unknown keys, wrong types, empty or duplicate
// ids, empty match lists, a "*" anywhere but last, and unknown decisions are refused with a
// *PolicyError naming the line.
func ParsePolicy(data []byte) (*Policy, error) {
	var f policyFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var se *toml.StrictMissingError
		if errors.As(err, &se) && len(se.Errors) > 0 {
			row, _ := se.Errors[0].Position()
			keys := se.Errors[0].Key()
			return nil, &PolicyError{Line: row, Reason: "unknown key " + strings.Join(keys, ".")}
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, &PolicyError{Line: row, Reason: de.Error()}
		}
		return nil, &PolicyError{Reason: err.Error()}
	}
	p := &Policy{}
	seen := map[string]bool{}
	for i, r := range f.Rules {
		line := ruleLine(data, i)
		if r.ID == "" {
			return nil, &PolicyError{Line: line, Reason: "rule has no id"}
		}
		if seen[r.ID] {
			return nil, &PolicyError{Line: line, Reason: fmt.Sprintf("duplicate rule id %q", r.ID)}
		}
		seen[r.ID] = true
		if len(r.Match) == 0 {
			return nil, &PolicyError{Line: line, Reason: fmt.Sprintf("rule %q has no match", r.ID)}
		}
		for j, m := range r.Match {
			if m == "*" && j != len(r.Match)-1 {
				return nil, &PolicyError{Line: line, Reason: fmt.Sprintf("rule %q: \"*\" may only be the last element of match", r.ID)}
			}
			if m == "" {
				return nil, &PolicyError{Line: line, Reason: fmt.Sprintf("rule %q: empty match element", r.ID)}
			}
		}
		if r.Match[0] == "*" {
			return nil, &PolicyError{Line: line, Reason: fmt.Sprintf("rule %q: match must name a program", r.ID)}
		}
		d, err := ParseDecision(r.Decision)
		if err != nil {
			return nil, &PolicyError{Line: line, Reason: fmt.Sprintf("rule %q: %v", r.ID, err)}
		}
		p.Rules = append(p.Rules, PolicyRule{ID: r.ID, Match: r.Match, Decision: d, Message: r.Message})
	}
	for _, list := range [][]string{f.ProtectedPaths, f.CredentialPaths} {
		for _, s := range list {
			if s == "" || strings.ContainsRune(s, 0) {
				return nil, &PolicyError{Line: lineOf(data, s), Reason: fmt.Sprintf("bad path %q", s)}
			}
		}
	}
	for _, e := range f.EnvAllow {
		if e == "" || e == "*" || strings.ContainsAny(e, "= \x00") {
			return nil, &PolicyError{Line: lineOf(data, "env_allow"), Reason: fmt.Sprintf("env_allow: bad name %q", e)}
		}
	}
	p.ProtectedPaths = f.ProtectedPaths
	p.CredentialPaths = f.CredentialPaths
	p.EnvAllow = f.EnvAllow
	return p, nil
}

// ruleLine returns the line of the i-th [[rule]] table header, or 0.
func ruleLine(data []byte, i int) int {
	n := 0
	for ln, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "[[rule]]" {
			if n == i {
				return ln + 1
			}
			n++
		}
	}
	return 0
}

// lineOf returns the first line that contains s, or 0.
func lineOf(data []byte, s string) int {
	for ln, line := range strings.Split(string(data), "\n") {
		if s != "" && strings.Contains(line, s) {
			return ln + 1
		}
	}
	return 0
}

// LoadPolicy reads and parses the policy file at path.
func LoadPolicy(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("load policy: %w", err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("load policy %s: %w", file, err)
	}
	return p, nil
}

// match reports whether argv matches the rule's prefix pattern.
func (r *PolicyRule) match(argv []arg) bool {
	m := r.Match
	star := m[len(m)-1] == "*"
	if star {
		m = m[:len(m)-1]
	}
	if len(argv) < len(m) || !star && len(argv) != len(m) {
		return false
	}
	for i, want := range m {
		x := argv[i]
		if x.dyn {
			return false
		}
		got := x.s
		if i == 0 {
			if j := strings.LastIndexByte(got, '/'); j >= 0 && systemBinDir(got[:j]) {
				got = got[j+1:]
			}
		}
		if got != want {
			return false
		}
	}
	return true
}

// applyPolicy applies the policy's argv rules to one judged command whose own findings
// start at index start.
func (a *analyzer) applyPolicy(argv []arg, c *callInfo, start int) {
	norm := gitNormalized(argv)
	for i := range a.ctx.Policy.Rules {
		r := &a.ctx.Policy.Rules[i]
		if !r.match(argv) && (norm == nil || !r.match(norm)) {
			continue
		}
		if r.Decision == Allow && anyDyn(argv) {
			// go test $X: a run-time argument may be an option that runs a program; an
			// allow rule's "*" matches only arguments known now.
			continue
		}
		msg := r.Message
		if msg == "" {
			msg = "Matched policy rule " + r.ID
		}
		if r.Decision == Allow {
			kept := a.findings[:start]
			for _, f := range a.findings[start:] {
				if f.Decision != Ask || !f.lowerable() {
					kept = append(kept, f)
				}
			}
			a.findings = kept
		}
		a.find(c, "policy."+r.ID, r.Decision, msg)
	}
}

// gitNormalized returns a git argv without its global options (git -C dir -c k=v push →
// git push), so that policy rules name subcommands; nil when argv is not such a git command.
func gitNormalized(argv []arg) []arg {
	if len(argv) < 2 || argv[0].s != "git" || !strings.HasPrefix(argv[1].s, "-") {
		return nil
	}
	i := 1
	for i < len(argv) && strings.HasPrefix(argv[i].s, "-") {
		s := argv[i].s
		i++
		if !strings.Contains(s, "=") && gitGlobalArg[s] {
			i++
		}
	}
	if i >= len(argv) {
		return nil
	}
	return append([]arg{argv[0]}, argv[i:]...)
}

// lowerable reports whether a policy allow rule may lower this ask finding: findings about
// parsing, budget, run-time code, tool options that run other programs, credential reads
// and Git running in a repository outside the workspace stay.
func (f Finding) lowerable() bool {
	switch f.Rule {
	case "credential.read", "git.repo-override", "env.ifs", "exec.tool-exec":
		return false // exec.tool-exec: go test -exec PROG, rg --pre PROG run programs the rule does not name
	}
	switch {
	case strings.HasPrefix(f.Rule, "parse."), strings.HasPrefix(f.Rule, "budget."),
		strings.HasPrefix(f.Rule, "dynamic."), strings.HasPrefix(f.Rule, "internal."),
		strings.HasSuffix(f.Rule, ".dynamic-path"):
		return false
	}
	return true
}

// policyPath resolves a policy path against the workspace and home directory.
func (a *analyzer) policyPath(s string) string {
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		if a.ctx.Home == "" {
			return ""
		}
		return path.Clean(a.ctx.Home + s[1:])
	case strings.HasPrefix(s, "/"):
		return path.Clean(s)
	default:
		if a.ctx.Workspace == "" {
			return ""
		}
		return path.Clean(a.ctx.Workspace + "/" + s)
	}
}

// policyMatch reports whether p (possibly with run-time or glob components) may lie at or
// under one of the policy paths.
func (a *analyzer) policyMatch(p string, list []string) bool {
	for _, s := range list {
		q := a.policyPath(s)
		if q == "" {
			continue
		}
		if within(strings.ToLower(p), strings.ToLower(q)) {
			return true
		}
		if strings.ContainsAny(p, "*?[\x00") {
			pc := splitPath(p)
			qc := splitPath(strings.ToLower(q))
			if len(pc) >= len(qc) && underPattern(pc, qc) {
				return true
			}
		}
	}
	return false
}

// policyProtected reports whether p is a protected path of the policy.
func (a *analyzer) policyProtected(p string, _ []string) bool {
	return a.ctx.Policy != nil && a.policyMatch(p, a.ctx.Policy.ProtectedPaths)
}

// policyCredential reports whether p is a credential path of the policy.
func (a *analyzer) policyCredential(p string) bool {
	return a.ctx.Policy != nil && a.policyMatch(p, a.ctx.Policy.CredentialPaths)
}
