package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/safety"
)

// TestConfirmCardExpand: on a terminal a folded card says "press e to expand"; the answer e
// prints it again with every path and asks again; y approves, anything else refuses; a
// card that folds nothing offers no e.
func TestConfirmCardExpand(t *testing.T) {
	var paths []string
	for i := range 9 {
		paths = append(paths, fmt.Sprintf("/w/.git/hooks/h%d", i))
	}
	p := permission.Plan{Kind: permission.KindExec, Role: "user", Command: "make", Workspace: "/w", Cwd: "/w", Mode: permission.Manual,
		Sandbox: permission.Sandbox{Sandboxed: true, Confined: true, WritableRoots: []string{"/w"}, ProtectedPaths: paths},
		Verdict: safety.Verdict{Decision: safety.Ask}}
	o := permission.Outcome{Result: permission.NeedsApproval, Rules: []string{"unknown.command"}, Reason: "r"}
	for _, c := range []struct {
		answers string
		yes     bool
		cards   int
	}{
		{"e\ny\n", true, 2},
		{"e\n\n", false, 2},
		{"y\n", true, 1},
		{"n\n", false, 1},
		{"e\ne\n", false, 2}, // e on an expanded card is not a yes
		{"e", false, 1},      // end of input: no
	} {
		var w strings.Builder
		yes, err := confirmCard(strings.NewReader(c.answers), &w, "Run this command?", false, func(opt cardOptions) {
			opt.width = 72
			writePlanCard(&w, p, o, "d", opt)
		})
		out := w.String()
		if err != nil || yes != c.yes || strings.Count(out, "Plan of the user helper") != c.cards {
			t.Errorf("answers %q: yes=%v err=%v cards=%d\n%s", c.answers, yes, err, strings.Count(out, "Plan of the user helper"), out)
			continue
		}
		first := out[:strings.Index(out, "Run this command?")]
		if !strings.Contains(first, "… 6 more, press e to expand") || strings.Contains(first, "h8") || strings.Contains(out, "--expand") {
			t.Errorf("answers %q: the folded card:\n%s", c.answers, first)
		}
		if !strings.Contains(out, "[y/N, e to expand]") {
			t.Errorf("answers %q: no e offered:\n%s", c.answers, out)
		}
		if c.cards == 2 {
			second := out[len(first):]
			if !strings.Contains(second, "/w/.git/hooks/h8") || strings.Contains(second, "more, press e") || !strings.Contains(second, "Run this command? [y/N] ") {
				t.Errorf("answers %q: the expanded card:\n%s", c.answers, second)
			}
		}
	}
	// --expand: nothing folds, no e.
	var w strings.Builder
	confirmCard(strings.NewReader("e\n"), &w, "Run this command?", true, func(opt cardOptions) { writePlanCard(&w, p, o, "d", opt) })
	if !strings.Contains(w.String(), "h8") || strings.Contains(w.String(), "e to expand") {
		t.Errorf("--expand:\n%s", w.String())
	}
}
