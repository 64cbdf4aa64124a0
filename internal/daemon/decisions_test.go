package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/daemon"
	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/internal/workspace"
)

// userHelper is a real user helper (this test binary as its sandbox launcher) serving a
// socket in a temporary directory.
type userHelper struct {
	c        *helperclient.Client
	base     string // holds the socket, the audit log and the tool caches
	ws       string // a workspace with a src directory
	auditDir string
}

func startUserHelper(t *testing.T, args ...string) *userHelper {
	t.Helper()
	if f := sandbox.ProbeFeatures(); !f.Confines() && os.Getenv(sandbox.PretendNoLandlockEnv) == "" {
		testenv.Skip(t, "this kernel cannot confine commands: "+f.Problem)
	}
	base := t.TempDir()
	h := &userHelper{base: base, ws: filepath.Join(t.TempDir(), "ws"), auditDir: filepath.Join(base, "audit")}
	if err := os.MkdirAll(filepath.Join(h.ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("S_CODE_TOOL_CACHE_DIR", filepath.Join(base, "cache"))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(base, "run", "user.sock")
	ctx, stop := context.WithCancel(context.Background())
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- daemon.RunUser(ctx, append([]string{"--listen", sock, "--audit-dir", h.auditDir, "--sandbox-launcher", self}, args...), &logs, &logs)
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})
	waitSocket(t, sock, done)
	if h.c, err = helperclient.Dial(ctx, helperclient.User, sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.c.Close() })
	return h
}

func (h *userHelper) write(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.ws, name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// run plans and runs op in the helper's workspace (Manual unless op says otherwise),
// approving with approver (nil: nobody approves).
func (h *userHelper) run(t *testing.T, op helperclient.Operation, approver helperclient.Approver) (*helperclient.Result, *helperclient.Planned, string, error) {
	t.Helper()
	if op.Cwd == "" {
		op.Cwd = h.ws
	}
	if op.Mode == permission.ModeUnset {
		op.Mode = permission.Manual
	}
	var out, errb bytes.Buffer
	res, pl, err := h.c.Run(context.Background(), op, approver, helperclient.Streams{Stdout: &out, Stderr: &errb})
	return res, pl, out.String() + errb.String(), err
}

// TestNetworkCard: a command whose card says "network: on" runs with network once approved
// (against a real loopback server); unapproved, or with network off on its card, it never
// reaches the server.
func TestNetworkCard(t *testing.T) {
	curl := testenv.RequireTool(t, "curl")
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello from loopback")
	}))
	defer srv.Close()
	h := startUserHelper(t)
	command := curl + " -sS " + srv.URL + "/"

	// Unapproved: nothing runs.
	_, pl, _, err := h.run(t, helperclient.Operation{Command: command}, nil)
	if !errors.Is(err, helperclient.ErrNotApproved) || hits.Load() != 0 {
		t.Fatalf("unapproved: %v, %d hits", err, hits.Load())
	}
	if !pl.Plan.Network || !pl.Plan.Sandbox.Network || pl.Outcome.Result != permission.NeedsApproval || !slices.Contains(pl.Outcome.Rules, "network.access") {
		t.Fatalf("the card does not say network on: %+v %+v", pl.Plan, pl.Outcome)
	}
	// Approved: it runs with network, as the card said.
	res, pl, out, err := h.run(t, helperclient.Operation{Command: command}, approveAll)
	if err != nil || res.Status() != 0 || !strings.Contains(out, "hello from loopback") || hits.Load() != 1 {
		t.Fatalf("approved network card: %v %+v %q, %d hits", err, res, out, hits.Load())
	}
	// A program ShellSafety cannot see into gets no network unless its card asks for it.
	h.write(t, "src/get.sh", curl+" -sS \"$1\"\n")
	res, pl, out, err = h.run(t, helperclient.Operation{Command: "bash src/get.sh " + srv.URL + "/"}, approveAll)
	if err != nil || res.Status() == 0 || pl.Plan.Network || hits.Load() != 1 {
		t.Fatalf("approved card with network off: %v %+v %q, %d hits", err, res, out, hits.Load())
	}
	res, pl, out, err = h.run(t, helperclient.Operation{Command: "bash src/get.sh " + srv.URL + "/", Network: true}, approveAll)
	if err != nil || res.Status() != 0 || !pl.Plan.Network || !slices.Contains(pl.Outcome.Rules, permission.RuleNetworkRequested) || hits.Load() != 2 {
		t.Fatalf("approved card with network requested: %v %+v %q, %d hits", err, res, out, hits.Load())
	}
	// The records say network, mode and the approval.
	var starts []audit.Record
	audit.Read(h.auditDir, audit.Filter{}, func(r *audit.Record) error {
		if r.Kind == audit.KindStart {
			starts = append(starts, *r)
		}
		return nil
	})
	if len(starts) != 3 || !starts[0].Network || starts[1].Network || !starts[2].Network || starts[0].Mode != "manual" || starts[0].Approval == nil || starts[0].Approval.Digest != starts[0].PlanDigest {
		t.Fatalf("start records %+v", starts)
	}
}

// TestExtraWritablePath: an approved extra writable path is writable for that run only; an
// approval never makes S-Code's state, a Git directory or a configuration tree writable.
func TestExtraWritablePath(t *testing.T) {
	h := startUserHelper(t)
	out := t.TempDir()
	h.write(t, "src/write.sh", "echo x > \"$1\"\n")
	res, pl, text, err := h.run(t, helperclient.Operation{Command: "bash src/write.sh " + out + "/a", ExtraWritable: []string{out}}, approveAll)
	if err != nil || res.Status() != 0 || !slices.Contains(pl.Plan.Sandbox.WritableRoots, out) || !slices.Contains(pl.Outcome.Rules, permission.RuleExtraWritable) {
		t.Fatalf("approved extra writable path: %v %+v %q %+v", err, res, text, pl.Plan.Sandbox.WritableRoots)
	}
	if _, err := os.Stat(filepath.Join(out, "a")); err != nil {
		t.Fatal(err)
	}
	// The next run without it cannot write there.
	res, _, text, err = h.run(t, helperclient.Operation{Command: "bash src/write.sh " + out + "/b"}, approveAll)
	if err != nil || res.Status() == 0 {
		t.Fatalf("write without the extra path: %v %+v %q", err, res, text)
	}
	if _, err := os.Stat(filepath.Join(out, "b")); err == nil {
		t.Fatal("b written without an extra writable path")
	}
	// Unapproved, it does not run at all.
	if _, _, _, err := h.run(t, helperclient.Operation{Command: "true", ExtraWritable: []string{out}}, nil); !errors.Is(err, helperclient.ErrNotApproved) {
		t.Fatalf("unapproved extra writable path: %v", err)
	}
	// Refused outright, whatever the approval.
	git := testenv.RequireTool(t, "git")
	repo := filepath.Join(t.TempDir(), "repo")
	if b, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, b)
	}
	os.MkdirAll(h.auditDir, 0o700)
	// A directory holding a repository or a control file: writable, the command would
	// plant a hook or a task that the user's git or editor runs outside the sandbox.
	nested := filepath.Join(t.TempDir(), "out")
	os.MkdirAll(filepath.Join(nested, "deep", ".vscode"), 0o755)
	for path, rule := range map[string]string{h.auditDir: workspace.RuleState, filepath.Join(repo, ".git"): workspace.RuleGitDir, "/": workspace.RuleRoot, repo: helperd.RuleExtraProtected, nested: helperd.RuleExtraProtected} {
		res, _, _, err := h.run(t, helperclient.Operation{Command: "true", ExtraWritable: []string{path}}, approveAll)
		if err != nil || res.Denied.GetRule() != rule {
			t.Errorf("extra writable %s: %v %+v, want %s", path, err, res, rule)
		}
	}
	hook := filepath.Join(repo, ".git", "hooks", "post-commit")
	h.run(t, helperclient.Operation{Command: "printf '#!/bin/sh\\ntouch pwned\\n' > " + hook, ExtraWritable: []string{repo}}, approveAll)
	if _, err := os.Stat(hook); err == nil {
		t.Fatalf("a command with the repository %s as extra writable path wrote its hook %s", repo, hook)
	}
}

// TestModeMatrix runs each mode against each class of operation through a real user helper:
// what runs without a person runs, what needs one is not sent unapproved, what is refused
// stays refused.
func TestModeMatrix(t *testing.T) {
	run, ask, never := permission.Run, permission.NeedsApproval, permission.Refused
	type row struct {
		class, command string
		network        bool
		want           [3]permission.Result // manual, accept-edits, workspace
	}
	rows := []row{
		{"read", "cat src/f", false, [3]permission.Result{run, run, run}},
		{"workspace-write", "touch src/new", false, [3]permission.Result{ask, ask, run}},
		{"protected-write", "echo x > .git/config", false, [3]permission.Result{never, never, never}},
		{"outside-write", "echo x > /tmp/s-code-mode-matrix", false, [3]permission.Result{ask, ask, ask}},
		{"network", "curl -sS http://127.0.0.1:9/", false, [3]permission.Result{ask, ask, ask}},
		{"network-requested", "cat src/f", true, [3]permission.Result{ask, ask, ask}},
		{"deny", "rm -rf /", false, [3]permission.Result{never, never, never}},
	}
	check := func(t *testing.T, h *userHelper, rows []row) {
		for _, r := range rows {
			for i, mode := range permission.Modes {
				t.Run(r.class+"/"+mode.String(), func(t *testing.T) {
					res, pl, text, err := h.run(t, helperclient.Operation{Command: r.command, Mode: mode, Network: r.network}, nil)
					if pl == nil {
						t.Fatalf("no plan: %v", err)
					}
					if pl.Outcome.Result != r.want[i] || pl.Plan.Mode != mode {
						t.Fatalf("outcome %v %v (%s), want %v", pl.Outcome.Result, pl.Outcome.Rules, pl.Outcome.Reason, r.want[i])
					}
					switch r.want[i] {
					case run:
						if err != nil || res.Denied != nil || res.Exited == nil {
							t.Fatalf("did not run without a person: %v %+v %q", err, res, text)
						}
					case ask:
						if !errors.Is(err, helperclient.ErrNotApproved) {
							t.Fatalf("sent without approval: %v %+v", err, res)
						}
					case never:
						if err != nil || res.Denied == nil {
							t.Fatalf("not refused: %v %+v", err, res)
						}
					}
				})
			}
		}
	}
	h := startUserHelper(t)
	h.write(t, "src/f", "data\n")
	check(t, h, rows)
	// Every record of the matrix names its mode.
	audit.Read(h.auditDir, audit.Filter{}, func(r *audit.Record) error {
		if r.Kind != audit.KindRotate && r.Kind != audit.KindSeal && r.Kind != audit.KindRecover && r.Mode == "" {
			t.Errorf("record %d (%s) has no mode", r.Seq, r.Kind)
		}
		return nil
	})
	// On a machine that cannot confine commands, nothing runs without a person, in any mode.
	t.Run("unconfined", func(t *testing.T) {
		t.Setenv(sandbox.PretendNoLandlockEnv, "1")
		h := startUserHelper(t)
		h.write(t, "src/f", "data\n")
		check(t, h, []row{
			{"read", "cat src/f", false, [3]permission.Result{ask, ask, ask}},
			{"workspace-write", "touch src/new", false, [3]permission.Result{ask, ask, ask}},
			{"deny", "rm -rf /", false, [3]permission.Result{never, never, never}},
		})
	})
}

// TestHelperPolicyAllow: an allow rule in the helper's --policy takes effect: the client's
// own check asks, the helper's plan runs it without a person.
func TestHelperPolicyAllow(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy.toml")
	os.WriteFile(policy, []byte("[[rule]]\nid = \"hello\"\nmatch = [\"bash\", \"src/hello.sh\"]\ndecision = \"allow\"\nmessage = \"Our hello script.\"\n"), 0o600)
	h := startUserHelper(t, "--policy", policy)
	h.write(t, "src/hello.sh", "echo hello\n")
	res, pl, text, err := h.run(t, helperclient.Operation{Command: "bash src/hello.sh"}, nil)
	if err != nil || res.Status() != 0 || text != "hello\n" || pl.Outcome.Result != permission.Run {
		t.Fatalf("policy allow: %v %+v %q %+v", err, res, text, pl.Outcome)
	}
	// Another script still asks.
	h.write(t, "src/other.sh", "echo other\n")
	if _, _, _, err := h.run(t, helperclient.Operation{Command: "bash src/other.sh"}, nil); !errors.Is(err, helperclient.ErrNotApproved) {
		t.Fatalf("other script: %v", err)
	}
}

// TestPathNeverWritableByTheCommand: a caller PATH entry inside one of the profile's writable
// roots beyond the workspace (the tool cache namespace: go install puts programs in its
// go/bin) is left out of the command's PATH, so a program one command plants there is never
// what a later command, one approved for network included, runs by name.
func TestPathNeverWritableByTheCommand(t *testing.T) {
	h := startUserHelper(t)
	_, pl, _, err := h.run(t, helperclient.Operation{Command: "true"}, nil)
	if err != nil || pl == nil {
		t.Fatalf("plan: %v", err)
	}
	var ns string
	for _, w := range pl.Plan.Sandbox.WritableRoots {
		if w != h.ws {
			ns = w
		}
	}
	if ns == "" {
		t.Fatalf("no writable root beside the workspace: %v", pl.Plan.Sandbox.WritableRoots)
	}
	bin := filepath.Join(ns, "go", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	path := bin + ":/usr/bin:/bin"
	res, _, text, err := h.run(t, helperclient.Operation{Command: "printf '#!/bin/sh\\necho planted\\n' > " + bin + "/planted && chmod +x " + bin + "/planted", Path: path}, approveAll)
	if err != nil || res.Status() != 0 {
		t.Fatalf("plant: %v %+v %q", err, res, text)
	}
	res, pl, text, err = h.run(t, helperclient.Operation{Command: "planted || echo none", Path: path}, approveAll)
	if err != nil || strings.Contains(text, "planted\n") || strings.Contains(pl.Plan.Path, bin) {
		t.Fatalf("the command ran a program planted in its own writable root: %v %q PATH %s", err, text, pl.Plan.Path)
	}
}
