package helperd_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// TestEnvAllowlist checks that a request's environment additions are an allowlist: names
// that make programs load or run code, names that steer the sandbox profile (GOROOT, cache
// directories) and merely unknown names are all refused with env.not-allowed naming them,
// nothing runs, and the request record shows what was asked for.
func TestEnvAllowlist(t *testing.T) {
	e := newEnv(t, func(c *helperd.Config) { c.EnvAllow = []string{"OK_VAR", "MYTOOL_*", "LD_PRELOAD"} })
	t.Setenv("S_CODE_HELPER_CANARY", "leaked") // the helper's own environment
	for _, name := range []string{"LD_PRELOAD", "BASH_ENV", "GIT_SSH_COMMAND", "PAGER", "UNKNOWN_VAR", "GOROOT",
		"S_CODE_TOOL_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "SHELL", "PYTHONUNBUFFERED", "LESSOPEN", "TAR_OPTIONS"} {
		t.Run(name, func(t *testing.T) {
			r := e.exec(ctx(t), &helperv1.ExecStart{Command: "env", Approval: approve(), Env: map[string]string{name: "/", "OK_VAR": "1"}}, nil)
			if r.denied.GetRule() != helperd.RuleEnvNotAllowed || r.denied.GetRule() != "env.not-allowed" || !strings.Contains(r.denied.GetReason(), name) || r.pid != 0 {
				t.Fatalf("denied %+v pid %d", r.denied, r.pid)
			}
			if strings.Contains(r.denied.GetReason(), "OK_VAR") {
				t.Errorf("the reason names an admitted variable: %s", r.denied.GetReason())
			}
			if strings.Contains(r.stdout.String(), name) {
				t.Fatal("the child saw the variable")
			}
			req, _ := e.aud.find(audit.KindRequest, r.requestID)
			wantEnv := []string{name + "=/", "OK_VAR=1"}
			slices.Sort(wantEnv)
			if !slices.Equal(req.Env, wantEnv) {
				t.Errorf("request record env %q", req.Env)
			}
		})
	}
	add := map[string]string{"OK_VAR": "1", "MYTOOL_MODE": "fast", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color",
		"TZ": "UTC", "COLUMNS": "120", "LINES": "40", "NO_COLOR": "1", "CLICOLOR_FORCE": "1", "CI": "true"}
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "env", Approval: approve(), Env: add}, nil)
	if r.status() != 0 {
		t.Fatalf("env: %+v %v", r.denied, r.err)
	}
	got := strings.Split(strings.TrimSpace(r.stdout.String()), "\n")
	want := []string{"PATH=" + execrun.SafePath, "USER=tester"}
	for k, v := range add {
		want = append(want, k+"="+v)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("child env lacks %s: %v", w, got)
		}
	}
	for _, kv := range got {
		if strings.HasPrefix(kv, "S_CODE_HELPER_CANARY=") || strings.HasPrefix(kv, "LD_") || strings.HasPrefix(kv, "GO") {
			t.Errorf("child env has %s", kv)
		}
	}
	// Values are checked too: a locale or terminal naming a file, a size that is no number.
	for name, value := range map[string]string{"LANG": "/tmp/x", "TERM": "../x", "COLUMNS": "80; id", "CI": "a\nb"} {
		r := e.exec(ctx(t), &helperv1.ExecStart{Command: "true", Approval: approve(), Env: map[string]string{name: value}}, nil)
		if r.denied.GetRule() != helperd.RuleEnvNotAllowed || !strings.Contains(r.denied.GetReason(), name) {
			t.Errorf("%s=%q: denied %+v", name, value, r.denied)
		}
	}
}

// TestCallerPath checks that a command finds the programs of the caller's safe PATH entries
// (a toolchain outside the workspace) after the helper's own, and never those of an entry in
// the workspace, a relative entry or a directory others may write.
func TestCallerPath(t *testing.T) {
	e := newEnv(t, nil)
	tools := filepath.Join(t.TempDir(), "toolchain", "bin")
	open := filepath.Join(t.TempDir(), "open")
	inWS := filepath.Join(e.work, "bin")
	for _, d := range []string{tools, open, inWS} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(open, 0o777)
	for _, p := range []string{filepath.Join(tools, "mytool"), filepath.Join(open, "opentool"), filepath.Join(inWS, "wstool")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho ran $0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	callerPath := strings.Join([]string{"bin", inWS, open, "", tools, "/usr/bin"}, ":")
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: `echo "$PATH"; mytool; command -v wstool opentool || echo none`, Approval: approve(),
		Path: callerPath}, nil)
	if r.status() != 0 {
		t.Fatalf("exec: %+v %v %s", r.denied, r.err, r.stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(r.stdout.String()), "\n")
	if want := execrun.SafePath + ":" + tools; lines[0] != want {
		t.Errorf("PATH %q, want %q", lines[0], want)
	}
	if len(lines) != 3 || lines[1] != "ran "+filepath.Join(tools, "mytool") || lines[2] != "none" {
		t.Errorf("output %q", lines)
	}
	// The plan shows the same PATH.
	pl, err := e.planFor(ctx(t), &helperv1.ExecStart{Command: "true", Cwd: e.work, Path: callerPath})
	if err != nil || pl.GetPlan().GetPath() != execrun.SafePath+":"+tools {
		t.Errorf("plan PATH %q, %v", pl.GetPlan().GetPath(), err)
	}
	// PATH is no environment addition.
	r = e.exec(ctx(t), &helperv1.ExecStart{Command: "true", Approval: approve(), Env: map[string]string{"PATH": tools}}, nil)
	if r.denied.GetRule() != helperd.RuleEnvNotAllowed || !strings.Contains(r.denied.GetReason(), "PATH") {
		t.Errorf("PATH as an addition: %+v", r.denied)
	}
	// Without a caller PATH the command gets the helper's alone.
	r = e.exec(ctx(t), &helperv1.ExecStart{Command: `echo "$PATH"`, Approval: approve()}, nil)
	if got := strings.TrimSpace(r.stdout.String()); got != execrun.SafePath {
		t.Errorf("PATH without a caller PATH: %q", got)
	}
}

// TestShellAllowlist checks that a request's shell is bash or sh (unspecified: bash): a
// shell number the wire does not name is refused before anything runs.
func TestShellAllowlist(t *testing.T) {
	e := newEnv(t, nil)
	for _, sh := range []helperv1.Shell{3, 7, -1} {
		r := e.exec(ctx(t), &helperv1.ExecStart{Command: "true", Shell: sh, Approval: approve()}, nil)
		if r.denied.GetRule() != helperd.RuleInvalidRequest || r.pid != 0 {
			t.Errorf("shell %d: denied %+v pid %d", sh, r.denied, r.pid)
		}
	}
	for sh, want := range map[helperv1.Shell]string{helperv1.Shell_SHELL_UNSPECIFIED: "bash", helperv1.Shell_SHELL_BASH: "bash", helperv1.Shell_SHELL_SH: "sh"} {
		r := e.exec(ctx(t), &helperv1.ExecStart{Command: `echo "${SHELL##*/}"`, Shell: sh, Approval: approve()}, nil)
		if r.status() != 0 || strings.TrimSpace(r.stdout.String()) != want {
			t.Errorf("shell %v: %+v %v %q", sh, r.denied, r.err, r.stdout.String())
		}
	}
}
