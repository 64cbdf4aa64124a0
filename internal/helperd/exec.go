package helperd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/peerauth"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/permission"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// Rule ids of the helper's own denials (ShellSafety's rule ids pass through unchanged).
const (
	RuleApprovalRequired = permission.RuleApprovalRequired // a plan that needs approval, without one
	RuleApprovalMismatch = permission.RuleApprovalMismatch // an approval of another plan
	RuleApprovalReplayed = permission.RuleApprovalReplayed // an approval used before
	RuleApprovalExpired  = permission.RuleApprovalExpired  // an approval that lapsed
	RuleAuditUnavailable = "audit.unavailable"             // the audit record could not be written
	RuleInvalidRequest   = "request.invalid"               // a malformed request
	RuleDirNotAllowed    = "request.dir"                   // cwd or workspace missing or not the peer's
	RuleRunnerFailed     = "runner.unavailable"            // the runner (sandbox) could not build the command
	RulePeerNotAdmitted  = "peer.not-admitted"             // a caller the helper does not admit (refused record)
	RulePeerUnknown      = "peer.unknown"                  // peer credentials could not be read (refused record)
	ruleSafetyDeny       = "safety.deny"                   // a deny verdict without findings
)

// dirs are a request's directories after validation.
type dirs struct {
	workspace, cwd string
}

// Exec runs one command: see the Helper service in helper.proto.
func (s *Server) Exec(stream helperv1.Helper_ExecServer) error {
	out := newSender(stream)
	err := s.exec(stream, out)
	if cerr := out.close(); err == nil {
		err = cerr
	}
	return err
}

// execution is one Exec request as it moves through the steps of exec.
type execution struct {
	c     peercred.Creds
	start *helperv1.ExecStart
	op    operation
	base  audit.Record // the fields every record of the request carries
	log   *zap.Logger
	pl    *planned
	// postRunErr is why the runner's post-run check was incomplete (see postRun), or "".
	postRunErr string
}

// exec runs one Exec stream as a pipeline of named steps: admit → plan → check approval →
// reserve → prepare → record start → run → record exit. A step that refuses ends the
// stream with a Denied and a denied audit record.
func (s *Server) exec(stream helperv1.Helper_ExecServer, out *sender) error {
	ctx := stream.Context()
	x, err := s.admit(stream)
	if err != nil {
		return err
	}
	s.handlers.Add(1)
	defer s.handlers.Done()

	req := x.base
	req.Kind = audit.KindRequest
	if !s.audit(ctx, &req, false) {
		return out.deny(&helperv1.Denied{Rule: RuleAuditUnavailable, Reason: "the helper cannot write its audit log, so it runs nothing"})
	}
	if err := out.send(&helperv1.ExecEvent{Event: &helperv1.ExecEvent_Accepted{Accepted: &helperv1.Accepted{RequestId: x.base.RequestID}}}); err != nil {
		return err
	}
	deny := func(d *helperv1.Denied) error {
		r := x.base
		withPlan(&r, x.pl)
		r.Kind = audit.KindDenied
		r.Verdict = denialSummary(d.GetRule(), x.pl.verdict())
		r.Reason = d.GetRule() + ": " + d.GetReason()
		s.audit(ctx, &r, false)
		x.log.Info("denied", zap.String("rule", d.GetRule()), zap.String("reason", d.GetReason()))
		return out.deny(d)
	}

	// plan: the helper's own projection, recomputed here whatever the client saw.
	var denial *helperv1.Denied
	if x.pl, denial = s.planOf(x.c, x.op); denial != nil {
		return deny(denial)
	}
	withPlan(&x.base, x.pl)
	// check approval: what runs is what was approved, once.
	if denial := s.checkApproval(x.c, x.pl, x.start.GetApproval()); denial != nil {
		return deny(denial)
	}
	x.base.Approved = x.pl.outcome.Result == permission.NeedsApproval
	// team approval: a plan that needs approval for a rule of the policy's [approvals] waits
	// for another person in the approvers group, whatever the requester approved.
	if x.base.Approved && s.cfg.Team.Needs(x.pl.outcome.Rules) {
		approver, d, err := s.awaitTeam(ctx, x, out)
		if err != nil {
			r := x.base
			r.Kind = audit.KindDenied
			r.Reason = RuleApprovalTimeout + ": the requester left while the request was pending: " + err.Error()
			s.audit(context.WithoutCancel(ctx), &r, false)
			return err
		}
		if approver != nil {
			a := audit.Approval{Channel: permission.ChannelTeam.String()}
			if x.base.Approval != nil {
				a = *x.base.Approval
				a.Channel = permission.ChannelTeam.String()
			}
			a.Approver = auditPeer(*approver)
			x.base.Approval = &a
		}
		if d != nil {
			return deny(d)
		}
	}

	// reserve: at most MaxConcurrent commands run; further requests wait for a free slot.
	release, err := s.reserve(ctx)
	if err != nil {
		return err
	}
	defer release()
	cmdCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.runCtx, cancel)()

	// prepare: the runner (sandbox) builds the command from the plan's Spec.
	spec := x.pl.spec
	spec.RequestID = x.base.RequestID
	cmd, err := s.cfg.Runner.Command(cmdCtx, spec)
	if err != nil {
		x.log.Error("runner failed", zap.Error(err))
		return deny(&helperv1.Denied{Rule: RuleRunnerFailed, Reason: "the helper could not prepare the command: " + err.Error()})
	}

	// record start: durably, before the command starts.
	withSpec(&x.base, spec)
	st := x.base
	st.Kind = audit.KindStart
	st.Verdict = summary(x.pl.verdict())
	if !s.audit(ctx, &st, true) {
		return deny(&helperv1.Denied{Rule: RuleAuditUnavailable, Reason: "the helper could not write the start record durably, so the command did not run"})
	}

	// run.
	r, timeout, err := s.run(stream, out, x, cmdCtx, cmd)
	if err != nil {
		return err
	}

	// post-run check (the sandbox's quarantine), then record exit: even when the client has
	// gone, and before the slot is freed, so that in the log a command's exit precedes the
	// start of the one that waited for its slot.
	s.postRun(out, x, cmd)
	ev := s.recordExit(ctx, x, r, timeout)
	release()
	x.log.Info("exited", zap.Int("status", r.Status()), zap.Duration("duration", r.Duration), zap.Bool("timed_out", r.TimedOut))
	return out.send(&helperv1.ExecEvent{Event: &helperv1.ExecEvent_Exited{Exited: ev}})
}

// admit is the first step of Exec: the peer's credentials, the start message, and the
// fields every audit record of the request carries.
func (s *Server) admit(stream helperv1.Helper_ExecServer) (*execution, error) {
	c, err := peerauth.FromContext(stream.Context())
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	first, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	start := first.GetStart()
	if start == nil {
		return nil, status.Error(codes.InvalidArgument, "the first message of Exec must be start")
	}
	x := &execution{c: c, start: start, op: opOfStart(start)}
	x.base = s.baseRecord(c, x.op, newRequestID())
	x.base.Approval = auditApproval(start.GetApproval())
	x.log = s.cfg.Logger.With(zap.String("request_id", x.base.RequestID), zap.Uint32("peer_uid", c.UID), zap.Int32("peer_pid", c.PID))
	return x, nil
}

// reserve waits for a free command slot and returns the function that frees it (safe to
// call more than once).
func (s *Server) reserve(ctx context.Context) (func(), error) {
	select {
	case s.slots <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-s.slots }) }, nil
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	case <-s.runCtx.Done():
		return nil, status.Error(codes.Unavailable, "the helper is stopping")
	}
}

// run starts cmd, streams its output and input, and waits for it to end.
func (s *Server) run(stream helperv1.Helper_ExecServer, out *sender, x *execution, cmdCtx context.Context, cmd *exec.Cmd) (execrun.Result, time.Duration, error) {
	ctx := stream.Context()
	timeout := s.timeout(x.start.GetTimeoutMs())
	p, err := execrun.Start(cmdCtx, cmd, execrun.Options{
		Output:         out.output,
		OnDrainExpired: out.abandonOutput,
		Timeout:        timeout,
		KillGrace:      s.cfg.KillGrace,
	})
	if err != nil {
		s.postRun(nil, x, cmd) // nothing ran: only frees the runner's state
		r := x.base
		r.Kind = audit.KindExit
		r.Verdict = summary(x.pl.verdict())
		r.Reason = "start failed: " + err.Error()
		s.audit(ctx, &r, false)
		x.log.Error("start failed", zap.Error(err))
		return execrun.Result{}, 0, status.Errorf(codes.Internal, "the helper could not start the command: %v", err)
	}
	s.running.Add(1)
	x.log.Info("started", zap.Int("pid", p.Pid()), zap.Bool("approved", x.base.Approved), zap.String("mode", x.base.Mode))
	if err := out.send(&helperv1.ExecEvent{Event: &helperv1.ExecEvent_Started{Started: &helperv1.Started{Pid: int32(p.Pid())}}}); err != nil {
		x.log.Info("client gone before start was sent", zap.Error(err))
	}
	go s.forwardInput(stream, p, x.log)
	r := p.Wait()
	s.running.Add(-1)
	return r, timeout, nil
}

// recordExit writes the exit record of a command that ran and returns its Exited event.
func (s *Server) recordExit(ctx context.Context, x *execution, r execrun.Result, timeout time.Duration) *helperv1.Exited {
	rec := x.base
	rec.Kind = audit.KindExit
	rec.Verdict = summary(x.pl.verdict())
	rec.Duration = r.Duration.Seconds()
	rec.Stdout, rec.Stderr = r.StdoutBytes, r.StderrBytes
	ev := &helperv1.Exited{Duration: durationpb.New(r.Duration), TimedOut: r.TimedOut, StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes}
	if r.Signal != 0 {
		name := unix.SignalName(r.Signal)
		rec.Signal = name
		ev.Status = &helperv1.Exited_Signal{Signal: &helperv1.SignalStatus{Name: name, Number: int32(r.Signal)}}
	} else {
		code := r.ExitCode
		rec.ExitCode = &code
		ev.Status = &helperv1.Exited_ExitCode{ExitCode: int32(code)}
	}
	switch {
	case r.TimedOut:
		rec.Reason = fmt.Sprintf("timed out after %v", timeout)
	case r.Canceled && ctx.Err() != nil:
		rec.Reason = "killed: the client went away"
	case r.Canceled:
		rec.Reason = "killed: the helper is stopping"
	}
	if x.postRunErr != "" {
		rec.Reason = strings.TrimPrefix(rec.Reason+"; "+x.postRunErr, "; ")
	}
	ev.Reason = rec.Reason
	s.audit(context.WithoutCancel(ctx), &rec, false)
	return ev
}

// forwardInput reads stdin chunks, stdin close and signals from the client until the
// client stops sending or the command ends.
func (s *Server) forwardInput(stream helperv1.Helper_ExecServer, p *execrun.Process, log *zap.Logger) {
	chunks := make(chan []byte, 64)
	go func() {
		defer p.Stdin().Close()
		for b := range chunks {
			if _, err := p.Stdin().Write(b); err != nil {
				// The command closed its stdin: drop the rest.
				for range chunks {
				}
				return
			}
		}
	}()
	stdinOpen := true
	closeStdin := func() {
		if stdinOpen {
			close(chunks)
			stdinOpen = false
		}
	}
	defer closeStdin()
	for {
		m, err := stream.Recv()
		if err != nil {
			// io.EOF: the client sends nothing more (stdin ends with it); anything else:
			// the client has gone and the stream's context kills the command.
			if !errors.Is(err, io.EOF) {
				log.Debug("exec stream receive ended", zap.Error(err))
			}
			return
		}
		switch msg := m.GetMsg().(type) {
		case *helperv1.ExecRequest_Stdin:
			if !stdinOpen {
				log.Debug("stdin after stdin_close dropped")
				continue
			}
			select {
			case chunks <- msg.Stdin:
			case <-p.Done():
				return
			}
		case *helperv1.ExecRequest_StdinClose:
			// Stdin ends; signals may still follow.
			closeStdin()
		case *helperv1.ExecRequest_Signal:
			sig, ok := signalOf(msg.Signal)
			if !ok {
				log.Warn("unknown signal from client", zap.Stringer("signal", msg.Signal))
				continue
			}
			log.Debug("forwarding signal", zap.Stringer("signal", sig))
			if err := p.Signal(sig); err != nil {
				log.Debug("signal not delivered", zap.Error(err))
			}
		default:
			log.Warn("unexpected message after start", zap.String("type", fmt.Sprintf("%T", msg)))
		}
	}
}

// auditCommand returns the command text for audit records: cut at MaxCommandLen (such a
// request is denied anyway), so a client cannot make one record megabytes long.
func auditCommand(c string) string {
	if len(c) <= MaxCommandLen {
		return c
	}
	return strings.ToValidUTF8(c[:MaxCommandLen], "") + " …[truncated]"
}

// judge returns the helper's verdict: ShellSafety's, made stricter by Gate when set.
func (s *Server) judge(command string, ctx safety.Context) safety.Verdict {
	v := safety.Check(command, ctx)
	if s.cfg.Gate == nil {
		return v
	}
	g := s.cfg.Gate(v, command, ctx)
	g.Decision = g.Decision.Stricter(v.Decision)
	return g
}

func (s *Server) safetyContext(d dirs, dialect safety.Dialect) safety.Context {
	return safety.Context{Role: s.cfg.Role, Workspace: d.workspace, Cwd: d.cwd, Home: s.cfg.Home, Dialect: dialect, Policy: s.cfg.Policy}
}

// timeout returns a request's time limit: its own, else DefaultTimeout, capped by
// MaxTimeout.
func (s *Server) timeout(ms uint32) time.Duration {
	t := time.Duration(ms) * time.Millisecond
	if t == 0 {
		t = s.cfg.DefaultTimeout
	}
	if s.cfg.MaxTimeout > 0 && (t == 0 || t > s.cfg.MaxTimeout) {
		t = s.cfg.MaxTimeout
	}
	return t
}

// sender sends an Exec stream's events, in order, from one goroutine (gRPC allows one
// sender at a time), so that a client that stops reading blocks only that goroutine: the
// command's end, its exit record and its slot never wait for the client.
type sender struct {
	stream  helperv1.Helper_ExecServer
	events  chan *helperv1.ExecEvent
	abandon chan struct{} // closed when output may be dropped instead of waiting
	once    sync.Once     // guards close(abandon)
	done    chan struct{} // closed when the goroutine has stopped; err is then set
	err     error
}

func newSender(stream helperv1.Helper_ExecServer) *sender {
	o := &sender{stream: stream, events: make(chan *helperv1.ExecEvent, 64), abandon: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(o.done)
		for ev := range o.events {
			if err := o.stream.Send(ev); err != nil {
				o.err = err
				o.abandonOutput()
				for range o.events {
				}
				return
			}
		}
	}()
	return o
}

// send queues ev; it fails once the stream is broken.
func (o *sender) send(ev *helperv1.ExecEvent) error {
	select {
	case o.events <- ev:
		return nil
	case <-o.done:
		return o.err
	}
}

// close sends what is queued and returns the stream's error, if any.
func (o *sender) close() error {
	close(o.events)
	<-o.done
	return o.err
}

func (o *sender) deny(d *helperv1.Denied) error {
	return o.send(&helperv1.ExecEvent{Event: &helperv1.ExecEvent_Denied{Denied: d}})
}

// abandonOutput makes output calls drop chunks the client is not taking instead of waiting:
// the command has ended and its drain time is over, or the stream is broken.
func (o *sender) abandonOutput() { o.once.Do(func() { close(o.abandon) }) }

// output queues one output chunk (a copy: execrun reuses data). While the client keeps up,
// nothing is dropped; a full queue holds the command back (the pipe fills) until the client
// reads, or until abandonOutput.
func (o *sender) output(s execrun.Stream, data []byte) {
	st := helperv1.Stream_STREAM_STDOUT
	if s == execrun.Stderr {
		st = helperv1.Stream_STREAM_STDERR
	}
	ev := &helperv1.ExecEvent{Event: &helperv1.ExecEvent_Output{Output: &helperv1.Output{Stream: st, Data: bytes.Clone(data)}}}
	select {
	case o.events <- ev:
		return
	default:
	}
	select {
	case o.events <- ev:
	case <-o.abandon:
	case <-o.done:
	}
}

// auditEnv returns a request's environment additions as sorted NAME=value pairs for its
// audit records (the log redacts secret-named values), or nil when there are none.
func auditEnv(add map[string]string) []string {
	if len(add) == 0 {
		return nil
	}
	env := make([]string, 0, len(add))
	for k, v := range add {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}
