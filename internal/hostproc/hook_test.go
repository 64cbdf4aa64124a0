package hostproc

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
)

func (h *harness) hook(name, event string, timeout time.Duration, script string) *hostdef.Definition {
	h.t.Helper()
	d := &hostdef.Definition{Name: name, Kind: hostdef.KindHook, Event: event, Timeout: hostdef.Duration(timeout), Command: "/bin/sh", Args: []string{"-c", script}, Enabled: true}
	if err := hostdef.Confirm(d, h.home, nil, &strings.Builder{}, true, time.Now()); err != nil {
		h.t.Fatal(err)
	}
	return d
}

var call = HookInput{Session: "s", Tool: "shell", Input: json.RawMessage(`{"command":"rm -rf build"}`)}

// TestPreCallDecisions: each way a hook can answer, and the most restrictive wins.
func TestPreCallDecisions(t *testing.T) {
	h := newHarness(t, credhandle.Resolver{UID: -1})
	ctx := context.Background()
	allow := h.hook("a-allow", hostdef.EventPreCall, 0, `echo '{"decision":"allow"}'`)
	silent := h.hook("b-silent", hostdef.EventPreCall, 0, `cat >/dev/null`)
	ask := h.hook("c-ask", hostdef.EventPreCall, 0, `echo '{"decision":"ask","reason":"deletes files"}'`)
	deny := h.hook("d-deny", hostdef.EventPreCall, 0, `grep -q 'rm -rf' && echo '{"decision":"deny","reason":"no rm -rf here"}'`)
	exit2 := h.hook("e-exit2", hostdef.EventPreCall, 0, `echo 'refused by policy' >&2; exit 2`)
	fail := h.hook("f-fail", hostdef.EventPreCall, 0, `exit 1`)
	garbage := h.hook("g-garbage", hostdef.EventPreCall, 0, `echo 'yes please'`)
	unknown := h.hook("h-unknown", hostdef.EventPreCall, 0, `echo '{"decision":"maybe"}'`)
	for name, tc := range map[string]struct {
		defs   []*hostdef.Definition
		want   Decision
		reason string
	}{
		"none":         {nil, Allow, ""},
		"allow":        {[]*hostdef.Definition{allow, silent}, Allow, ""},
		"ask":          {[]*hostdef.Definition{allow, ask}, Ask, "c-ask asks for a person's approval: deletes files"},
		"deny":         {[]*hostdef.Definition{ask, deny, allow}, Deny, "d-deny: no rm -rf here"},
		"exit 2":       {[]*hostdef.Definition{exit2}, Deny, "e-exit2: refused by policy"},
		"exit 1":       {[]*hostdef.Definition{fail}, Deny, "exit status 1"},
		"not json":     {[]*hostdef.Definition{garbage}, Deny, "not a decision"},
		"bad decision": {[]*hostdef.Definition{unknown}, Deny, `"maybe" is not allow, ask or deny`},
		"other event":  {[]*hostdef.Definition{h.hook("x", hostdef.EventPostCall, 0, `exit 1`)}, Allow, ""},
	} {
		got := h.s.PreCall(ctx, tc.defs, call)
		if got.Decision != tc.want || !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("%s: %+v; want %s with %q", name, got, tc.want, tc.reason)
		}
	}
	// A disabled hook does not run; a changed one is not run and denies.
	off := h.hook("off", hostdef.EventPreCall, 0, `exit 1`)
	off.Enabled = false
	if got := h.s.PreCall(ctx, []*hostdef.Definition{off}, call); got.Decision != Allow {
		t.Errorf("a disabled hook decided: %+v", got)
	}
	if _, err := h.s.Start(allow, StartOptions{}); err == nil || !strings.Contains(err.Error(), "never by Start") {
		t.Errorf("a hook started as a process: %v", err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	changed := h.hook("changed", hostdef.EventPreCall, 0, `touch `+marker)
	changed.Args[1] += "; true"
	if got := h.s.PreCall(ctx, []*hostdef.Definition{changed}, call); got.Decision != Deny || !strings.Contains(got.Reason, "changed since it was confirmed") {
		t.Errorf("a changed hook: %+v", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a changed hook ran")
	}
}

// TestPreCallHookHangs: a hook that passes its time limit is killed with its children and
// the call is refused.
func TestPreCallHookHangs(t *testing.T) {
	h := newHarness(t, credhandle.Resolver{UID: -1})
	hang := h.hook("hang", hostdef.EventPreCall, 300*time.Millisecond, `sleep 2711 & setsid sleep 2712 & sleep 2713`)
	start := time.Now()
	got := h.s.PreCall(context.Background(), []*hostdef.Definition{hang}, call)
	if got.Decision != Deny || !strings.Contains(got.Reason, "time limit") {
		t.Fatalf("a hanging hook: %+v", got)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the hook was not killed at its limit: %v", d)
	}
	checkAllGone(t, []string{"2711", "2712", "2713"}, "after the hook's time limit")
	var exits int
	for _, r := range h.records() {
		if r.Kind == "exit" && strings.Contains(r.Reason, "time limit") {
			exits++
		}
	}
	if exits != 1 {
		t.Errorf("%d exit records name the time limit", exits)
	}
}

// TestNotifyHooks: post-call and session hooks get the JSON of the event on stdin; their
// failures are returned; the secret they are given is redacted from what they print.
func TestNotifyHooks(t *testing.T) {
	t.Setenv("S_CODE_HOOK_SECRET", "hook-secret-value-555")
	h := newHarness(t, credhandle.Resolver{Getenv: os.LookupEnv, UID: -1})
	dir := t.TempDir()
	post := h.hook("post", hostdef.EventPostCall, 0, `cat > `+filepath.Join(dir, "post.json"))
	start := h.hook("start", hostdef.EventSessionStart, 0, `cat > `+filepath.Join(dir, "start.json"))
	bad := h.hook("bad", hostdef.EventPostCall, 0, `exit 3`)
	if errs := h.s.Notify(context.Background(), []*hostdef.Definition{post, bad, start}, hostdef.EventPostCall, HookInput{Tool: "shell", Result: json.RawMessage(`{"exit_code":0}`)}); len(errs) != 1 || !strings.Contains(errs[0].Error(), "exit status 3") {
		t.Errorf("errors = %v", errs)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "post.json"))
	var in HookInput
	if err := json.Unmarshal(b, &in); err != nil || in.Event != hostdef.EventPostCall || in.Tool != "shell" || string(in.Result) != `{"exit_code":0}` {
		t.Errorf("post-call input %s: %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "start.json")); err == nil {
		t.Error("a session-start hook ran on post-call")
	}
	if errs := h.s.Notify(context.Background(), []*hostdef.Definition{start}, hostdef.EventSessionStart, HookInput{Session: "s9"}); len(errs) != 0 {
		t.Error(errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "start.json")); !strings.Contains(string(b), `"session":"s9"`) {
		t.Errorf("session-start input %s", b)
	}
	leak := &hostdef.Definition{Name: "leak", Kind: hostdef.KindHook, Event: hostdef.EventPreCall, Command: "/bin/sh", Enabled: true,
		Args: []string{"-c", `echo "{\"decision\":\"deny\",\"reason\":\"$K\"}"; echo "$K" >&2`}, Env: map[string]string{"K": "env:S_CODE_HOOK_SECRET"}}
	hostdef.Confirm(leak, h.home, nil, &strings.Builder{}, true, time.Now())
	got := h.s.PreCall(context.Background(), []*hostdef.Definition{leak}, call)
	if got.Decision != Deny || strings.Contains(got.Reason, "hook-secret") {
		t.Errorf("the reason holds the secret: %+v", got)
	}
	checkNowhere(t, h, map[string]string{"K": "hook-secret-value-555"}, got.Reason)
}
