package gitsafe

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// configCases are configuration texts whose reading must match git's own, including the
// odd corners an attacker could use to hide a setting from a weaker parser.
var configCases = map[string]string{
	"plain":                     "[core]\n\tfsmonitor = /x\n",
	"header and setting on one": "[core] fsmonitor = /x\n",
	"mixed case":                "[CoRe]\n\tFsMonitor = /x\n",
	"subsection":                "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n",
	"subsection case kept":      "[filter \"LFS\"]\n\tclean = x\n",
	"subsection escapes":        "[filter \"a\\\"b\\\\c\\d\"]\n\tclean = x\n",
	"dotted subsection":         "[filter.LFS]\n\tclean = x\n",
	"dotted deep":               "[a.b.c]\n\td = x\n",
	"bool without value":        "[core]\n\tbare\n",
	"empty value":               "[core]\n\tpager =\n",
	"quoted value":              "[core]\n\tpager = \"less -R\" ; comment\n",
	"quoted comment chars":      "[core]\n\tpager = \"a;b#c\"\n",
	"escapes":                   "[core]\n\tpager = a\\tb\\nc\\\\d\\\"e\n",
	"continuation":              "[core]\n\tfsmon\\\nitor = x\n",
	"value continuation":        "[core]\n\tpager = le\\\nss\n",
	"continuation in quotes":    "[core]\n\tpager = \"le\\\nss\"\n",
	"internal spaces":           "[core]\n\tpager = a  \t b   \n",
	"comments":                  "# c\n; c\n[core] ; c\n\tpager = x # c\n",
	"crlf":                      "[core]\r\n\tpager = x\r\n",
	"bom":                       "\xef\xbb\xbf[core]\n\tpager = x\n",
	"no final newline":          "[core]\n\tpager = x",
	"backslash at end":          "[core]\n\tpager = x\\",
	"space before equals":       "[core]\n\tpager\t =   x\n",
	"dash in name":              "[my-section]\n\tmy-key = 1\n",
	"include":                   "[include]\n\tpath = other\n[includeIf \"gitdir:/x/\"]\n\tpath = y\n",
	"two sections":              "[a]\nx=1\n[b \"c\"]\ny=2\n[a]\nz\n",
	"lone cr":                   "[core]\r\tpager = a\rb\n",
	// git refuses these; so must we.
	"unterminated quote":      "[core]\n\tpager = \"x\n",
	"bad escape":              "[core]\n\tpager = \\q\n",
	"key outside section":     "pager = x\n", // git reads it; we refuse
	"bad key char":            "[core]\n\tpa_ger = x\n",
	"key starting with digit": "[core]\n\t1pager = x\n",
	"unterminated header":     "[core\n\tpager = x\n",
	"unquoted subsection":     "[filter lfs]\n\tclean = x\n",
	"newline in subsection":   "[filter \"l\nfs\"]\n\tclean = x\n",
	"empty section":           "[]\n\tx = 1\n",
	"junk after subsection":   "[filter \"lfs\" ]\n\tclean = x\n",
	"junk after name":         "[core]\n\tpager x\n",
}

// gitReads returns the settings the real git reads from the file, or ok false when git
// refuses it.
func gitReads(t testing.TB, file string) (entries []configEntry, ok bool) {
	cmd := exec.Command("git", "config", "--file", file, "--no-includes", "--list", "-z")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		k, v, has := strings.Cut(string(rec), "\n")
		entries = append(entries, configEntry{Key: k, Value: v, HasValue: has})
	}
	return entries, true
}

// compareWithGit fails t unless parseConfig reads data as git does: the same settings,
// or an error where git refuses the file. (parseConfig may also refuse a file git reads,
// which fails closed: NUL bytes and keys outside any section.)
func compareWithGit(t *testing.T, data string) {
	file := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	want, gitOK := gitReads(t, file)
	got, err := parseConfig([]byte(data), file)
	if !gitOK {
		if err == nil {
			t.Errorf("git refuses %q but parseConfig read %+v", data, got)
		}
		return
	}
	if err != nil {
		if strings.IndexByte(data, 0) >= 0 {
			return
		}
		for _, e := range want {
			if !strings.Contains(e.Key, ".") {
				return // a key outside any section: git reads it, no git code uses it
			}
		}
		t.Fatalf("git reads %q as %+v but parseConfig failed: %v", data, want, err)
	}
	for i := range got {
		got[i].Line = 0
	}
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseConfig(%q) = %+v, git reads %+v", data, got, want)
	}
}

func TestParseConfigMatchesGit(t *testing.T) {
	testenv.RequireTool(t, "git")
	for name, data := range configCases {
		t.Run(name, func(t *testing.T) { compareWithGit(t, data) })
	}
}

func TestParseConfigLines(t *testing.T) {
	got, err := parseConfig([]byte("# c\n[core]\n\tpager = a\\\nb\n\tfsmonitor = x\n"), "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Line != 3 || got[1].Line != 5 {
		t.Errorf("lines = %+v, want 3 and 5", got)
	}
}

// FuzzParseConfig checks parseConfig against git on arbitrary files (run with
// `go test -fuzz FuzzParseConfig ./internal/gitsafe`; without -fuzz it runs the seeds).
func FuzzParseConfig(f *testing.F) {
	testenv.RequireTool(f, "git")
	for _, data := range configCases {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data string) {
		compareWithGit(t, data)
	})
}

func TestHazardRules(t *testing.T) {
	tests := []struct {
		key, value string
		has        bool
		refused    bool
	}{
		{"core.fsmonitor", "false", true, false},
		{"core.fsmonitor", "0", true, false},
		{"core.fsmonitor", "true", true, true},
		{"core.fsmonitor", "", true, true},
		{"core.fsmonitor", "", false, true},
		{"core.bare", "false", true, false},
		{"core.bare", "", false, true},
		{"core.filemode", "true", true, false},
		{"alias.st", "status -s", true, false},
		{"alias.st", "  !sh", true, true},
		{"submodule.x.update", "rebase", true, false},
		{"submodule.x.update", "!sh", true, true},
		{"submodule.x.url", "https://example.com", true, false},
		{"diff.renames", "true", true, false},
		{"diff.x.textconv", "cat", true, true},
		{"diff.x.command", "cat", true, true},
		{"diff.external", "cat", true, true},
		{"filter.x.smudge", "cat", true, true},
		{"filter.x.required", "true", true, false},
		{"merge.x.driver", "cat", true, true},
		{"merge.ff", "false", true, false},
		{"pager.status", "false", true, false}, // a boolean only turns paging off (git-config(1) pager.<cmd>)
		{"pager.status", "less -R", true, true},
		{"color.pager", "false", true, false},
		{"sendemail.sendmailcmd", "x", true, true},
		{"sendemail.work.tocmd", "x", true, true},
		{"trailer.sign.cmd", "x", true, true},
		{"tar.tgz.command", "x", true, true},
		{"hook.x.event", "pre-commit", true, false},
		{"protocol.file.allow", "always", true, false},
		{"http.proxy", "http://proxy:3128", true, false},
		{"some.future.command", "x", true, true},
		{"includeif.onbranch:main.path", "x", true, true},
		{"core.askpass", "x", true, true},
		{"core.editor", "vi", true, true},
		{"sequence.editor", "vi", true, true},
		{"core.gitproxy", "x", true, true},
		{"core.alternaterefscommand", "x", true, true},
		{"gpg.program", "x", true, true},
		{"gpg.x509.program", "x", true, true},
		{"gpg.ssh.defaultkeycommand", "x", true, true},
		{"remote.origin.url", "https://example.com", true, false},
		{"remote.origin.receivepack", "x", true, true},
		{"remote.origin.vcs", "x", true, true},
		{"uploadpack.packobjectshook", "x", true, true},
		{"sendemail.tocmd", "x", true, true},
		{"sendemail.smtpserver", "/bin/x", true, true},
		{"web.browser", "x", true, true},
		{"browser.x.cmd", "x", true, true},
		{"man.x.path", "x", true, true},
		{"difftool.x.cmd", "x", true, true},
		{"mergetool.x.path", "x", true, true},
		{"imap.tunnel", "x", true, true},
		{"interactive.difffilter", "x", true, true},
		{"trailer.x.command", "x", true, true},
		{"hook.x.command", "x", true, true},
		{"credential.https://x.helper", "x", true, true},
		{"credential.https://x.username", "u", true, false},
		{"core.hookspath", "/dev/null", true, true},
		{"core.worktree", "/x", true, true},
		{"user.name", "x", true, false},
		{"branch.main.remote", "origin", true, false},
	}
	for _, tc := range tests {
		got := hazard(configEntry{Key: tc.key, Value: tc.value, HasValue: tc.has}) != ""
		if got != tc.refused {
			t.Errorf("hazard(%s=%q, has %v) refused = %v, want %v", tc.key, tc.value, tc.has, got, tc.refused)
		}
	}
}
