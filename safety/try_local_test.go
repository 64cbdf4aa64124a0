package safety

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

func TestTry(t *testing.T) {
	s := os.Getenv("TRY")
	if s == "" {
		t.Skip()
	}
	role := "user"
	if os.Getenv("ROOT") != "" {
		role = "root"
	}
	for _, line := range strings.Split(s, "\n@@\n") {
		v := Check(line, caseContext(role))
		fmt.Printf("%-5s %q\n", v.Decision, line)
		for _, f := range v.Findings {
			fmt.Printf("      %s %s @%d %q: %s\n", f.Decision, f.Rule, f.Offset, f.Command, f.Message)
		}
	}
}

func TestUnknownTop(t *testing.T) {
	if os.Getenv("UNK") == "" {
		t.Skip()
	}
	cmds := tldrCommands(t)
	cnt := map[string]int{}
	for _, c := range cmds {
		v := Check(c, caseContext("user"))
		for _, f := range v.Findings {
			if f.Rule == os.Getenv("UNK") {
				k := f.Message
				if i := strings.Index(k, ". "); i > 0 {
					k = k[:i]
				}
				if os.Getenv("FULL") != "" {
					k = c
				}
				cnt[k]++
			}
		}
	}
	for k, n := range cnt {
		if n >= 15 || os.Getenv("FULL") != "" {
			fmt.Printf("%5d %s\n", n, k)
		}
	}
}

func TestPrintRules(t *testing.T) {
	if os.Getenv("RULES") == "" {
		t.Skip()
	}
	ids := make([]string, 0, len(rules))
	for id := range rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := rules[id]
		fmt.Printf("| `%s` | %s | %s |\n", id, r.decision, strings.ReplaceAll(r.message, "|", "\\|"))
	}
}
