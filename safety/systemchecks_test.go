package safety

import (
	"os"
	"strings"
	"testing"
)

// TestRootMessages makes no root-context message advise working inside the workspace: admin
// work through the root helper has none to point to.
func TestRootMessages(t *testing.T) {
	a := &analyzer{ctx: Context{Role: RoleRoot}}
	for id, r := range rules {
		m := a.ruleMessage(id)
		for _, bad := range []string{"inside the workspace", "into the workspace", "inside it instead", "Work inside"} {
			if r.decision == Deny && strings.Contains(m, bad) {
				t.Errorf("%s: root-context message %q advises %q", id, m, bad)
			}
		}
	}
	for id := range rootMessages {
		if _, ok := rules[id]; !ok {
			t.Errorf("rootMessages has %s, which is not a rule", id)
		}
	}
	// The verdict carries the root wording.
	v := Check("rm -rf /", Context{Role: RoleRoot, Workspace: "/root/w", Home: "/root"})
	for _, f := range v.Findings {
		if strings.Contains(f.Message, "workspace") {
			t.Errorf("root finding %s: %q", f.Rule, f.Message)
		}
	}
}

// TestRootMessagesDoc keeps docs/rules.md's table of root-context messages in step.
func TestRootMessagesDoc(t *testing.T) {
	data, err := os.ReadFile("../docs/rules.md")
	if err != nil {
		t.Fatalf("read docs/rules.md: %v", err)
	}
	for id, m := range rootMessages {
		if row := "| `" + id + "` | " + m + " |"; !strings.Contains(string(data), row) {
			t.Errorf("docs/rules.md has no row %q", row)
		}
	}
}
