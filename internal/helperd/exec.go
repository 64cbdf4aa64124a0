package helperd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
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
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// Rule ids of the helper's own denials (ShellSafety's rule ids pass through unchanged).
const (
	RuleApprovalRequired = "approval.required"  // an ask verdict without a person's approval
	RuleAuditUnavailable = "audit.unavailable"  // the audit record could not be written
	RuleEnvInjection     = "env.injection"      // a refused environment addition
	RuleInvalidRequest   = "request.invalid"    // a malformed request
	RuleDirNotAllowed    = "request.dir"        // cwd or workspace missing or not the peer's
	RuleRunnerFailed     = "runner.unavailable" // the runner (sandbox) could not build the command
	RulePeerNotAdmitted  = "peer.not-admitted"  // a caller the helper does not admit (refused record)
	RulePeerUnknown      = "peer.unknown"       // peer credentials could not be read (refused record)
	ruleSafetyDeny       = "safety.deny"        // a deny verdict without findings
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

func (s *Server) exec(stream helperv1.Helper_ExecServer, out *sender) error {
	ctx := stream.Context()
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return status.Error(codes.Unauthenticated, err.Error())
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	start := first.GetStart()
	if start == nil {
		return status.Error(codes.InvalidArgument, "the first message of Exec must be start")
	}
	s.handlers.Add(1)
	defer s.handlers.Done()

	base := audit.Record{
		RequestID: newRequestID(),
		Helper:    s.cfg.Role.String(),
		Peer:      auditPeer(c),
		Command:   auditCommand(start.GetCommand()),
		Cwd:       start.GetCwd(),
		Workspace: start.GetWorkspace(),
		Env:       auditEnv(start.GetEnv()),
		Client:    clientVerdict(start.GetClientVerdict()),
		Approved:  start.GetApproved(),
	}
	log := s.cfg.Logger.With(zap.String("request_id", base.RequestID), zap.Uint32("peer_uid", c.UID), zap.Int32("peer_pid", c.PID))

	req := base
	req.Kind = audit.KindRequest
	if !s.audit(ctx, &req, false) {
		return out.deny(&helperv1.Denied{Rule: RuleAuditUnavailable, Reason: "the helper cannot write its audit log, so it runs nothing"})
	}
	if err := out.send(&helperv1.ExecEvent{Event: &helperv1.ExecEvent_Accepted{Accepted: &helperv1.Accepted{RequestId: base.RequestID}}}); err != nil {
		return err
	}

	spec, verdict, denial := s.decide(c, start, base.RequestID)
	// release frees the slot as soon as the command has ended and its exit record is
	// written (the last events may still wait for a slow client).
	release := func() {}
	if denial == nil {
		// At most MaxConcurrent commands run; further requests wait for a free slot.
		select {
		case s.slots <- struct{}{}:
			var once sync.Once
			release = func() { once.Do(func() { <-s.slots }) }
			defer release()
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-s.runCtx.Done():
			return status.Error(codes.Unavailable, "the helper is stopping")
		}
	}
	var cmdCtx context.Context
	if denial == nil {
		var cancel context.CancelFunc
		cmdCtx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.runCtx, cancel)()
	}
	var cmd *exec.Cmd
	if denial == nil {
		if cmd, err = s.cfg.Runner.Command(cmdCtx, spec); err != nil {
			log.Error("runner failed", zap.Error(err))
			denial = &helperv1.Denied{Rule: RuleRunnerFailed, Reason: "the helper could not prepare the command: " + err.Error()}
		}
	}
	if denial != nil {
		d := base
		d.Kind = audit.KindDenied
		d.Verdict = denialSummary(denial.GetRule(), verdict)
		d.Reason = denial.GetRule() + ": " + denial.GetReason()
		s.audit(ctx, &d, false)
		log.Info("denied", zap.String("rule", denial.GetRule()), zap.String("reason", denial.GetReason()))
		return out.deny(denial)
	}

	st := base
	st.Kind = audit.KindStart
	st.Verdict = summary(verdict)
	if !s.audit(ctx, &st, true) {
		denial := &helperv1.Denied{Rule: RuleAuditUnavailable, Reason: "the helper could not write the start record durably, so the command did not run"}
		d := base
		d.Kind = audit.KindDenied
		d.Verdict = denialSummary(denial.GetRule(), verdict)
		d.Reason = denial.GetRule() + ": " + denial.GetReason()
		s.audit(ctx, &d, false)
		return out.deny(denial)
	}

	timeout := s.timeout(start.GetTimeoutMs())
	p, err := execrun.Start(cmdCtx, cmd, execrun.Options{
		Output:         out.output,
		OnDrainExpired: out.abandonOutput,
		Timeout:        timeout,
		KillGrace:      s.cfg.KillGrace,
	})
	if err != nil {
		if ae, ok := s.cfg.Runner.(execrun.AfterExit); ok {
			ae.AfterExit(cmd) // nothing ran: only frees the runner's state
		}
		x := base
		x.Kind = audit.KindExit
		x.Verdict = summary(verdict)
		x.Reason = "start failed: " + err.Error()
		s.audit(ctx, &x, false)
		log.Error("start failed", zap.Error(err))
		return status.Errorf(codes.Internal, "the helper could not start the command: %v", err)
	}
	s.running.Add(1)
	log.Info("started", zap.Int("pid", p.Pid()), zap.Bool("approved", start.GetApproved()))
	if err := out.send(&helperv1.ExecEvent{Event: &helperv1.ExecEvent_Started{Started: &helperv1.Started{Pid: int32(p.Pid())}}}); err != nil {
		log.Info("client gone before start was sent", zap.Error(err))
	}

	go s.forwardInput(stream, p, log)
	r := p.Wait()
	s.running.Add(-1)

	x := base
	x.Kind = audit.KindExit
	x.Verdict = summary(verdict)
	x.Duration = r.Duration.Seconds()
	x.Stdout, x.Stderr = r.StdoutBytes, r.StderrBytes
	ev := &helperv1.Exited{Duration: durationpb.New(r.Duration), TimedOut: r.TimedOut, StdoutBytes: r.StdoutBytes, StderrBytes: r.StderrBytes}
	if r.Signal != 0 {
		name := unix.SignalName(r.Signal)
		x.Signal = name
		ev.Status = &helperv1.Exited_Signal{Signal: &helperv1.SignalStatus{Name: name, Number: int32(r.Signal)}}
	} else {
		code := r.ExitCode
		x.ExitCode = &code
		ev.Status = &helperv1.Exited_ExitCode{ExitCode: int32(code)}
	}
	switch {
	case r.TimedOut:
		x.Reason = fmt.Sprintf("timed out after %v", timeout)
	case r.Canceled && ctx.Err() != nil:
		x.Reason = "killed: the client went away"
	case r.Canceled:
		x.Reason = "killed: the helper is stopping"
	}
	if ae, ok := s.cfg.Runner.(execrun.AfterExit); ok {
		// The sandbox's post-run check: what the command left that Git would read as
		// configuration or indirection is moved aside, said on stderr and audited.
		q, qerr := ae.AfterExit(cmd)
		x.Quarantined = q
		if qerr != nil {
			log.Error("post-run check", zap.Error(qerr))
			x.Reason = strings.TrimPrefix(x.Reason+"; post-run check: "+qerr.Error(), "; ")
		}
		if len(q) > 0 {
			out.output(execrun.Stderr, []byte("s-code: the sandbox moved aside what the command wrote that Git would read as configuration (each renamed to NAME.s-code-quarantine-TAG): "+strings.Join(q, ", ")+"\n"))
		}
	}
	// The exit record is written even when the client has gone, and before the slot is
	// freed, so that in the log a command's exit precedes the start of the one that waited
	// for its slot.
	s.audit(context.WithoutCancel(ctx), &x, false)
	release()
	log.Info("exited", zap.Int("status", r.Status()), zap.Duration("duration", r.Duration), zap.Bool("timed_out", r.TimedOut))
	return out.send(&helperv1.ExecEvent{Event: &helperv1.ExecEvent_Exited{Exited: ev}})
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

// decide validates a start message and judges its command. It returns the Spec to run and
// the verdict, or a Denied saying why nothing runs.
func (s *Server) decide(c peercred.Creds, start *helperv1.ExecStart, requestID string) (execrun.Spec, *safety.Verdict, *helperv1.Denied) {
	command := start.GetCommand()
	switch {
	case command == "":
		return execrun.Spec{}, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: "the command is empty"}
	case len(command) > MaxCommandLen:
		return execrun.Spec{}, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: fmt.Sprintf("the command is longer than %d bytes", MaxCommandLen)}
	case strings.IndexByte(command, 0) >= 0:
		return execrun.Spec{}, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: "the command contains a NUL byte"}
	}
	dialect, err := dialectOf(start.GetShell())
	if err != nil {
		return execrun.Spec{}, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: err.Error()}
	}
	shell, err := execrun.ShellPath(dialect.String())
	if err != nil {
		return execrun.Spec{}, nil, &helperv1.Denied{Rule: RuleInvalidRequest, Reason: err.Error()}
	}
	d, denial := s.resolveDirs(c, start.GetWorkspace(), start.GetCwd())
	if denial != nil {
		return execrun.Spec{}, nil, denial
	}
	env, err := execrun.BuildEnv(execrun.Base{Path: s.cfg.Path, Home: s.cfg.Home, User: s.cfg.User, Shell: shell}, start.GetEnv())
	if err != nil {
		return execrun.Spec{}, nil, &helperv1.Denied{Rule: RuleEnvInjection, Reason: err.Error()}
	}
	v := s.judge(command, s.safetyContext(d, dialect))
	switch v.Decision {
	case safety.Allow:
	case safety.Ask:
		if !start.GetApproved() {
			return execrun.Spec{}, &v, &helperv1.Denied{
				Rule:     RuleApprovalRequired,
				Reason:   "ShellSafety asks a person to approve this command (" + strings.Join(ruleIDs(v), ", ") + ") and the request carries no approval",
				Findings: findingsToProto(v.Findings),
			}
		}
	default:
		rule, reason := ruleSafetyDeny, "ShellSafety denies this command"
		for _, f := range v.Findings {
			if f.Decision == safety.Deny {
				rule, reason = f.Rule, f.Message
				break
			}
		}
		return execrun.Spec{}, &v, &helperv1.Denied{Rule: rule, Reason: reason, Findings: findingsToProto(v.Findings)}
	}
	argv0 := filepath.Base(shell)
	return execrun.Spec{
		Path:      shell,
		Args:      []string{argv0, "-c", command},
		Env:       env,
		Dir:       d.cwd,
		Workspace: d.workspace,
		Network:   start.GetApprovedNetwork(),
		RequestID: requestID,
	}, &v, nil
}

// resolveDirs validates and resolves the workspace and cwd of a request: absolute, existing
// directories (symbolic links resolved), the cwd inside the workspace, and with
// RequireOwnedDirs inside a directory the peer's uid owns. An empty workspace means the cwd.
func (s *Server) resolveDirs(c peercred.Creds, workspace, cwd string) (dirs, *helperv1.Denied) {
	var d dirs
	var err error
	if d.cwd, err = s.resolveDir("cwd", cwd, c.UID); err != nil {
		return d, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: err.Error()}
	}
	if workspace == "" {
		d.workspace = d.cwd
	} else if d.workspace, err = s.resolveDir("workspace", workspace, c.UID); err != nil {
		return d, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: err.Error()}
	}
	if !within(d.workspace, d.cwd) {
		return d, &helperv1.Denied{Rule: RuleDirNotAllowed, Reason: fmt.Sprintf("cwd %s is outside the workspace %s", d.cwd, d.workspace)}
	}
	return d, nil
}

func (s *Server) resolveDir(what, p string, uid uint32) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s %q is not an absolute path", what, p)
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%s %q does not exist: %w", what, p, err)
	}
	fi, err := os.Stat(r)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", what, p, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s %q is not a directory", what, p)
	}
	if s.cfg.RequireOwnedDirs && !insideOwnedDir(r, uid) {
		return "", fmt.Errorf("%s %q is not inside a directory owned by uid %d", what, p, uid)
	}
	return r, nil
}

// auditCommand returns the command text for audit records: cut at MaxCommandLen (such a
// request is denied anyway), so a client cannot make one record megabytes long.
func auditCommand(c string) string {
	if len(c) <= MaxCommandLen {
		return c
	}
	return strings.ToValidUTF8(c[:MaxCommandLen], "") + " …[truncated]"
}

// within reports whether path is root or lies beneath it (both absolute and clean).
func within(root, path string) bool {
	if root == "/" || root == path {
		return true
	}
	return strings.HasPrefix(path, root+"/")
}

// insideOwnedDir reports whether dir or one of its ancestors is owned by uid.
func insideOwnedDir(dir string, uid uint32) bool {
	for {
		var st syscall.Stat_t
		if err := syscall.Lstat(dir, &st); err == nil && st.Uid == uid {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// judge returns the helper's verdict: ShellSafety's, made stricter by Gate when set.
func (s *Server) judge(command string, ctx safety.Context) safety.Verdict {
	v := safety.Check(command, ctx)
	if s.cfg.Gate == nil {
		return v
	}
	g := s.cfg.Gate(v, command)
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
