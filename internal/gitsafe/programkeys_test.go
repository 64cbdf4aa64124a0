package gitsafe

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/safety"
)

// programKeyCase is one configuration key of safety.GitProgramKeys with a value that makes
// git run a program. Both layers judge it: ShellSafety must deny setting it (git -c, git
// config, --config-env) in both contexts, and the Git tools must refuse a repository whose
// .git/config sets it. Where git can be made to run the program without a terminal or a
// network, control proves it with the real git first.
type programKeyCase struct {
	key string
	// value returns the value; m is a program that leaves a trace when run. nil: m.script.
	value func(t *testing.T, m marker) string
	// extra are more settings (key=value, {m} for the program) the control needs.
	extra []string
	// attrs is a .gitattributes to commit first (diff=x, filter=f).
	attrs string
	// control are git arguments (after the -c settings) that run the program; stdin feeds
	// them. nil: no control (git needs a terminal, a network or a newer git).
	control []string
	stdin   string
	// tool is false for keys the tools do not refuse (transport keys).
	notTool bool
}

func bang(t *testing.T, m marker) string { return "!" + m.script }

var programKeyCases = []programKeyCase{
	{key: "alias.st", value: bang, control: []string{"st"}},
	{key: "alias.sub.cmd", value: bang},
	{key: "browser.evil.cmd", control: []string{"web--browse", "--browser=evil", "http://example.invalid/"}},
	{key: "browser.firefox.path", control: []string{"web--browse", "--browser=firefox", "http://example.invalid/"}},
	{key: "core.alternateRefsCommand"},
	{key: "core.askPass"},
	{key: "core.editor", control: []string{"commit", "--allow-empty"}},
	{key: "core.fsmonitor", control: []string{"status"}},
	{key: "core.gitProxy", control: []string{"fetch", "git://example.invalid/x"}},
	{key: "core.hooksPath", value: func(t *testing.T, m marker) string {
		dir := filepath.Join(t.TempDir(), "hooks")
		hookDir(t, dir, m)
		return dir
	}, control: []string{"commit", "-q", "--allow-empty", "-m", "x"}},
	{key: "core.pager"},
	{key: "core.sshCommand", control: []string{"fetch", "ssh://example.invalid/x"}},
	{key: "credential.helper", control: []string{"credential", "fill"}, stdin: "protocol=https\nhost=example.invalid\n\n"},
	{key: "credential.https://example.invalid.helper", control: []string{"credential", "fill"}, stdin: "protocol=https\nhost=example.invalid\n\n"},
	{key: "diff.external", control: []string{"diff"}},
	{key: "diff.conv.command", attrs: "*.txt diff=conv\n", control: []string{"diff"}},
	{key: "diff.conv.textconv", attrs: "*.txt diff=conv\n", control: []string{"diff"}},
	{key: "difftool.evil.cmd", extra: []string{"diff.tool=evil"}, control: []string{"difftool", "-y"}},
	{key: "difftool.vimdiff.path", extra: []string{"diff.tool=vimdiff"}, control: []string{"difftool", "-y"}},
	{key: "filter.f.clean", attrs: "*.txt filter=f\n", control: []string{"diff"}},
	{key: "filter.f.smudge", attrs: "*.txt filter=f\n", control: []string{"checkout", "HEAD~1", "--", "a.txt"}},
	{key: "filter.f.process", attrs: "*.txt filter=f\n", control: []string{"add", "a.txt"}},
	{key: "gpg.program", control: []string{"commit", "-q", "-S", "--allow-empty", "-m", "x"}},
	{key: "gpg.x509.program", extra: []string{"gpg.format=x509"}, control: []string{"commit", "-q", "-S", "--allow-empty", "-m", "x"}},
	{key: "gpg.ssh.defaultKeyCommand", extra: []string{"gpg.format=ssh"}, control: []string{"commit", "-q", "-S", "--allow-empty", "-m", "x"}},
	{key: "guitool.evil.cmd"},
	{key: "help.browser"},
	{key: "hook.lint.command", extra: []string{"hook.lint.event=pre-commit"}},
	{key: "imap.tunnel", extra: []string{"imap.folder=INBOX"}, control: []string{"imap-send"}, stdin: "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: a <a@example.com>\nDate: Tue, 1 Dec 2026 09:08:43 +0000\nSubject: [PATCH] x\n\n---\n f | 1 +\n"},
	{key: "instaweb.browser"},
	{key: "instaweb.httpd"},
	{key: "instaweb.modulePath"},
	{key: "interactive.diffFilter"},
	{key: "man.viewer", value: func(*testing.T, marker) string { return "evil" }},
	{key: "man.evil.cmd", extra: []string{"man.viewer=evil"}, control: []string{"help", "-m", "log"}},
	{key: "man.man.path"},
	{key: "merge.evil.driver"},
	{key: "mergetool.evil.cmd"},
	{key: "mergetool.vimdiff.path"},
	{key: "pager.log"},
	{key: "remote.origin.receivepack", extra: []string{"remote.origin.url={repo}"}, control: []string{"push", "origin", "main"}},
	{key: "remote.origin.uploadpack", extra: []string{"remote.origin.url={repo}"}, control: []string{"fetch", "origin"}},
	{key: "remote.origin.vcs", value: func(*testing.T, marker) string { return "evil" }},
	{key: "sendemail.sendmailCmd"},
	{key: "sendemail.work.sendmailCmd"},
	{key: "sendemail.smtpServer"},
	{key: "sendemail.work.smtpServer"},
	{key: "sendemail.toCmd"},
	{key: "sendemail.work.toCmd"},
	{key: "sendemail.ccCmd"},
	{key: "sendemail.work.ccCmd"},
	{key: "sendemail.headerCmd"},
	{key: "sendemail.work.headerCmd"},
	{key: "sequence.editor", extra: []string{"rebase.autoStash=true"}, control: []string{"rebase", "-i", "HEAD~1"}},
	{key: "submodule.sub.update", value: bang},
	{key: "tar.evil.command", control: []string{"archive", "--format=evil", "-o", "out.evil", "HEAD"}},
	{key: "trailer.sign.cmd", control: []string{"interpret-trailers", "--trailer", "sign=x"}, stdin: "subject\n\nbody\n"},
	{key: "trailer.sign.command", control: []string{"interpret-trailers", "--trailer", "sign=x"}, stdin: "subject\n\nbody\n"},
	{key: "uploadPack.packObjectsHook"}, // only read from protected configuration, which a local fetch does not pass on
	{key: "web.browser"},
	{key: "include.path", value: func(t *testing.T, m marker) string {
		inc := filepath.Join(t.TempDir(), "evil.inc")
		writeFile(t, inc, "[core]\n\tfsmonitor = "+m.script+"\n")
		return inc
	}, control: []string{"status"}},
	{key: "includeIf.onbranch:main.path", value: func(t *testing.T, m marker) string {
		inc := filepath.Join(t.TempDir(), "evil.inc")
		writeFile(t, inc, "[core]\n\tfsmonitor = "+m.script+"\n")
		return inc
	}, control: []string{"status"}},
	{key: "core.worktree", value: func(t *testing.T, m marker) string { return t.TempDir() }},
	{key: "init.templateDir", value: func(t *testing.T, m marker) string { return t.TempDir() }},
	{key: "safe.directory", value: func(*testing.T, marker) string { return "*" }},
	{key: "protocol.allow", value: func(*testing.T, marker) string { return "always" }, notTool: true},
	{key: "protocol.ext.allow", value: func(*testing.T, marker) string { return "always" }, notTool: true},
	{key: "http.proxy", value: func(*testing.T, marker) string { return "http://127.0.0.1:1" }, notTool: true},
	{key: "remote.origin.proxy", value: func(*testing.T, marker) string { return "http://127.0.0.1:1" }, notTool: true},
	{key: "ssh.variant", value: func(*testing.T, marker) string { return "simple" }, notTool: true},
}

// quickMarker is a program that leaves a trace and fails at once without reading its
// input, so that a control where git waits for the program's answer (a proxy, a tunnel, a
// transport) ends.
func quickMarker(t *testing.T) marker {
	t.Helper()
	dir := t.TempDir()
	m := marker{script: filepath.Join(dir, "evil.sh"), file: filepath.Join(dir, "MARKER")}
	body := "#!/bin/sh\necho \"$0 $*\" >> '" + m.file + "'\nexec </dev/null\nexit 1\n"
	if err := os.WriteFile(m.script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return m
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestProgramKeysBothPaths runs each program key through both layers: the real git runs the
// program (control), ShellSafety denies setting the key, and the Git tools refuse a
// repository that sets it.
func TestProgramKeysBothPaths(t *testing.T) {
	for _, tc := range programKeyCases {
		t.Run(tc.key, func(t *testing.T) {
			ws := newRepo(t)
			m := quickMarker(t)
			if tc.attrs != "" {
				withAttributes(t, ws, tc.attrs)
			}
			writeFile(t, filepath.Join(ws, "a.txt"), "changed\n")
			value := m.script
			if tc.value != nil {
				value = tc.value(t, m)
			}
			other := newRepo(t)
			var settings []string
			for _, x := range append([]string{tc.key + "=" + value}, tc.extra...) {
				x = strings.ReplaceAll(x, "{m}", m.script)
				settings = append(settings, "-c", strings.ReplaceAll(x, "{repo}", other))
			}

			// The real git runs the program.
			if tc.control != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				cmd := exec.CommandContext(ctx, "git", append(settings, tc.control...)...)
				cmd.Dir = ws
				cmd.Env = append(plainEnv(filepath.Join(ws, ".no-home")), "GIT_TERMINAL_PROMPT=0")
				cmd.Stdin = strings.NewReader(tc.stdin)
				out, _ := cmd.CombinedOutput()
				cancel()
				if !m.ran(t) {
					t.Fatalf("control: git %s did not run the program; the case is not live\n%s", strings.Join(append(settings, tc.control...), " "), out)
				}
			}

			// ShellSafety denies setting the key, in every way git can be given it.
			setting := tc.key + "=" + value
			for _, role := range []safety.Role{safety.RoleUser, safety.RoleRoot} {
				ctx := safety.Context{Role: role, Workspace: ws, Home: filepath.Dir(ws)}
				for _, cmd := range []string{
					"git -c " + shellQuote(setting) + " status",
					"git -c" + shellQuote(setting) + " log",
					"git config " + shellQuote(tc.key) + " " + shellQuote(value),
					"git config set --global " + shellQuote(tc.key) + " " + shellQuote(value),
					"git config --add " + shellQuote(strings.ToUpper(tc.key[:1])+tc.key[1:]) + " " + shellQuote(value),
					"git clone -c " + shellQuote(setting) + " https://example.invalid/r.git",
					"X=" + shellQuote(value) + " git --config-env=" + shellQuote(tc.key) + "=X status",
				} {
					v := safety.Check(cmd, ctx)
					if v.Decision != safety.Deny || !hasRule(v, "git.config-exec") {
						t.Errorf("%s: safety.Check(%s) = %s %v, want deny with git.config-exec", role, cmd, v.Decision, v.Findings)
					}
				}
			}

			// The Git tools refuse a repository whose configuration sets it.
			gitIn(t, ws, "config", tc.key, value)
			r := openRepo(t, ws)
			_, err := r.Status(context.Background(), StatusOptions{})
			if tc.notTool {
				if err != nil {
					t.Errorf("status with %s set: %v (the tools never use the network)", tc.key, err)
				}
				return
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("status with %s set: want a refusal, got %v", tc.key, err)
			}
			found := false
			for _, f := range ce.Findings {
				found = found || f.Key == normKey(tc.key) && f.File == filepath.Join(ws, ".git/config")
			}
			if !found {
				t.Errorf("refusal %v does not name %s in .git/config", ce.Findings, normKey(tc.key))
			}
		})
	}
}

func hasRule(v safety.Verdict, id string) bool {
	for _, f := range v.Findings {
		if f.Rule == id {
			return true
		}
	}
	return false
}

// TestProgramKeysCovered makes every entry of safety.GitProgramKeys have a case above, so
// that a key added to the table is tested through both layers.
func TestProgramKeysCovered(t *testing.T) {
	for _, k := range safety.GitProgramKeys() {
		covered := false
		for _, tc := range programKeyCases {
			e, ok := safety.GitKeySetting(tc.key, "x!", false)
			covered = covered || ok && e.Pattern == k.Pattern
		}
		if !covered {
			t.Errorf("no programKeyCase for %s", k.Pattern)
		}
		if k.Reason == "" || k.Kind.String() == "unknown" {
			t.Errorf("%s: no reason or kind", k.Pattern)
		}
	}
}

// TestProgramKeysManual reads the installed git-config(1) and checks that every key whose
// description says it names a program or a command is in the table.
func TestProgramKeysManual(t *testing.T) {
	const page = "/usr/share/man/man1/git-config.1.gz"
	if _, err := os.Stat(page); err != nil {
		t.Skipf("%s is not installed", page)
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("man is not installed")
	}
	out, err := exec.Command("sh", "-c", "MANWIDTH=200 man -l "+page+" | col -b").Output()
	if err != nil {
		t.Fatalf("man: %v", err)
	}
	// A key's entry is an indented header line; its text follows, indented more.
	lines := strings.Split(string(out), "\n")
	keys := 0
	for i := 0; i < len(lines); i++ {
		h := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(lines[i], "       ") || strings.HasPrefix(lines[i], "        ") || strings.ContainsAny(h, " ,") || !strings.Contains(h, ".") {
			continue
		}
		var text strings.Builder
		for j := i + 1; j < len(lines) && j < i+12 && !(strings.HasPrefix(lines[j], "       ") && !strings.HasPrefix(lines[j], "        ") && strings.TrimSpace(lines[j]) != ""); j++ {
			text.WriteString(strings.TrimSpace(lines[j]) + " ")
		}
		d := strings.ToLower(text.String())
		runs := false
		for _, phrase := range []string{"command to run", "command to be run", "command to use", "program to use", "program to run", "shell command", "command which", "command that", "custom command", "helper", "the program", "command is run", "command will be run", "command line to", "to be executed", "instead of ssh", "editor", "pager", "browser", "viewer"} {
			runs = runs || strings.Contains(d, phrase)
		}
		if !runs {
			continue
		}
		keys++
		key := strings.NewReplacer("<", "", ">", "").Replace(h)
		key = strings.ReplaceAll(strings.ReplaceAll(key, "name", "x"), "*", "x")
		if _, ok := safety.GitKeySetting(key, "!/usr/bin/evil --x", true); !ok && !manualNotProgram[strings.ToLower(h)] {
			t.Errorf("git-config(1) %s (%q…) is neither in safety.GitProgramKeys nor known not to run a program", h, firstWords(d, 14))
		}
	}
	if keys < 20 {
		t.Fatalf("only %d keys read from git-config(1); the page format changed", keys)
	}
}

// manualNotProgram lists keys whose git-config(1) text mentions commands or programs but
// whose value names none (a boolean, a list of options or a file that is only read).
var manualNotProgram = map[string]bool{
	"core.commentchar":           true, // a character
	"commit.status":              true, // a boolean
	"credential.protectprotocol": true, // a boolean
	"fetch.writecommitgraph":     true, // a boolean
	"fsck.<msg-id>":              true, // a severity
	"fsck.skiplist":              true, // a file of object names, only read
	"i18n.commitencoding":        true, // an encoding name
	"log.date":                   true, // a date format
	// A tool name: Git's built-in definition or difftool.<tool>.cmd (in the table) runs.
	"diff.tool": true, "diff.guitool": true, "merge.tool": true, "merge.guitool": true,
	"sendemail.multiedit":    true, // a boolean
	"sendemail.<identity>.*": true, // the heading of sendemail.<identity>.<key>, each listed on its own
	// url.<base>.insteadOf rewrites URLs; the transports that run commands (ext::) stay
	// off unless protocol.<name>.allow, which is in the table, enables them.
	"url.<base>.insteadof": true,
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}
