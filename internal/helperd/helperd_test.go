package helperd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/local"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// memAuditor is an in-memory Auditor for tests: it keeps every record and can be told to
// fail a kind of record.
type memAuditor struct {
	mu      sync.Mutex
	records []audit.Record
	durable []bool
	fail    map[audit.Kind]bool
}

func (a *memAuditor) Append(_ context.Context, r *audit.Record, durable bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail[r.Kind] {
		return errors.New("disk full (test)")
	}
	r.Seq = uint64(len(a.records) + 1)
	r.Hash = fmt.Sprintf("h%d", r.Seq)
	a.records = append(a.records, *r)
	a.durable = append(a.durable, durable)
	return nil
}

func (a *memAuditor) Head() (uint64, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.records) == 0 {
		return 0, ""
	}
	r := a.records[len(a.records)-1]
	return r.Seq, r.Hash
}

// byRequest returns the kinds of the records of one request, in order.
func (a *memAuditor) byRequest(id string) []audit.Kind {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ks []audit.Kind
	for _, r := range a.records {
		if r.RequestID == id {
			ks = append(ks, r.Kind)
		}
	}
	return ks
}

func (a *memAuditor) find(kind audit.Kind, id string) (audit.Record, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.records {
		if r.Kind == kind && (id == "" || r.RequestID == id) {
			return r, true
		}
	}
	return audit.Record{}, false
}

type env struct {
	srv    *helperd.Server
	aud    *memAuditor
	client helperv1.HelperClient
	conn   *grpc.ClientConn
	sock   string
	work   string // a directory the commands may use
}

func newEnv(t testing.TB, mod func(*helperd.Config)) *env {
	t.Helper()
	aud := &memAuditor{fail: map[audit.Kind]bool{}}
	cfg := helperd.Config{
		Role:             safety.RoleUser,
		Version:          "test",
		Auditor:          aud,
		Authorize:        helperd.SameUID(uint32(os.Geteuid())),
		Runner:           execrun.Plain{},
		Path:             execrun.SafePath,
		Home:             t.TempDir(),
		User:             "tester",
		RequireOwnedDirs: true,
		KillGrace:        300 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := helperd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "h.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(time.Second) })
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(local.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	return &env{srv: srv, aud: aud, client: helperv1.NewHelperClient(conn), conn: conn, sock: sock, work: work}
}

// result is everything an Exec stream returned.
type result struct {
	requestID      string
	denied         *helperv1.Denied
	pid            int32
	stdout, stderr bytes.Buffer
	exited         *helperv1.Exited
	err            error
}

func (r *result) status() int {
	if r.exited == nil {
		return -1
	}
	if s := r.exited.GetSignal(); s != nil {
		return 128 + int(s.GetNumber())
	}
	return int(r.exited.GetExitCode())
}

// approve stands in a test's ExecStart for "a person approves whatever the helper's plan
// shows": exec asks the helper for the plan first and sends its digest and nonce.
func approve() *helperv1.Approval {
	return &helperv1.Approval{Channel: helperv1.ApprovalChannel_APPROVAL_CHANNEL_FLAG}
}

// planFor asks the helper for the plan of start (intent run), as a client does before Exec.
func (e *env) planFor(ctx context.Context, start *helperv1.ExecStart) (*helperv1.PlanResponse, error) {
	return e.client.Plan(ctx, &helperv1.PlanRequest{
		Command: start.Command, Shell: start.Shell, Workspace: start.Workspace, Cwd: start.Cwd, Env: start.Env,
		TimeoutMs: start.TimeoutMs, ClientVerdict: start.ClientVerdict, Mode: start.Mode, Network: start.Network,
		ExtraWritable: start.ExtraWritable, Path: start.Path, Intent: helperv1.PlanIntent_PLAN_INTENT_RUN,
	})
}

// exec runs start through a raw gRPC client, sending stdin (then stdin close) when not nil.
// An unset cwd is the test's work directory and an unset mode is Manual; an approve()
// approval is filled from the helper's plan (see approve).
func (e *env) exec(ctx context.Context, start *helperv1.ExecStart, stdin []byte) *result {
	if err := e.prepare(ctx, start); err != nil {
		return &result{err: err}
	}
	return e.execRaw(ctx, start, stdin)
}

// prepare fills the defaults of exec into start: the work directory, Manual mode, and an
// approve() approval from the helper's plan.
func (e *env) prepare(ctx context.Context, start *helperv1.ExecStart) error {
	if start.Cwd == "" {
		start.Cwd = e.work
	}
	if start.Mode == helperv1.Mode_MODE_UNSPECIFIED {
		start.Mode = helperv1.Mode_MODE_MANUAL
	}
	if a := start.Approval; a != nil && a.Digest == "" && a.Nonce == "" {
		resp, err := e.planFor(ctx, start)
		if err != nil {
			return err
		}
		if resp.GetNonce() != "" {
			a.Digest, a.Nonce, a.ExpiresAt = resp.GetPlan().GetDigest(), resp.GetNonce(), resp.GetNonceExpiresAt()
		}
	}
	return nil
}

// startMsg returns the first message of an Exec stream for start, prepared as exec does.
func (e *env) startMsg(t *testing.T, start *helperv1.ExecStart) *helperv1.ExecRequest {
	t.Helper()
	if err := e.prepare(ctx(t), start); err != nil {
		t.Fatal(err)
	}
	return &helperv1.ExecRequest{Msg: &helperv1.ExecRequest_Start{Start: start}}
}

// execRaw runs start as it is.
func (e *env) execRaw(ctx context.Context, start *helperv1.ExecStart, stdin []byte) *result {
	r := &result{}
	st, err := e.client.Exec(ctx)
	if err != nil {
		r.err = err
		return r
	}
	if err := st.Send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_Start{Start: start}}); err != nil {
		r.err = err
		return r
	}
	if stdin != nil {
		st.Send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_Stdin{Stdin: stdin}})
		st.Send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_StdinClose{StdinClose: &helperv1.StdinClose{}}})
	}
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return r
		}
		if err != nil {
			r.err = err
			return r
		}
		switch x := ev.GetEvent().(type) {
		case *helperv1.ExecEvent_Accepted:
			r.requestID = x.Accepted.GetRequestId()
		case *helperv1.ExecEvent_Denied:
			r.denied = x.Denied
		case *helperv1.ExecEvent_Started:
			r.pid = x.Started.GetPid()
		case *helperv1.ExecEvent_Output:
			if x.Output.GetStream() == helperv1.Stream_STREAM_STDOUT {
				r.stdout.Write(x.Output.GetData())
			} else {
				r.stderr.Write(x.Output.GetData())
			}
		case *helperv1.ExecEvent_Exited:
			r.exited = x.Exited
		}
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestExecRunsAndAudits(t *testing.T) {
	e := newEnv(t, nil)
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "echo out; echo err >&2; exit 3", Approval: approve(),
		ClientVerdict: &helperv1.ClientVerdict{Decision: helperv1.Decision_DECISION_ASK, Rules: []string{"x.y"}}}, nil)
	if r.err != nil || r.denied != nil {
		t.Fatalf("err %v denied %v", r.err, r.denied)
	}
	if r.stdout.String() != "out\n" || r.stderr.String() != "err\n" || r.status() != 3 || r.pid <= 0 {
		t.Fatalf("stdout %q stderr %q status %d pid %d", r.stdout.String(), r.stderr.String(), r.status(), r.pid)
	}
	if got := e.aud.byRequest(r.requestID); !slices.Equal(got, []audit.Kind{audit.KindRequest, audit.KindStart, audit.KindExit}) {
		t.Fatalf("audit kinds %v", got)
	}
	e.aud.mu.Lock()
	for i, rec := range e.aud.records {
		if rec.Kind == audit.KindStart && !e.aud.durable[i] {
			t.Error("start record not durable")
		}
		if rec.Peer == nil || rec.Peer.UID != uint32(os.Geteuid()) || rec.Peer.PID != int32(os.Getpid()) {
			t.Errorf("record %s peer %+v", rec.Kind, rec.Peer)
		}
	}
	e.aud.mu.Unlock()
	req, _ := e.aud.find(audit.KindRequest, r.requestID)
	if req.Client == nil || req.Client.Decision != "ask" || req.Approval == nil || req.Approval.Channel != "flag" || req.Mode != "manual" || req.Command != "echo out; echo err >&2; exit 3" {
		t.Errorf("request record %+v", req)
	}
	// The helper's plan allows it: no approval was needed, so none was taken.
	if st, _ := e.aud.find(audit.KindStart, r.requestID); st.Approved || len(st.PlanDigest) != 64 || st.Mode != "manual" || st.Workspace == "" {
		t.Errorf("start record %+v", st)
	}
	x, _ := e.aud.find(audit.KindExit, r.requestID)
	if x.ExitCode == nil || *x.ExitCode != 3 || x.Stdout != 4 || x.Stderr != 4 {
		t.Errorf("exit record %+v", x)
	}
}

func TestExitStatusParity(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		command string
		want    int
		signal  string
	}{
		{"true", 0, ""}, {"false", 1, ""}, {"exit 2", 2, ""}, {"f=$(mktemp); chmod -x $f; $f", 126, ""},
		{"no-such-command-s-code", 127, ""}, {"kill -TERM $$", 143, "SIGTERM"}, {"kill -INT $$", 130, "SIGINT"},
	} {
		t.Run(tc.command, func(t *testing.T) {
			r := e.exec(ctx(t), &helperv1.ExecStart{Command: tc.command, Approval: approve()}, nil)
			if r.err != nil || r.denied != nil {
				t.Fatalf("err %v denied %v", r.err, r.denied)
			}
			if r.status() != tc.want || r.exited.GetSignal().GetName() != tc.signal {
				t.Fatalf("status %d signal %q, want %d %q", r.status(), r.exited.GetSignal().GetName(), tc.want, tc.signal)
			}
		})
	}
}

// TestRawClientDenied: a client that skips its own check is still judged by the helper.
func TestRawClientDenied(t *testing.T) {
	e := newEnv(t, nil)
	// Without approval even an ask verdict runs nothing.
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "rm -rf /"}, nil)
	if r.err != nil || r.denied == nil || r.exited != nil || r.pid != 0 {
		t.Fatalf("rm -rf / not denied: %+v", r)
	}
	if got := e.aud.byRequest(r.requestID); !slices.Equal(got, []audit.Kind{audit.KindRequest, audit.KindDenied}) {
		t.Fatalf("audit kinds %v", got)
	}
	d, _ := e.aud.find(audit.KindDenied, r.requestID)
	if d.Verdict == nil || d.Verdict.Decision == "allow" || !strings.Contains(d.Reason, r.denied.GetRule()) {
		t.Errorf("denied record %+v", d)
	}
	// Approval does not override a deny verdict. Only sent when the engine denies, so this
	// test can never run rm -rf / for real.
	v := safety.Check("rm -rf /", safety.Context{Role: safety.RoleUser, Workspace: e.work, Cwd: e.work, Home: "/nonexistent"})
	if v.Decision != safety.Deny {
		t.Fatalf("ShellSafety says %v for rm -rf /; refusing to send it approved", v.Decision)
	}
	r = e.exec(ctx(t), &helperv1.ExecStart{Command: "rm -rf /", Approval: approve()}, nil)
	if r.denied == nil || r.denied.GetRule() == helperd.RuleApprovalRequired || r.pid != 0 {
		t.Fatalf("approved rm -rf / not denied by rule: %+v", r.denied)
	}
}

func TestApprovalRequired(t *testing.T) {
	e := newEnv(t, nil)
	marker := filepath.Join(e.work, "ran")
	command := "touch " + marker
	v := safety.Check(command, safety.Context{Role: safety.RoleUser, Workspace: e.work, Cwd: e.work, Home: "/nonexistent"})
	if v.Decision != safety.Ask {
		t.Fatalf("ShellSafety says %v for %q; the test needs ask", v.Decision, command)
	}
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: command}, nil)
	if r.denied.GetRule() != helperd.RuleApprovalRequired || len(r.denied.GetFindings()) == 0 {
		t.Fatalf("denied %+v", r.denied)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran without approval")
	}
}

func TestDirValidation(t *testing.T) {
	e := newEnv(t, nil)
	file := filepath.Join(e.work, "f")
	os.WriteFile(file, nil, 0o644)
	for name, start := range map[string]*helperv1.ExecStart{
		"relative":          {Command: "true", Cwd: "work"},
		"missing":           {Command: "true", Cwd: "/nonexistent/s-code"},
		"file":              {Command: "true", Cwd: file},
		"workspace-missing": {Command: "true", Workspace: "/nonexistent/s-code"},
		"cwd-outside":       {Command: "true", Workspace: e.work, Cwd: t.TempDir()},
		"cwd-prefix-only":   {Command: "true", Workspace: e.work, Cwd: mkdir(t, e.work+"-sibling")},
	} {
		t.Run(name, func(t *testing.T) {
			start.Approval = approve()
			r := e.exec(ctx(t), start, nil)
			if r.denied.GetRule() != helperd.RuleDirNotAllowed || r.pid != 0 {
				t.Fatalf("denied %+v", r.denied)
			}
		})
	}
	// A symlinked cwd runs in its target.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(e.work, link)
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "pwd -P", Cwd: link, Approval: approve()}, nil)
	sub := mkdir(t, filepath.Join(e.work, "sub"))
	if r := e.exec(ctx(t), &helperv1.ExecStart{Command: "true", Workspace: link, Cwd: sub, Approval: approve()}, nil); r.status() != 0 {
		t.Errorf("cwd inside a symlinked workspace: %+v", r.denied)
	}
	if want, _ := filepath.EvalSymlinks(e.work); strings.TrimSpace(r.stdout.String()) != want {
		t.Errorf("pwd %q, want %q", r.stdout.String(), want)
	}
}

func TestStdinAndSignal(t *testing.T) {
	e := newEnv(t, nil)
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "tr a-z A-Z", Approval: approve()}, []byte("hello\n"))
	if r.stdout.String() != "HELLO\n" {
		t.Fatalf("stdout %q (%+v)", r.stdout.String(), r.denied)
	}
	st, err := e.client.Exec(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	st.Send(e.startMsg(t, &helperv1.ExecStart{Command: "trap 'echo usr1; exit 9' USR1; echo ready; while :; do sleep 0.05; done", Cwd: e.work, Approval: approve()}))
	// Stdin ends first (as the CLI's does with no input): signals must still be delivered.
	st.Send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_StdinClose{StdinClose: &helperv1.StdinClose{}}})
	var out strings.Builder
	for {
		ev, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if o := ev.GetOutput(); o != nil && o.GetStream() == helperv1.Stream_STREAM_STDOUT {
			out.Write(o.GetData())
			if out.String() == "ready\n" {
				st.Send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_Signal{Signal: helperv1.Signal_SIGNAL_USR1}})
			}
		}
		if x := ev.GetExited(); x != nil {
			if x.GetExitCode() != 9 || out.String() != "ready\nusr1\n" {
				t.Fatalf("exit %v output %q", x, out.String())
			}
			return
		}
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	e := newEnv(t, nil)
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "sleep 300 & sleep 300", Approval: approve(), TimeoutMs: 300}, nil)
	if r.exited == nil || !r.exited.GetTimedOut() || r.exited.GetSignal() == nil {
		t.Fatalf("exited %+v err %v", r.exited, r.err)
	}
	if left := groupGone(t, int(r.pid)); left != nil {
		t.Fatalf("group %d alive: %v", r.pid, left)
	}
	x, _ := e.aud.find(audit.KindExit, r.requestID)
	if !strings.Contains(x.Reason, "timed out") || x.Signal == "" {
		t.Errorf("exit record %+v", x)
	}
}

func TestClientDisconnectKillsGroup(t *testing.T) {
	e := newEnv(t, nil)
	c, cancel := context.WithCancel(context.Background())
	st, err := e.client.Exec(c)
	if err != nil {
		t.Fatal(err)
	}
	st.Send(e.startMsg(t, &helperv1.ExecStart{Command: "sleep 300 & sleep 300", Cwd: e.work, Approval: approve()}))
	var pid int32
	var id string
	for pid == 0 {
		ev, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetAccepted(); a != nil {
			id = a.GetRequestId()
		}
		pid = ev.GetStarted().GetPid()
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	if left := groupGone(t, int(pid)); left != nil {
		t.Fatalf("group %d alive after disconnect: %v", pid, left)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if x, ok := e.aud.find(audit.KindExit, id); ok {
			if !strings.Contains(x.Reason, "client went away") {
				t.Errorf("exit record %+v", x)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no exit record after a disconnect")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAuditUnavailableRunsNothing(t *testing.T) {
	e := newEnv(t, nil)
	e.aud.fail[audit.KindStart] = true
	marker := filepath.Join(e.work, "ran")
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "touch " + marker, Approval: approve()}, nil)
	if r.denied.GetRule() != helperd.RuleAuditUnavailable || r.pid != 0 {
		t.Fatalf("denied %+v", r.denied)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran without its start record")
	}
	e.aud.fail[audit.KindRequest] = true
	r = e.exec(ctx(t), &helperv1.ExecStart{Command: "touch " + marker, Approval: approve()}, nil)
	if r.denied.GetRule() != helperd.RuleAuditUnavailable {
		t.Fatalf("denied %+v", r.denied)
	}
}

// TestConcurrencyLimit: with one slot, a second command waits for the first to end (its
// start record follows the first command's exit record).
func TestConcurrencyLimit(t *testing.T) {
	e := newEnv(t, func(c *helperd.Config) { c.MaxConcurrent = 1 })
	first := make(chan *result, 1)
	go func() {
		first <- e.exec(ctx(t), &helperv1.ExecStart{Command: "sleep 0.4", Approval: approve()}, nil)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for e.srv.Running() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "true", Approval: approve()}, nil)
	if r.status() != 0 {
		t.Fatalf("second command: %+v %v", r.denied, r.err)
	}
	r1 := <-first
	x1, _ := e.aud.find(audit.KindExit, r1.requestID)
	s2, _ := e.aud.find(audit.KindStart, r.requestID)
	if x1.Seq == 0 || s2.Seq < x1.Seq {
		t.Fatalf("second start seq %d before first exit seq %d", s2.Seq, x1.Seq)
	}
}

// TestTimeoutCappedByMaximum: a request asking for more than MaxTimeout gets MaxTimeout.
func TestTimeoutCappedByMaximum(t *testing.T) {
	e := newEnv(t, func(c *helperd.Config) { c.MaxTimeout = 300 * time.Millisecond })
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "sleep 30", Approval: approve(), TimeoutMs: 60000}, nil)
	if r.exited == nil || !r.exited.GetTimedOut() || r.exited.GetDuration().AsDuration() > 10*time.Second {
		t.Fatalf("exited %+v denied %+v", r.exited, r.denied)
	}
}

func TestStatusAndCheck(t *testing.T) {
	e := newEnv(t, func(c *helperd.Config) { c.PolicySummary = "same uid only" })
	e.exec(ctx(t), &helperv1.ExecStart{Command: "true", Approval: approve()}, nil)
	st, err := e.client.Status(ctx(t), &helperv1.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	seq, hash := e.aud.Head()
	if st.GetVersion() != "test" || st.GetRole() != helperv1.Role_ROLE_USER || st.GetAuditHeadSeq() != seq || st.GetAuditHeadHash() != hash || st.GetPolicySummary() != "same uid only" || seq == 0 {
		t.Errorf("status %+v", st)
	}
	ck, err := e.client.Check(ctx(t), &helperv1.CheckRequest{Command: "rm -rf /", Cwd: e.work})
	if err != nil {
		t.Fatal(err)
	}
	want := safety.Check("rm -rf /", safety.Context{Role: safety.RoleUser, Workspace: e.work, Cwd: e.work})
	if ck.GetVerdict().GetDecision() != helperd.DecisionToProto(want.Decision) || ck.GetVerdict().GetDecision() == helperv1.Decision_DECISION_ALLOW {
		t.Errorf("check %v, want %v", ck.GetVerdict(), want.Decision)
	}
	if _, err := e.client.Check(ctx(t), &helperv1.CheckRequest{Command: "true", Cwd: "relative"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("check with a relative cwd: %v", err)
	}
}

func TestShutdownKillsAfterGrace(t *testing.T) {
	e := newEnv(t, nil)
	started := make(chan *result, 1)
	go func() {
		r := e.exec(context.Background(), &helperv1.ExecStart{Command: "trap '' TERM; sleep 300", Approval: approve()}, nil)
		started <- r
	}()
	deadline := time.Now().Add(5 * time.Second)
	for e.srv.Running() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	begin := time.Now()
	e.srv.Shutdown(200 * time.Millisecond)
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	r := <-started
	if r.exited == nil || r.exited.GetSignal().GetName() != "SIGKILL" {
		t.Fatalf("result %+v err %v", r.exited, r.err)
	}
	x, _ := e.aud.find(audit.KindExit, r.requestID)
	if !strings.Contains(x.Reason, "stopping") {
		t.Errorf("exit record %+v", x)
	}
}

// TestGateMakesStricter: a Gate can turn a verdict into a denial (or ask), never looser.
func TestGateMakesStricter(t *testing.T) {
	gate := func(v safety.Verdict, command string, _ safety.Context) safety.Verdict {
		if strings.Contains(command, "forbidden") {
			return safety.Verdict{Decision: safety.Deny, Findings: append(v.Findings, safety.Finding{Rule: "test.gate", Decision: safety.Deny, Command: command, Message: "gated"})}
		}
		return safety.Verdict{Decision: safety.Allow} // tries to loosen: ignored
	}
	e := newEnv(t, func(c *helperd.Config) { c.Gate = gate })
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "echo forbidden", Approval: approve()}, nil)
	if r.denied.GetRule() != "test.gate" || r.pid != 0 {
		t.Fatalf("denied %+v", r.denied)
	}
	v := safety.Check("rm -rf /", safety.Context{Role: safety.RoleUser, Workspace: e.work, Cwd: e.work})
	r = e.exec(ctx(t), &helperv1.ExecStart{Command: "rm -rf /"}, nil)
	if v.Decision != safety.Allow && r.denied == nil {
		t.Fatalf("a gate that returns allow loosened a %v verdict", v.Decision)
	}
}

// TestGateZeroVerdictDenies: a Gate that returns a zero verdict (a bug, or a gate that
// forgot to fill it) denies: the zero Decision is deny, and a mode cannot lower it.
func TestGateZeroVerdictDenies(t *testing.T) {
	e := newEnv(t, func(c *helperd.Config) {
		c.Gate = func(safety.Verdict, string, safety.Context) safety.Verdict { return safety.Verdict{} }
	})
	for _, mode := range []helperv1.Mode{helperv1.Mode_MODE_MANUAL, helperv1.Mode_MODE_WORKSPACE} {
		r := e.exec(ctx(t), &helperv1.ExecStart{Command: "true", Mode: mode, Approval: approve()}, nil)
		if r.denied == nil || r.pid != 0 {
			t.Fatalf("%v: a zero verdict from the gate ran: %+v", mode, r)
		}
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestStalledClient: a client that stops reading cannot keep a timed-out command's exit
// record or its slot: the group is killed, the exit record written and the slot freed while
// the client still has not read.
func TestStalledClient(t *testing.T) {
	e := newEnv(t, nil)
	c, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := e.client.Exec(c)
	if err != nil {
		t.Fatal(err)
	}
	st.Send(e.startMsg(t, &helperv1.ExecStart{Command: "cat /dev/zero", Cwd: e.work, Approval: approve(), TimeoutMs: 300}))
	deadline := time.Now().Add(15 * time.Second)
	for {
		x, ok := e.aud.find(audit.KindExit, "")
		if ok {
			if !strings.Contains(x.Reason, "timed out") || x.Stdout == 0 {
				t.Errorf("exit record %+v", x)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no exit record while the client does not read")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for e.srv.Running() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stalled command still counts as running")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLongCommandDeniedAndCut(t *testing.T) {
	e := newEnv(t, nil)
	long := "echo " + strings.Repeat("x", helperd.MaxCommandLen)
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: long, Approval: approve()}, nil)
	if r.denied.GetRule() != helperd.RuleInvalidRequest || r.pid != 0 {
		t.Fatalf("denied %+v", r.denied)
	}
	req, _ := e.aud.find(audit.KindRequest, r.requestID)
	if len(req.Command) > helperd.MaxCommandLen+32 || !strings.HasSuffix(req.Command, "[truncated]") {
		t.Errorf("request record command is %d bytes", len(req.Command))
	}
	r = e.exec(ctx(t), &helperv1.ExecStart{Command: strings.Repeat("x", 2<<20), Approval: approve()}, nil)
	if status.Code(r.err) != codes.ResourceExhausted {
		t.Errorf("a 2 MiB start message: %v", r.err)
	}
}

// failingRunner is a Runner that cannot build any command (a sandbox that is unavailable).
type failingRunner struct{}

func (failingRunner) Command(context.Context, execrun.Spec) (*exec.Cmd, error) {
	return nil, errors.New("launcher missing (test)")
}

// TestDeniedRecordsCarryRule: every helper-side refusal writes a denied record whose helper
// verdict is deny with the refusing rule id first, so `s-code audit list` shows both.
func TestDeniedRecordsCarryRule(t *testing.T) {
	e := newEnv(t, nil)
	bad := newEnv(t, func(c *helperd.Config) { c.Runner = failingRunner{} })
	sctx := safety.Context{Role: safety.RoleUser, Workspace: e.work, Cwd: e.work, Home: "/nonexistent"}
	ask := "touch " + filepath.Join(e.work, "marker")
	if v := safety.Check(ask, sctx); v.Decision != safety.Ask {
		t.Fatalf("ShellSafety says %v for %q; the approval case needs ask", v.Decision, ask)
	}
	denyRule := ""
	if v := safety.Check("rm -rf /", sctx); v.Decision == safety.Deny {
		for _, f := range v.Findings {
			if f.Decision == safety.Deny {
				denyRule = f.Rule
				break
			}
		}
	} else {
		t.Fatalf("ShellSafety says %v for rm -rf /", v.Decision)
	}
	cases := []struct {
		name  string
		env   *env
		start *helperv1.ExecStart
		fail  audit.Kind // a record kind the auditor fails
		rule  string
	}{
		{"env-not-allowed", e, &helperv1.ExecStart{Command: "true", Approval: approve(), Env: map[string]string{"LD_PRELOAD": "/x.so"}}, "", helperd.RuleEnvNotAllowed},
		{"bad-cwd", e, &helperv1.ExecStart{Command: "true", Approval: approve(), Cwd: "/nonexistent/s-code"}, "", helperd.RuleDirNotAllowed},
		{"empty-command", e, &helperv1.ExecStart{Command: "", Approval: approve()}, "", helperd.RuleInvalidRequest},
		{"approval-required", e, &helperv1.ExecStart{Command: ask}, "", helperd.RuleApprovalRequired},
		{"shellsafety-deny", e, &helperv1.ExecStart{Command: "rm -rf /", Approval: approve()}, "", denyRule},
		{"runner-unavailable", bad, &helperv1.ExecStart{Command: "true", Approval: approve()}, "", helperd.RuleRunnerFailed},
		{"audit-unavailable", e, &helperv1.ExecStart{Command: "true", Approval: approve()}, audit.KindStart, helperd.RuleAuditUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fail != "" {
				tc.env.aud.mu.Lock()
				tc.env.aud.fail[tc.fail] = true
				tc.env.aud.mu.Unlock()
				defer func() {
					tc.env.aud.mu.Lock()
					delete(tc.env.aud.fail, tc.fail)
					tc.env.aud.mu.Unlock()
				}()
			}
			r := tc.env.exec(ctx(t), tc.start, nil)
			if r.denied.GetRule() != tc.rule || r.pid != 0 {
				t.Fatalf("denied %+v, want rule %s", r.denied, tc.rule)
			}
			d, ok := tc.env.aud.find(audit.KindDenied, r.requestID)
			if !ok || d.Verdict == nil || d.Verdict.Decision != "deny" || len(d.Verdict.Rules) == 0 || d.Verdict.Rules[0] != tc.rule {
				t.Fatalf("denied record %+v (verdict %+v)", d, d.Verdict)
			}
			if audit.Decision(&d) != "deny" || audit.Rules(&d)[0] != tc.rule || !strings.HasPrefix(d.Reason, tc.rule+": ") {
				t.Fatalf("audit list would show %s %v %q", audit.Decision(&d), audit.Rules(&d), d.Reason)
			}
		})
	}
}
