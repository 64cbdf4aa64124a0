package helperd

import (
	"fmt"
	"slices"
	"syscall"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/helperwire"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// dialectOf maps the wire's shell to a ShellSafety dialect.
func dialectOf(s helperv1.Shell) (safety.Dialect, error) {
	switch s {
	case helperv1.Shell_SHELL_UNSPECIFIED, helperv1.Shell_SHELL_BASH:
		return safety.Bash, nil
	case helperv1.Shell_SHELL_SH:
		return safety.POSIX, nil
	}
	return safety.Bash, fmt.Errorf("unknown shell %d", s)
}

// signalOf maps the wire's signal names to this system's signals.
func signalOf(s helperv1.Signal) (syscall.Signal, bool) {
	switch s {
	case helperv1.Signal_SIGNAL_INT:
		return syscall.SIGINT, true
	case helperv1.Signal_SIGNAL_TERM:
		return syscall.SIGTERM, true
	case helperv1.Signal_SIGNAL_HUP:
		return syscall.SIGHUP, true
	case helperv1.Signal_SIGNAL_QUIT:
		return syscall.SIGQUIT, true
	case helperv1.Signal_SIGNAL_KILL:
		return syscall.SIGKILL, true
	case helperv1.Signal_SIGNAL_USR1:
		return syscall.SIGUSR1, true
	case helperv1.Signal_SIGNAL_USR2:
		return syscall.SIGUSR2, true
	case helperv1.Signal_SIGNAL_WINCH:
		return syscall.SIGWINCH, true
	}
	return 0, false
}

// DecisionToProto maps a ShellSafety decision to the wire (helperwire.DecisionToProto).
func DecisionToProto(d safety.Decision) helperv1.Decision { return helperwire.DecisionToProto(d) }

func decisionString(d helperv1.Decision) string { return helperwire.DecisionFromProto(d).String() }

func ruleIDs(v safety.Verdict) []string {
	ids := make([]string, 0, len(v.Findings))
	for _, f := range v.Findings {
		ids = append(ids, f.Rule)
	}
	return ids
}

// summary reduces a verdict to what the audit log keeps; nil stays nil.
func summary(v *safety.Verdict) *audit.VerdictSummary {
	if v == nil {
		return nil
	}
	return &audit.VerdictSummary{Decision: v.Decision.String(), Rules: ruleIDs(*v)}
}

// denialSummary is the helper verdict of a denied record: deny, the rule that refused the
// request first, then the rule ids of the ShellSafety verdict (nil when the request was
// refused before it was judged).
func denialSummary(rule string, v *safety.Verdict) *audit.VerdictSummary {
	rules := []string{rule}
	if v != nil {
		for _, id := range ruleIDs(*v) {
			if !slices.Contains(rules, id) {
				rules = append(rules, id)
			}
		}
	}
	return &audit.VerdictSummary{Decision: safety.Deny.String(), Rules: rules}
}

// clientVerdict records what the client said it decided (informative only).
func clientVerdict(cv *helperv1.ClientVerdict) *audit.VerdictSummary {
	if cv == nil {
		return nil
	}
	return &audit.VerdictSummary{Decision: decisionString(cv.GetDecision()), Rules: cv.GetRules()}
}
