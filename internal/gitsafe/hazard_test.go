package gitsafe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/safety"
)

// toolRun is one call of a git tool and its error.
type toolRun struct {
	name string
	err  error
}

// runAllTools calls every git tool of r in several forms.
func runAllTools(ctx context.Context, r *Repo) []toolRun {
	var runs []toolRun
	add := func(name string, err error) { runs = append(runs, toolRun{name, err}) }
	_, err := r.Status(ctx, StatusOptions{})
	add("status", err)
	_, err = r.Status(ctx, StatusOptions{Untracked: "all", Ignored: true, Paths: []string{"sub"}})
	add("status all", err)
	_, err = r.Diff(ctx, DiffOptions{})
	add("diff worktree", err)
	_, err = r.Diff(ctx, DiffOptions{Staged: true})
	add("diff staged", err)
	_, err = r.Diff(ctx, DiffOptions{Revisions: []string{"HEAD"}})
	add("diff HEAD", err)
	_, err = r.Diff(ctx, DiffOptions{Revisions: []string{"HEAD~1", "HEAD"}, Paths: []string{"a.txt"}})
	add("diff revisions", err)
	_, err = r.Log(ctx, LogOptions{})
	add("log", err)
	_, err = r.Log(ctx, LogOptions{Count: 1, Revisions: []string{"HEAD~1..HEAD"}, Paths: []string{"a.txt"}})
	add("log range", err)
	_, err = r.Show(ctx, "HEAD")
	add("show commit", err)
	_, err = r.Show(ctx, "HEAD:a.txt")
	add("show blob", err)
	_, err = r.Show(ctx, "HEAD:")
	add("show tree", err)
	_, err = r.Blame(ctx, BlameOptions{Path: "a.txt"})
	add("blame worktree", err)
	_, err = r.Blame(ctx, BlameOptions{Revision: "HEAD", Path: "a.txt", Lines: []LineRange{{1, 2}}})
	add("blame revision", err)
	return runs
}

// hazardCase is one way a repository can try to make git start a program.
type hazardCase struct {
	name  string
	root  bool                                    // needs root (chown)
	setup func(t *testing.T, ws string, m marker) // arms the hazard
	// control is a plain git command (run in ws) that does start the marker, proving the
	// fixture is live; nil where that needs a terminal or a network.
	control []string
	// key and file: the refusal must name this setting and its file (relative to ws).
	// Both empty and rule empty: the repository is not refused; the tools must work.
	key, file string
	// rule of a layout refusal.
	rule string
}

func gitConfig(t *testing.T, ws string, args ...string) {
	t.Helper()
	gitIn(t, ws, append([]string{"config"}, args...)...)
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// withAttributes commits a .gitattributes with attrs and leaves a.txt modified.
func withAttributes(t *testing.T, ws, attrs string) {
	t.Helper()
	writeFile(t, filepath.Join(ws, ".gitattributes"), attrs)
	gitIn(t, ws, "add", ".gitattributes")
	gitIn(t, ws, "commit", "-q", "-m", "attributes")
	writeFile(t, filepath.Join(ws, "a.txt"), "changed\n")
}

func hookDir(t *testing.T, dir string, m marker) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc", "fsmonitor-watchman"} {
		data, err := os.ReadFile(m.script)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, h), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func otherRepo(t *testing.T) string {
	t.Helper()
	other := t.TempDir()
	gitIn(t, other, "init", "-q")
	return other
}

var hazardCases = []hazardCase{
	{name: "core.fsmonitor", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "core.fsmonitor", m.script)
	}, control: []string{"status"}, key: "core.fsmonitor", file: ".git/config"},
	{name: "core.fsmonitor on the header line, mixed case", setup: func(t *testing.T, ws string, m marker) {
		appendFile(t, filepath.Join(ws, ".git/config"), "[CORE] FSMonitor = \""+m.script+"\" ; comment\n")
	}, control: []string{"status"}, key: "core.fsmonitor", file: ".git/config"},
	{name: "diff.external", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "diff.external", m.script)
		writeFile(t, filepath.Join(ws, "a.txt"), "changed\n")
	}, control: []string{"diff"}, key: "diff.external", file: ".git/config"},
	{name: "textconv driver", setup: func(t *testing.T, ws string, m marker) {
		withAttributes(t, ws, "*.txt diff=conv\n")
		gitConfig(t, ws, "diff.conv.textconv", m.script)
	}, control: []string{"diff"}, key: "diff.conv.textconv", file: ".git/config"},
	{name: "clean filter required", setup: func(t *testing.T, ws string, m marker) {
		withAttributes(t, ws, "*.txt filter=f\n")
		gitConfig(t, ws, "filter.f.clean", m.script)
		gitConfig(t, ws, "filter.f.required", "true")
	}, control: []string{"diff"}, key: "filter.f.clean", file: ".git/config"},
	{name: "clean filter in config.worktree", setup: func(t *testing.T, ws string, m marker) {
		withAttributes(t, ws, "*.txt filter=f\n")
		gitConfig(t, ws, "extensions.worktreeConfig", "true")
		gitConfig(t, ws, "--worktree", "filter.f.clean", m.script)
		gitConfig(t, ws, "--worktree", "filter.f.required", "true")
	}, control: []string{"diff"}, key: "filter.f.clean", file: ".git/config.worktree"},
	{name: "dotted section header filter", setup: func(t *testing.T, ws string, m marker) {
		withAttributes(t, ws, "*.txt filter=f\n")
		appendFile(t, filepath.Join(ws, ".git/config"), "[filter.F]\n\tclean = "+m.script+"\n")
	}, control: []string{"diff"}, key: "filter.f.clean", file: ".git/config"},
	{name: "process filter", setup: func(t *testing.T, ws string, m marker) {
		withAttributes(t, ws, "*.txt filter=p\n")
		gitConfig(t, ws, "filter.p.process", m.script)
	}, key: "filter.p.process", file: ".git/config"},
	{name: "pager.log", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "pager.log", m.script)
	}, key: "pager.log", file: ".git/config"},
	{name: "core.pager", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "core.pager", m.script)
	}, key: "core.pager", file: ".git/config"},
	{name: "include.path", setup: func(t *testing.T, ws string, m marker) {
		inc := filepath.Join(ws, ".git", "evil.inc")
		writeFile(t, inc, "[core]\n\tfsmonitor = "+m.script+"\n")
		gitConfig(t, ws, "include.path", "evil.inc")
	}, control: []string{"status"}, key: "include.path", file: ".git/config"},
	{name: "includeIf", setup: func(t *testing.T, ws string, m marker) {
		inc := filepath.Join(t.TempDir(), "evil.inc")
		writeFile(t, inc, "[core]\n\tfsmonitor = "+m.script+"\n")
		gitConfig(t, ws, "includeIf.gitdir:"+ws+"/.git.path", inc)
	}, control: []string{"status"}, key: "includeif.gitdir:{ws}/.git.path", file: ".git/config"},
	{name: "core.hooksPath", setup: func(t *testing.T, ws string, m marker) {
		dir := filepath.Join(t.TempDir(), "hooks")
		hookDir(t, dir, m)
		gitConfig(t, ws, "core.hooksPath", dir)
	}, control: []string{"commit", "-q", "--allow-empty", "-m", "x"}, key: "core.hooksPath", file: ".git/config"},
	{name: "plain .git/hooks are not refused and never run", setup: func(t *testing.T, ws string, m marker) {
		hookDir(t, filepath.Join(ws, ".git", "hooks"), m)
		writeFile(t, filepath.Join(ws, "a.txt"), "changed\n")
	}, control: []string{"commit", "-q", "--allow-empty", "-m", "x"}},
	{name: "submodule update command", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "submodule.sub.update", "!"+m.script)
	}, key: "submodule.sub.update", file: ".git/config"},
	{name: "a buried bare repository is not refused and never used", setup: func(t *testing.T, ws string, m marker) {
		bare := filepath.Join(ws, "sub", "bare.git")
		gitIn(t, ws, "init", "-q", "--bare", bare)
		gitIn(t, bare, "config", "core.fsmonitor", m.script)
		gitIn(t, bare, "config", "core.worktree", filepath.Join(ws, "sub"))
		gitIn(t, bare, "config", "core.bare", "false")
		gitIn(t, bare, "config", "alias.status", "!"+m.script)
	}, control: []string{"-C", "sub/bare.git", "status"}},
	{name: "a submodule's own configuration is never used", setup: func(t *testing.T, ws string, m marker) {
		sub := newRepo(t)
		gitIn(t, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
		gitIn(t, ws, "commit", "-q", "-m", "submodule")
		modules := filepath.Join(ws, ".git", "modules", "sub")
		gitIn(t, modules, "config", "core.fsmonitor", m.script)
		gitIn(t, modules, "config", "filter.f.clean", m.script)
		writeFile(t, filepath.Join(ws, "sub", ".gitattributes"), "* filter=f\n")
		writeFile(t, filepath.Join(ws, "sub", "a.txt"), "dirty\n")
		writeFile(t, filepath.Join(ws, "a.txt"), "changed\n")
	}, control: []string{"status"}},
	{name: "workspace is a bare repository", setup: func(t *testing.T, ws string, m marker) {
		if err := os.RemoveAll(filepath.Join(ws, ".git")); err != nil {
			t.Fatal(err)
		}
		gitIn(t, ws, "init", "-q", "--bare", ws)
		gitConfig(t, ws, "core.fsmonitor", m.script)
	}, rule: RuleNotRepository},
	{name: ".git owned by uid 65534", root: true, setup: func(t *testing.T, ws string, m marker) {
		if err := os.Chown(filepath.Join(ws, ".git"), 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}, rule: RuleForeignOwner},
	{name: "credential.helper", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "credential.helper", m.script)
	}, key: "credential.helper", file: ".git/config"},
	{name: "credential.<url>.helper", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "credential.https://example.com.helper", m.script)
	}, key: "credential.https://example.com.helper", file: ".git/config"},
	{name: "! alias", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "alias.st", "!"+m.script)
	}, control: []string{"st"}, key: "alias.st", file: ".git/config"},
	{name: "core.sshCommand", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "core.sshCommand", m.script)
	}, key: "core.sshcommand", file: ".git/config"},
	{name: "gpg.ssh.program", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "gpg.ssh.program", m.script)
	}, key: "gpg.ssh.program", file: ".git/config"},
	{name: "merge driver", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "merge.evil.driver", m.script+" %O %A %B")
	}, key: "merge.evil.driver", file: ".git/config"},
	{name: "remote uploadpack", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "remote.origin.uploadpack", m.script)
	}, key: "remote.origin.uploadpack", file: ".git/config"},
	{name: "core.worktree", setup: func(t *testing.T, ws string, m marker) {
		gitConfig(t, ws, "core.worktree", t.TempDir())
	}, key: "core.worktree", file: ".git/config"},
	{name: ".git file pointing outside", setup: func(t *testing.T, ws string, m marker) {
		dst := filepath.Join(t.TempDir(), "gitdir")
		if err := os.Rename(filepath.Join(ws, ".git"), dst); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(ws, ".git"), "gitdir: "+dst+"\n")
	}, rule: RuleOutside},
	{name: ".git symlink", setup: func(t *testing.T, ws string, m marker) {
		dst := filepath.Join(t.TempDir(), "gitdir")
		if err := os.Rename(filepath.Join(ws, ".git"), dst); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(dst, filepath.Join(ws, ".git")); err != nil {
			t.Fatal(err)
		}
	}, rule: RuleOutside},
	{name: "commondir outside", setup: func(t *testing.T, ws string, m marker) {
		writeFile(t, filepath.Join(ws, ".git", "commondir"), filepath.Join(otherRepo(t), ".git")+"\n")
	}, rule: RuleOutside},
	{name: "object alternates outside", setup: func(t *testing.T, ws string, m marker) {
		writeFile(t, filepath.Join(ws, ".git", "objects", "info", "alternates"), filepath.Join(otherRepo(t), ".git", "objects")+"\n")
	}, rule: RuleOutside},
	{name: "unreadable configuration syntax", setup: func(t *testing.T, ws string, m marker) {
		appendFile(t, filepath.Join(ws, ".git/config"), "[core]\n\tfsmonitor = \"unterminated\n")
	}, rule: RuleConfigSyntax},
}

// hostileEnv sets every environment variable that could steer git, each pointing at the
// marker, and returns a check that the tools' output is still right.
func hostileEnv(t *testing.T, m marker) {
	t.Helper()
	home := t.TempDir()
	gitconfig := "[core]\n\tpager = " + m.script + "\n\tfsmonitor = " + m.script + "\n\thooksPath = " + home +
		"\n[diff]\n\texternal = " + m.script + "\n[pager]\n\tlog = " + m.script + "\n[alias]\n\tstatus = !" + m.script + "\n"
	writeFile(t, filepath.Join(home, ".gitconfig"), gitconfig)
	writeFile(t, filepath.Join(home, "xdg", "git", "config"), gitconfig)
	writeFile(t, filepath.Join(home, "xdg", "git", "attributes"), "* diff=conv filter=f\n")
	hookDir(t, home, m)
	execPath := filepath.Join(home, "exec")
	hookDir(t, execPath, m)
	for _, name := range []string{"git-status", "git-log", "git-diff", "git-show", "git-blame", "git-cat-file"} {
		data, _ := os.ReadFile(m.script)
		writeFile(t, filepath.Join(execPath, name), string(data))
		os.Chmod(filepath.Join(execPath, name), 0o755)
	}
	other := otherRepo(t)
	gitIn(t, other, "config", "core.fsmonitor", m.script)
	for k, v := range map[string]string{
		"HOME":                   home,
		"XDG_CONFIG_HOME":        filepath.Join(home, "xdg"),
		"GIT_PAGER":              m.script,
		"PAGER":                  m.script,
		"GIT_CONFIG_COUNT":       "3",
		"GIT_CONFIG_KEY_0":       "core.fsmonitor",
		"GIT_CONFIG_VALUE_0":     m.script,
		"GIT_CONFIG_KEY_1":       "diff.conv.textconv",
		"GIT_CONFIG_VALUE_1":     m.script,
		"GIT_CONFIG_KEY_2":       "filter.f.clean",
		"GIT_CONFIG_VALUE_2":     m.script,
		"GIT_CONFIG_PARAMETERS":  "'core.pager'='" + m.script + "' 'diff.external'='" + m.script + "'",
		"GIT_CONFIG_GLOBAL":      filepath.Join(home, ".gitconfig"),
		"GIT_CONFIG_SYSTEM":      filepath.Join(home, ".gitconfig"),
		"GIT_EXEC_PATH":          execPath,
		"GIT_DIR":                filepath.Join(other, ".git"),
		"GIT_WORK_TREE":          other,
		"GIT_EXTERNAL_DIFF":      m.script,
		"GIT_SSH_COMMAND":        m.script,
		"GIT_ASKPASS":            m.script,
		"GIT_EDITOR":             m.script,
		"GIT_SEQUENCE_EDITOR":    m.script,
		"SSH_ASKPASS":            m.script,
		"GIT_TRACE":              filepath.Join(home, "trace"),
		"GIT_PROTOCOL_FROM_USER": "1",
	} {
		t.Setenv(k, v)
	}
}

func TestHazards(t *testing.T) {
	testenv.RequireTool(t, "git")
	for _, env := range []string{"clean environment", "hostile environment"} {
		t.Run(env, func(t *testing.T) {
			for _, tc := range hazardCases {
				t.Run(tc.name, func(t *testing.T) {
					if tc.root {
						testenv.RequireRoot(t)
					}
					m := newMarker(t)
					ws := newRepo(t)
					writeFile(t, filepath.Join(ws, "b.txt"), "staged\n")
					gitIn(t, ws, "add", "b.txt")
					tc.setup(t, ws, m)
					if tc.key != "" {
						// The same key through ShellSafety: setting it from a command is denied.
						key := strings.ReplaceAll(tc.key, "{ws}", ws)
						for _, role := range []safety.Role{safety.RoleUser, safety.RoleRoot} {
							cmd := "git -c " + shellQuote(key+"=!"+m.script) + " status" // "!": aliases and submodule.update run only such values
							if v := safety.Check(cmd, safety.Context{Role: role, Workspace: ws, Home: filepath.Dir(ws)}); v.Decision != safety.Deny {
								t.Errorf("%s: safety.Check(%s) = %s, want deny", role, cmd, v.Decision)
							}
						}
					}
					if tc.control != nil {
						gitTry(ws, tc.control...)
						if !m.ran(t) {
							t.Fatalf("control: plain git %v did not run the marker; the fixture is not live", tc.control)
						}
					}
					if env == "hostile environment" {
						hostileEnv(t, m)
					}
					r := openRepo(t, ws)
					for _, run := range runAllTools(context.Background(), r) {
						if m.ran(t) {
							t.Errorf("%s: the marker program ran", run.name)
						}
						checkRefusal(t, tc, ws, run)
					}
				})
			}
		})
	}
}

func checkRefusal(t *testing.T, tc hazardCase, ws string, run toolRun) {
	t.Helper()
	switch {
	case tc.key != "":
		var ce *ConfigError
		if !errors.As(run.err, &ce) {
			t.Errorf("%s: want a refusal naming %s, got %v", run.name, tc.key, run.err)
			return
		}
		key := strings.ReplaceAll(tc.key, "{ws}", ws)
		file := filepath.Join(ws, tc.file)
		for _, f := range ce.Findings {
			if f.Key == normKey(key) && f.File == file {
				if !strings.Contains(run.err.Error(), f.Key) {
					t.Errorf("%s: error %q does not name %s", run.name, run.err, f.Key)
				}
				return
			}
		}
		t.Errorf("%s: refusal %v does not name %s in %s", run.name, ce.Findings, key, file)
	case tc.rule != "":
		var le *LayoutError
		if !errors.As(run.err, &le) || le.Rule != tc.rule {
			t.Errorf("%s: want a %s refusal, got %v", run.name, tc.rule, run.err)
		}
	default:
		if run.err != nil {
			t.Errorf("%s: %v", run.name, run.err)
		}
	}
}

// normKey lower-cases a key's section and name as git does, keeping the subsection.
func normKey(key string) string {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}
