package hostproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"go.uber.org/zap"
	"mvdan.cc/sh/v3/syntax"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/redact"
)

// Defaults of Config.
const (
	DefaultOutputLimit = 1 << 20 // bytes of redacted output kept per process
	DefaultKillGrace   = 2 * time.Second
	// MaxRead is the most bytes one Read returns.
	MaxRead = 256 << 10
)

// Config is what a Supervisor is given. Capabilities are handed in: it reaches the user's
// environment, credentials and audit log only through these fields.
type Config struct {
	// Home is the user's home: the directory of a definition without one, and part of its
	// card.
	Home string
	// Getenv gives the values of hostdef.BaseEnv. Nil gives none.
	Getenv func(string) (string, bool)
	// Resolver resolves the definitions' credential handles.
	Resolver credhandle.Resolver
	// Audit writes one audit record durably; an error refuses the start it was to record.
	// Nil refuses every start (fail closed).
	Audit func(*audit.Record) error
	// Logger gets S-Code's own log lines (never output, never a value). Nil logs nothing.
	Logger *zap.Logger
	// OutputLimit is the redacted output kept per process, in bytes (0: DefaultOutputLimit).
	OutputLimit int
	// KillGrace is the time between SIGTERM and killing every member (0: DefaultKillGrace).
	KillGrace time.Duration
	// NoCgroup keeps processes out of cgroups (session and process group only).
	NoCgroup bool
}

// Supervisor starts, tracks and stops host processes. Create it with New; Close stops
// every process not started detached. Its methods are safe for concurrent use.
type Supervisor struct {
	cfg Config

	cgOnce sync.Once
	cgDir  string // this supervisor's parent cgroup, "" when none could be made
	cgErr  error

	mu    sync.Mutex // guards procs and next
	procs map[string]*proc
	next  int
}

// New returns a Supervisor for cfg.
func New(cfg Config) *Supervisor {
	if cfg.OutputLimit <= 0 {
		cfg.OutputLimit = DefaultOutputLimit
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Supervisor{cfg: cfg, procs: map[string]*proc{}}
}

// StartOptions say how one process starts.
type StartOptions struct {
	// Session is the session the process belongs to; EndSession stops its processes.
	Session string
	// Terminal runs the command in a new PTY (background terminal); else its standard
	// output and error are one pipe.
	Terminal bool
	// Rows and Cols size the PTY (0: 24 by 80).
	Rows, Cols uint16
	// Detached (terminals only) keeps the process running when its session or the
	// supervisor ends; it has no parent-death signal.
	Detached bool
	// Peer is who asked, for the audit records.
	Peer *audit.Peer
}

// Info describes one process, as List returns it.
type Info struct {
	ID          string
	Name        string
	Kind        hostdef.Kind
	Session     string
	PID         int
	Terminal    bool
	Detached    bool
	Containment string // ContainCgroup or ContainSession
	Digest      string // the confirmed card's digest
	Command     []string
	Started     time.Time
	Running     bool
	ExitCode    int    // when not Running: the exit status, -1 when killed by a signal
	Signal      string // when killed by a signal
	OutputBytes int64  // redacted bytes captured so far
}

type proc struct {
	id, session string
	def         *hostdef.Definition
	digest      string
	opts        StartOptions
	cmd         *exec.Cmd
	stdin       io.WriteCloser // the PTY master or the stdin pipe
	pid         int
	cgDir       string
	cgFD        int
	out         *output
	red         *redact.Redactor
	started     time.Time
	done        chan struct{} // closed after the exit record

	mu       sync.Mutex // guards the fields below
	exitCode int
	signal   string
	stopping string // why Stop was called, "" when not
}

// ErrNotFound is returned for an ID the supervisor does not know.
var ErrNotFound = errors.New("no such host process")

// ErrNoAudit is returned by Start when the Supervisor has no audit log.
var ErrNoAudit = errors.New("host processes need an audit log")

// Start starts def after checking that a person confirmed exactly its current card
// (hostdef.Definition.Runnable) and resolving its credential handles; each resolved value
// is registered with the process's redactor. The start record is written before the
// process starts; failing to write it refuses the start.
func (s *Supervisor) Start(def *hostdef.Definition, opts StartOptions) (Info, error) {
	if s.cfg.Audit == nil {
		return Info{}, ErrNoAudit
	}
	if err := def.Runnable(s.cfg.Home); err != nil {
		return Info{}, err
	}
	if def.Kind == hostdef.KindHook {
		return Info{}, fmt.Errorf("host process %s is a hook: hooks run at their event (PreCall, Notify), never by Start", def.Name)
	}
	if opts.Detached && !opts.Terminal {
		return Info{}, fmt.Errorf("host process %s: only a terminal can start detached", def.Name)
	}
	card := def.Card(s.cfg.Home)
	env, secrets, err := s.environment(def)
	if err != nil {
		return Info{}, fmt.Errorf("host process %s: %w", def.Name, err)
	}
	red, err := redact.New(secrets)
	if err != nil {
		return Info{}, fmt.Errorf("host process %s: %w", def.Name, err)
	}
	s.mu.Lock()
	s.next++
	id := fmt.Sprintf("%s-%d", def.Name, s.next)
	s.mu.Unlock()

	p := &proc{id: id, session: opts.Session, def: def, digest: card.Digest(), opts: opts, red: red, cgFD: -1,
		out: newOutput(red, s.cfg.OutputLimit), done: make(chan struct{})}
	cmd := exec.Command(def.Command, def.Args...)
	cmd.Path = def.Command // no PATH lookup: the card's command is what runs
	cmd.Dir = card.Dir
	cmd.Env = env
	containment := ContainSession
	if parent := s.cgroupParent(); parent != "" {
		dir := filepath.Join(parent, id)
		if fd, err := newCgroup(dir); err == nil {
			p.cgDir, p.cgFD, containment = dir, fd, ContainCgroup
		} else {
			s.cfg.Logger.Warn("host process without its own cgroup", zap.String("id", id), zap.Error(err))
		}
	}
	attrs := sysProcAttr(opts.Terminal, p.cgFD, opts.Detached)

	startRec := s.record(p, audit.KindStart, opts.Peer)
	startRec.Env = redactedEnv(red, env)
	startRec.Reason = fmt.Sprintf("host process %s (%s) starts outside the sandbox with your authority; containment %s; session %q", def.Name, def.Kind, containment, opts.Session)
	if opts.Detached {
		startRec.Reason += "; detached"
	}
	if err := s.cfg.Audit(startRec); err != nil {
		removeCgroup(p.cgDir, p.cgFD)
		return Info{}, fmt.Errorf("host process %s: audit: %w", def.Name, err)
	}

	var reader io.Reader
	if opts.Terminal {
		rows, cols := opts.Rows, opts.Cols
		if rows == 0 || cols == 0 {
			rows, cols = 24, 80
		}
		master, err := pty.StartWithAttrs(cmd, &pty.Winsize{Rows: rows, Cols: cols}, attrs)
		if err != nil {
			return Info{}, s.startFailed(p, err)
		}
		reader, p.stdin = master, master
	} else {
		r, w, err := os.Pipe()
		if err != nil {
			return Info{}, s.startFailed(p, err)
		}
		in, err := cmd.StdinPipe()
		if err != nil {
			r.Close()
			w.Close()
			return Info{}, s.startFailed(p, err)
		}
		cmd.Stdout, cmd.Stderr, cmd.SysProcAttr = w, w, attrs
		if err := cmd.Start(); err != nil {
			r.Close()
			w.Close()
			return Info{}, s.startFailed(p, err)
		}
		w.Close()
		reader, p.stdin = r, in
	}
	p.cmd, p.pid, p.started = cmd, cmd.Process.Pid, time.Now()
	s.mu.Lock()
	s.procs[id] = p
	s.mu.Unlock()
	s.cfg.Logger.Info("host process started", zap.String("id", id), zap.Int("pid", p.pid), zap.String("containment", containment))

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 32<<10)
		for {
			n, err := reader.Read(buf)
			if n > 0 {
				p.out.write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	go s.wait(p, reader, copied)
	return s.info(p), nil
}

// startFailed records that a process whose start was recorded did not start.
func (s *Supervisor) startFailed(p *proc, err error) error {
	removeCgroup(p.cgDir, p.cgFD)
	r := s.record(p, audit.KindExit, p.opts.Peer)
	code := -1
	r.ExitCode = &code
	r.Reason = fmt.Sprintf("host process %s did not start: %s", p.def.Name, p.red.String(err.Error()))
	_ = s.cfg.Audit(r)
	return fmt.Errorf("host process %s: %w", p.def.Name, err)
}

// wait reaps the process; when it ends, whatever of it remains is killed (a host process
// lives as long as its first process), the output is flushed and the exit is recorded.
func (s *Supervisor) wait(p *proc, reader io.Reader, copied chan struct{}) {
	err := p.cmd.Wait()
	killAll(p.pid, p.cgDir)
	s.waitEmpty(p)
	// The reader ends once no process holds the PTY's slave or the pipe's write end: give
	// it a moment to drain, then close our end. A member that escaped containment may
	// still hold it; the exit is recorded all the same.
	select {
	case <-copied:
	case <-time.After(500 * time.Millisecond):
	}
	if c, ok := reader.(io.Closer); ok {
		c.Close()
	}
	select {
	case <-copied:
	case <-time.After(time.Second):
		s.cfg.Logger.Warn("host process output still held open after its exit", zap.String("id", p.id))
	}
	p.stdin.Close()
	p.out.flush()
	removeCgroup(p.cgDir, p.cgFD)

	p.mu.Lock()
	p.exitCode = p.cmd.ProcessState.ExitCode()
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		p.signal = ws.Signal().String()
	}
	why := p.stopping
	p.mu.Unlock()
	r := s.record(p, audit.KindExit, nil)
	code := p.exitCode
	r.ExitCode = &code
	r.Signal = p.signal
	r.Duration = time.Since(p.started).Seconds()
	raw, _ := p.out.counts()
	r.Stdout = raw
	r.Reason = fmt.Sprintf("host process %s exited", p.def.Name)
	if why != "" {
		r.Reason = fmt.Sprintf("host process %s stopped: %s", p.def.Name, why)
	}
	if err != nil && code == -1 && p.signal == "" {
		r.Reason += ": " + p.red.String(err.Error())
	}
	if aerr := s.cfg.Audit(r); aerr != nil {
		s.cfg.Logger.Error("audit: host process exit", zap.String("id", p.id), zap.Error(aerr))
	}
	s.cfg.Logger.Info("host process ended", zap.String("id", p.id), zap.Int("exit_code", code), zap.String("signal", p.signal))
	close(p.done)
}

// waitEmpty waits (up to a second) until no member of p remains, killing again meanwhile.
func (s *Supervisor) waitEmpty(p *proc) {
	deadline := time.Now().Add(time.Second)
	for len(members(p.pid, p.cgDir)) > 0 && time.Now().Before(deadline) {
		killAll(p.pid, p.cgDir)
		time.Sleep(10 * time.Millisecond)
	}
}

// environment builds the process's environment: BaseEnv from Getenv, then each credential
// variable with its resolved value. It returns the values to redact.
func (s *Supervisor) environment(def *hostdef.Definition) (env, secrets []string, err error) {
	for _, k := range hostdef.BaseEnv {
		if s.cfg.Getenv == nil {
			break
		}
		if v, ok := s.cfg.Getenv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if def.Kind == hostdef.KindTerminal {
		env = append(env, "TERM=xterm-256color")
	}
	names := make([]string, 0, len(def.Env))
	for k := range def.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		h, err := credhandle.Parse(def.Env[k])
		if err != nil {
			return nil, nil, fmt.Errorf("env %s: %w", k, err)
		}
		v, err := s.cfg.Resolver.Resolve(h)
		if err != nil {
			return nil, nil, err
		}
		env = append(env, k+"="+v)
		secrets = append(secrets, v)
	}
	return env, secrets, nil
}

// redactedEnv is env for an audit record: the registered values removed, secret-named
// variables' values too.
func redactedEnv(red *redact.Redactor, env []string) []string {
	out := make([]string, len(env))
	for i, kv := range env {
		out[i] = red.EnvPair(kv)
	}
	sort.Strings(out)
	return out
}

func (s *Supervisor) record(p *proc, kind audit.Kind, peer *audit.Peer) *audit.Record {
	return &audit.Record{Kind: kind, RequestID: p.id, Helper: "user", Peer: peer, Command: p.red.String(commandLine(p.def)),
		Cwd: p.def.Card(s.cfg.Home).Dir, PlanDigest: strings.TrimPrefix(p.digest, "sha256:")}
}

// commandLine quotes the command and arguments as a shell would read them back.
func commandLine(d *hostdef.Definition) string {
	parts := make([]string, 0, 1+len(d.Args))
	for _, a := range append([]string{d.Command}, d.Args...) {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = fmt.Sprintf("%q", a)
		}
		parts = append(parts, q)
	}
	return strings.Join(parts, " ")
}

// cgroupParent returns this supervisor's parent cgroup, made on first use under the
// process's own cgroup; "" when cgroups are off or cannot be made here (the reason is
// logged once).
func (s *Supervisor) cgroupParent() string {
	if s.cfg.NoCgroup {
		return ""
	}
	s.cgOnce.Do(func() {
		root, err := cgroupRoot()
		if err == nil {
			dir := filepath.Join(root, fmt.Sprintf("s-code-hostproc-%d", os.Getpid()))
			if err = os.Mkdir(dir, 0o755); err == nil || errors.Is(err, os.ErrExist) {
				s.cgDir, err = dir, nil
			}
		}
		s.cgErr = err
		if err != nil {
			s.cfg.Logger.Warn("host processes are contained by session and process group only", zap.Error(err))
		}
	})
	return s.cgDir
}

// CgroupError returns why host processes have no cgroup of their own here, nil when they
// have (or none was tried yet).
func (s *Supervisor) CgroupError() error {
	s.cgroupParent()
	return s.cgErr
}

func (s *Supervisor) get(id string) (*proc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[id]
	if p == nil {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return p, nil
}

func (s *Supervisor) info(p *proc) Info {
	p.mu.Lock()
	defer p.mu.Unlock()
	running := true
	select {
	case <-p.done:
		running = false
	default:
	}
	_, kept := p.out.counts()
	c := ContainSession
	if p.cgDir != "" {
		c = ContainCgroup
	}
	return Info{ID: p.id, Name: p.def.Name, Kind: p.def.Kind, Session: p.session, PID: p.pid, Terminal: p.opts.Terminal, Detached: p.opts.Detached,
		Containment: c, Digest: p.digest, Command: append([]string{p.def.Command}, p.def.Args...), Started: p.started,
		Running: running, ExitCode: p.exitCode, Signal: p.signal, OutputBytes: kept}
}

// List returns every process this supervisor started (running or ended, not yet
// forgotten), ordered by ID; session "" lists all sessions.
func (s *Supervisor) List(session string) []Info {
	s.mu.Lock()
	ps := make([]*proc, 0, len(s.procs))
	for _, p := range s.procs {
		if session == "" || p.session == session {
			ps = append(ps, p)
		}
	}
	s.mu.Unlock()
	out := make([]Info, len(ps))
	for i, p := range ps {
		out[i] = s.info(p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// ReadResult is what Read returns.
type ReadResult struct {
	// Data is redacted output after the previous Read, at most the max asked for.
	Data []byte
	// Dropped is how many redacted bytes the output limit discarded before Data.
	Dropped int64
	// More reports whether more output is waiting after Data.
	More bool
	// Running reports whether the process still runs.
	Running bool
	// ExitCode is its exit status when not Running (-1: killed by Signal).
	ExitCode int
	Signal   string
}

// Read returns the redacted output of id since its last Read, at most max bytes (0 or more
// than MaxRead: MaxRead).
func (s *Supervisor) Read(id string, max int) (ReadResult, error) {
	p, err := s.get(id)
	if err != nil {
		return ReadResult{}, err
	}
	if max <= 0 || max > MaxRead {
		max = MaxRead
	}
	data, dropped, more := p.out.read(max)
	in := s.info(p)
	return ReadResult{Data: data, Dropped: dropped, More: more, Running: in.Running, ExitCode: in.ExitCode, Signal: in.Signal}, nil
}

// Write sends data to the standard input of id (the terminal's input for a terminal).
func (s *Supervisor) Write(id string, data []byte) error {
	p, err := s.get(id)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
		return fmt.Errorf("host process %s has ended", id)
	default:
	}
	if _, err := p.stdin.Write(data); err != nil {
		return fmt.Errorf("host process %s: write: %w", id, err)
	}
	return nil
}

// Stop stops id and every process it started: SIGTERM to all of them, then, after
// KillGrace or when ctx ends, cgroup.kill and SIGKILL. It returns once the exit is recorded
// and no member remains (within a second of the kill). why goes into the audit records.
func (s *Supervisor) Stop(ctx context.Context, id, why string, peer *audit.Peer) (Info, error) {
	p, err := s.get(id)
	if err != nil {
		return Info{}, err
	}
	select {
	case <-p.done:
		return s.info(p), nil
	default:
	}
	p.mu.Lock()
	first := p.stopping == ""
	if first {
		p.stopping = why
	}
	p.mu.Unlock()
	if first {
		r := s.record(p, audit.KindRequest, peer)
		r.Reason = fmt.Sprintf("host process %s: stop (%s)", p.def.Name, why)
		if err := s.cfg.Audit(r); err != nil {
			s.cfg.Logger.Error("audit: host process stop", zap.String("id", id), zap.Error(err))
		}
		signalAll(p.pid, p.cgDir, syscall.SIGTERM)
	}
	t := time.NewTimer(s.cfg.KillGrace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	case <-ctx.Done():
	}
	killAll(p.pid, p.cgDir)
	<-p.done
	return s.info(p), nil
}

// EndSession stops every process of session except detached terminals, and forgets the
// ended ones.
func (s *Supervisor) EndSession(ctx context.Context, session string) {
	s.stopWhere(ctx, "session "+session+" ended", func(p *proc) bool { return p.session == session })
}

// Close stops every process except detached terminals (the helper is ending) and removes
// this supervisor's parent cgroup when it is empty.
func (s *Supervisor) Close(ctx context.Context) {
	s.stopWhere(ctx, "the user helper is stopping", func(*proc) bool { return true })
	if s.cgDir != "" {
		_ = os.Remove(s.cgDir)
	}
}

func (s *Supervisor) stopWhere(ctx context.Context, why string, match func(*proc) bool) {
	s.mu.Lock()
	var ps []*proc
	for _, p := range s.procs {
		if match(p) && !p.opts.Detached {
			ps = append(ps, p)
		}
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Stop(ctx, p.id, why, nil)
		}()
	}
	wg.Wait()
	s.mu.Lock()
	for _, p := range ps {
		delete(s.procs, p.id)
	}
	s.mu.Unlock()
}
