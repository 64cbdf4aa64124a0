package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/permission"
)

// cardOptions are how a plan card is printed.
type cardOptions struct {
	width int
	// expand lists every path; otherwise long lists show their first lines and how many
	// more there are.
	expand bool
	// verdict prints the verdict's findings (the run card); check prints its own caret card
	// for them.
	verdict bool
	// local says the client made the plan itself (s-code check without --helper).
	local bool
	// interactive says the card is on a terminal that asks next: a folded list says
	// "press e to expand" (confirmCard) instead of naming --expand.
	interactive bool
	// folded, when set, is set to true when a list was folded.
	folded *bool
}

// cardListLines is how many entries of a path list a folded card shows.
const cardListLines = 3

// outcomeText says what Decide's outcome means for a person.
func outcomeText(o permission.Outcome) string {
	rules := ""
	if len(o.Rules) > 0 {
		rules = " (" + strings.Join(o.Rules, ", ") + ")"
	}
	switch o.Result {
	case permission.Run:
		if o.ByMode {
			return "runs without a person: approved by the mode" + rules
		}
		return "runs without a person"
	case permission.NeedsApproval:
		return "needs a person's approval" + rules
	}
	return "refused" + rules
}

// writePlanCard prints the approval card of a plan: what, where, the verdict with rule ids,
// the sandbox profile, the filesystem scope, network and the outcome in the plan's mode. It
// is the one renderer of the check, run and sandbox cards. Commands and paths are
// redacted as the audit log redacts them.
func writePlanCard(w io.Writer, p permission.Plan, o permission.Outcome, digest string, opt cardOptions) error {
	var b strings.Builder
	rule := strings.Repeat("─", min(max(opt.width, 20), 72))
	red := audit.RedactText
	who := "Plan of the " + p.Role + " helper"
	if opt.local {
		who = "Local plan (" + p.Role + " context; --helper asks the helper)"
	}
	fmt.Fprintf(&b, "%s\n%s, mode %s: %s\n", rule, who, p.Mode, strings.ToUpper(o.Result.String()))
	if p.Command != "" {
		fmt.Fprintf(&b, "  $ %s\n", red(p.Command))
	}
	if p.Workspace == "" {
		// The helper could not make a plan at all (a refused directory or environment).
		fmt.Fprintf(&b, "  outcome: %s\n    %s\n%s\n", outcomeText(o), oneLine(red(o.Reason)), rule)
		_, err := io.WriteString(w, b.String())
		return err
	}
	if p.Cwd != "" && p.Cwd != p.Workspace {
		fmt.Fprintf(&b, "  where: %s (cwd %s)\n", red(p.Workspace), red(p.Cwd))
	} else {
		fmt.Fprintf(&b, "  where: %s\n", red(p.Workspace))
	}
	fmt.Fprintf(&b, "  verdict: %s", p.Verdict.Decision)
	if ids := findingRules(p); len(ids) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(ids, ", "))
	}
	b.WriteString("\n")
	if opt.verdict {
		for _, f := range p.Verdict.Findings {
			fmt.Fprintf(&b, "    • %s [%s] %s\n        %s\n", f.Rule, f.Decision, oneLine(red(f.Command)), oneLine(red(f.Message)))
		}
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "  %s:\n", title)
		n := len(items)
		if !opt.expand && n > cardListLines+1 {
			n = cardListLines
		}
		for _, it := range items[:n] {
			fmt.Fprintf(&b, "    %s\n", red(it))
		}
		if n < len(items) {
			if opt.folded != nil {
				*opt.folded = true
			}
			if opt.interactive {
				fmt.Fprintf(&b, "    … %d more, press e to expand\n", len(items)-n)
			} else {
				fmt.Fprintf(&b, "    … %d more (--expand lists them all)\n", len(items)-n)
			}
		}
	}
	sb := p.Sandbox
	switch {
	case !sb.Sandboxed:
		b.WriteString("  sandbox: none (the root helper runs commands as root, unconfined)\n")
	case sb.Confined && sb.Protection != "":
		fmt.Fprintf(&b, "  sandbox: confined (%s)\n", sb.Protection)
	case sb.Confined:
		b.WriteString("  sandbox: confined\n")
	default:
		fmt.Fprintf(&b, "  sandbox: NOT confined: %s\n", red(sb.Reason))
	}
	if sb.Sandboxed {
		list("writable roots", sb.WritableRoots)
		list("protected paths (read-only)", sb.ProtectedPaths)
		list("denied paths", sb.DeniedPaths)
		list("read-only roots", sb.ReadOnlyRoots)
	}
	if len(p.ExtraWritable) > 0 {
		list("extra writable paths (this run only)", p.ExtraWritable)
	}
	if p.Network {
		b.WriteString("  network: on (for this run only)\n")
	} else {
		b.WriteString("  network: off\n")
	}
	fmt.Fprintf(&b, "  outcome: %s\n", outcomeText(o))
	if o.Result != permission.Run && o.Reason != "" {
		fmt.Fprintf(&b, "    %s\n", oneLine(red(o.Reason)))
	}
	if digest != "" {
		fmt.Fprintf(&b, "  plan digest: %.16s\n", digest)
	}
	b.WriteString(rule + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func findingRules(p permission.Plan) []string {
	var ids []string
	for _, f := range p.Verdict.Findings {
		ids = append(ids, f.Rule)
	}
	return ids
}

// confirmCard shows a card on a terminal and asks question: it renders the card folded
// (unless expand), and while the answer is e, renders it again expanded and asks again. It
// returns whether the answer was y or yes. render writes the card with the options given.
func confirmCard(in io.Reader, w io.Writer, question string, expand bool, render func(opt cardOptions)) (bool, error) {
	r := bufio.NewReader(in)
	for {
		folded := false
		render(cardOptions{expand: expand, interactive: true, folded: &folded})
		if folded {
			fmt.Fprintf(w, "%s [y/N, e to expand] ", question)
		} else {
			fmt.Fprintf(w, "%s [y/N] ", question)
		}
		line, err := r.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("read answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		case "e":
			if folded && err == nil {
				expand = true
				continue
			}
		}
		return false, nil
	}
}
