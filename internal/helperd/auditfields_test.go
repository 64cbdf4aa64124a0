package helperd_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/audit"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// TestRecordsCarryWhatRan: the start and exit records carry the resolved cwd and workspace
// (a cwd reached through a symbolic link is recorded as its target), the whole environment
// the command got, and the network setting; the request record keeps the requested env.
func TestRecordsCarryWhatRan(t *testing.T) {
	e := newEnv(t, nil)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(e.work, link); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(e.work)
	if err != nil {
		t.Fatal(err)
	}
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "env", Cwd: link, Workspace: link, Env: map[string]string{"LANG": "C.UTF-8"}, Approval: approve()}, nil)
	if r.err != nil || r.denied != nil {
		t.Fatalf("err %v denied %v", r.err, r.denied)
	}
	req, _ := e.aud.find(audit.KindRequest, r.requestID)
	if req.Cwd != link || !slices.Equal(req.Env, []string{"LANG=C.UTF-8"}) {
		t.Errorf("request record cwd %q env %v, want what was asked", req.Cwd, req.Env)
	}
	got := map[string]bool{}
	for _, kv := range splitLines(r.stdout.String()) {
		got[kv] = true
	}
	for _, kind := range []audit.Kind{audit.KindStart, audit.KindExit} {
		rec, ok := e.aud.find(kind, r.requestID)
		if !ok {
			t.Fatalf("no %s record", kind)
		}
		if rec.Cwd != real || rec.Workspace != real {
			t.Errorf("%s record cwd %q workspace %q, want %q", kind, rec.Cwd, rec.Workspace, real)
		}
		if rec.Network {
			t.Errorf("%s record says network for a command without it", kind)
		}
		if !slices.IsSorted(rec.Env) || !slices.Contains(rec.Env, "LANG=C.UTF-8") {
			t.Errorf("%s record env %v", kind, rec.Env)
		}
		for _, kv := range rec.Env {
			if !got[kv] {
				t.Errorf("%s record env has %q, which the command did not get", kind, kv)
			}
		}
		for kv := range got {
			name, _, _ := strings.Cut(kv, "=")
			if name != "PWD" && name != "SHLVL" && name != "_" && name != "OLDPWD" && !slices.Contains(rec.Env, kv) {
				t.Errorf("%s record env lacks %q, which the command got", kind, kv)
			}
		}
	}
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
