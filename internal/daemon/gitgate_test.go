package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/internal/daemon"
	"github.com/s-code-dev/s-code/internal/gitsafe"
	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// startRoot runs the real root helper (RunRoot) admitting root, and returns a client.
func startRoot(t *testing.T) *helperclient.Client {
	t.Helper()
	testenv.RequireRoot(t)
	etc := filepath.Join(t.TempDir(), "etc")
	os.Mkdir(etc, 0o755)
	policy := filepath.Join(etc, "roothelper.toml")
	os.WriteFile(policy, []byte("[allow]\nusers = [\"root\"]\n[timeouts]\ndrain = \"1s\"\n"), 0o644)
	sock := filepath.Join(t.TempDir(), "run", "root.sock")
	ctx, stop := context.WithCancel(context.Background())
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- daemon.RunRoot(ctx, []string{"--policy", policy, "--listen", sock, "--audit-dir", filepath.Join(t.TempDir(), "audit")}, &logs, &logs)
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("RunRoot: %v\n%s", err, logs.String())
		}
	})
	waitSocket(t, sock, done)
	c, err := helperclient.Dial(ctx, helperclient.Root, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRootGitConfigExec: the root helper refuses a command in (or naming) a repository whose
// own configuration starts a program, with the git tools' rule (git.config-exec), whether
// git is reached through the cwd, -C, cd, a word only known at run time, or a program that
// starts git itself (eval, sh -c, perl); in a plain repository git runs. The program never
// runs.
func TestRootGitConfigExec(t *testing.T) {
	testenv.RequireTool(t, "git")
	c := startRoot(t)
	ctx := context.Background()

	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	evil := filepath.Join(dir, "evil.sh")
	os.WriteFile(evil, []byte("#!/bin/sh\ntouch "+marker+"\ncat\n"), 0o755)
	bad := filepath.Join(dir, "bad")
	good := filepath.Join(dir, "good")
	for _, ws := range []string{bad, good} {
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
		os.WriteFile(filepath.Join(ws, ".gitattributes"), []byte("*.txt filter=evil\n"), 0o644)
	}
	os.Mkdir(filepath.Join(bad, "sub"), 0o755)
	f, _ := os.OpenFile(filepath.Join(bad, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("[filter \"evil\"]\n\tclean = " + evil + "\n")
	f.Close()
	// The repository a sandboxed command left is what the git tools refuse too.
	r, err := gitsafe.Open(bad, gitsafe.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ce *gitsafe.ConfigError
	if err := r.Check(); !errors.As(err, &ce) || ce.Findings[0].Rule != gitsafe.RuleConfigExec {
		t.Fatalf("gitsafe Check: %v", err)
	}

	cases := []struct {
		name, command, cwd string
		refused            bool
	}{
		{"git in the repository", "git add a.txt", bad, true},
		{"a subdirectory", "git status", filepath.Join(bad, "sub"), true},
		{"git -C", "git -C " + bad + " add a.txt", "/", true},
		{"cd then git", "cd " + bad + " && git add a.txt", "/", true},
		{"quoted git", "'g'\"it\" add a.txt", bad, true},
		{"git from a variable", "g=git; $g add a.txt", bad, true},
		{"env wrapper", "env git add a.txt", bad, true},
		{"backslash in the name", "g\\it add a.txt", bad, true},
		{"glob for the name", "/usr/bin/gi? add a.txt", bad, true},
		{"bracket glob", "/usr/bin/g[i]t add a.txt", bad, true},
		{"brace expansion", "/usr/bin/{g,}it add a.txt", bad, true},
		{"ANSI-C quoting", "$'\\x67it' add a.txt", bad, true},
		// Any program can start git: no reading of the words tells them all.
		{"eval of a quoted name", `eval "gi''t add a.txt"`, bad, true},
		{"eval with a backslash", `eval 'g\it add a.txt'`, bad, true},
		{"printed into a shell", `printf 'g%s' 'it add a.txt' | sh`, bad, true},
		{"shell of a quoted name", `sh -c "gi''t add a.txt"`, bad, true},
		{"here string into bash", `bash <<< "gi''t add a.txt"`, bad, true},
		{"perl", `perl -e 'system("g"."it","add","a.txt")'`, bad, true},
		{"a path word naming the repository", "ls " + bad, "/", true},
		{"a plain repository", "git add a.txt && git status --short", good, false},
		{"no repository", "ls " + dir, dir, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			res, _, err := c.Run(ctx, helperclient.Operation{Command: tc.command, Cwd: tc.cwd, Mode: permission.Manual}, approveAll, helperclient.Streams{Stdout: &out, Stderr: &errb})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(marker); err == nil {
				os.Remove(marker)
				t.Fatalf("the repository's filter ran as root (%+v)", res)
			}
			if !tc.refused {
				if res.Denied != nil || res.Status() != 0 {
					t.Fatalf("refused or failed: %+v %s", res.Denied, errb.String())
				}
				return
			}
			if res.Denied.GetRule() != gitsafe.RuleConfigExec {
				t.Fatalf("got %+v (status %d), want a %s denial", res.Denied, res.Status(), gitsafe.RuleConfigExec)
			}
			if !strings.Contains(res.Denied.GetReason(), "filter.evil.clean") {
				t.Errorf("the reason does not name the setting: %s", res.Denied.GetReason())
			}
		})
	}
}
