package safety

import (
	"strings"
	"testing"
)

func TestGitKeySetting(t *testing.T) {
	tests := []struct {
		key, value string
		known      bool
		want       bool
		kind       GitKeyKind
	}{
		{"hook.lint.command", "x", true, true, GitKeyProgram},
		{"HOOK.Lint.COMMAND", "x", true, true, GitKeyProgram},
		{"hook.lint.event", "pre-commit", true, false, 0},
		{"trailer.sign.cmd", "x", true, true, GitKeyProgram},
		{"sendemail.work.sendmailcmd", "x", true, true, GitKeyProgram},
		{"imap.tunnel", "x", true, true, GitKeyProgram},
		{"alias.st", "status", true, false, 0},
		{"alias.st", " !sh", true, true, GitKeyProgram},
		{"alias.st", "", false, true, GitKeyProgram},
		{"submodule.x.update", "rebase", true, false, 0},
		{"submodule.x.update", "!x", true, true, GitKeyProgram},
		{"core.fsmonitor", "false", true, false, 0},
		{"core.fsmonitor", "true", true, true, GitKeyProgram},
		{"pager.log", "off", true, false, 0},
		{"pager.log", "less -S", true, true, GitKeyProgram},
		{"core.pager", "false", true, true, GitKeyProgram}, // core.pager=false runs a program named false
		{"core.x.pager", "x", true, true, GitKeyProgram},   // the name style catches it
		{"color.pager", "true", true, false, 0},
		{"include.path", "x", true, true, GitKeyInclude},
		{"includeif.gitdir:/x/.path", "x", true, true, GitKeyInclude},
		{"core.worktree", "/x", true, true, GitKeyLocation},
		{"protocol.ext.allow", "always", true, true, GitKeyTransport},
		{"credential.helper", "store", true, true, GitKeyProgram},
		{"credential.https://x.helper", "store", true, true, GitKeyProgram},
		{"credential.username", "u", true, false, 0},
		{"future.thing.cmd", "x", true, true, GitKeyProgram},
		{"future.thing.cmd", "true", true, false, 0},
		{"diff.tool", "meld", true, false, 0},
		{"user.name", "x", true, false, 0},
		{"", "x", true, false, 0},
		{"alias", "!x", true, false, 0},
		{".", "x", true, false, 0},
		{"a..cmd", "x", true, true, GitKeyProgram},
	}
	for _, tc := range tests {
		e, ok := GitKeySetting(tc.key, tc.value, tc.known)
		if ok != tc.want || ok && e.Kind != tc.kind {
			t.Errorf("GitKeySetting(%q, %q, %v) = %+v, %v; want %v kind %v", tc.key, tc.value, tc.known, e, ok, tc.want, tc.kind)
		}
		if ok && e.Reason == "" {
			t.Errorf("GitKeySetting(%q): no reason", tc.key)
		}
	}
}

// TestGitProgramKeysTable checks the table's own form: lower-case patterns of two or three
// parts, a kind and a reason each, no pattern twice, and a copy returned.
func TestGitProgramKeysTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range GitProgramKeys() {
		if k.Pattern != strings.ToLower(k.Pattern) || strings.Count(k.Pattern, ".") < 1 || strings.Count(k.Pattern, ".") > 2 {
			t.Errorf("pattern %q is not section.name or section.*.name in lower case", k.Pattern)
		}
		if seen[k.Pattern] {
			t.Errorf("pattern %q listed twice", k.Pattern)
		}
		seen[k.Pattern] = true
		if k.Kind.String() == "unknown" || k.Reason == "" {
			t.Errorf("%s: kind %v reason %q", k.Pattern, k.Kind, k.Reason)
		}
		// Every pattern matches its own example key.
		ex := strings.ReplaceAll(k.Pattern, "*", "x")
		if _, ok := GitKeySetting(ex, "!x y", true); !ok {
			t.Errorf("%s does not match %s", k.Pattern, ex)
		}
	}
	keys := GitProgramKeys()
	keys[0].Pattern = "changed"
	if GitProgramKeys()[0].Pattern == "changed" {
		t.Error("GitProgramKeys returns the table itself")
	}
}

// FuzzGitKeySetting: GitKeySetting never panics, ignores case in keys, and an unknown value
// is never judged more leniently than a known one.
func FuzzGitKeySetting(f *testing.F) {
	for _, k := range gitProgramKeys {
		f.Add(strings.ReplaceAll(k.Pattern, "*", "Sub"), "!x")
	}
	f.Add("pager.log", "false")
	f.Add("core.fsmonitor", "0")
	f.Fuzz(func(t *testing.T, key, value string) {
		_, ok := GitKeySetting(key, value, true)
		_, okUpper := GitKeySetting(strings.ToUpper(key), value, true)
		if ok != okUpper && strings.ToLower(strings.ToUpper(key)) == strings.ToLower(key) {
			t.Fatalf("GitKeySetting(%q) = %v but upper case = %v", key, ok, okUpper)
		}
		if _, okDyn := GitKeySetting(key, value, false); ok && !okDyn {
			t.Fatalf("GitKeySetting(%q, %q): known value runs a program, unknown value does not", key, value)
		}
	})
}
