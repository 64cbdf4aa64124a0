package execrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Stream names an output stream.
type Stream int

// The output streams.
const (
	Stdout Stream = 1
	Stderr Stream = 2
)

// Default durations.
const (
	// DefaultKillGrace is how long a process group has between SIGTERM and SIGKILL.
	DefaultKillGrace = 2 * time.Second
	// DefaultDrain is how long output is still read after the process group is gone (a
	// process that left the group may hold the pipe open).
	DefaultDrain = 500 * time.Millisecond
	// chunkSize is the largest output chunk handed to Options.Output.
	chunkSize = 32 << 10
)

// Options control Start.
type Options struct {
	// Output is called with each chunk a stream produces, in order for each stream, from
	// one goroutine per stream (so calls for Stdout and Stderr may interleave). data is
	// only valid during the call.
	Output func(s Stream, data []byte)
	// Timeout kills the group when it passes; 0 means no limit.
	Timeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL; 0 means DefaultKillGrace.
	KillGrace time.Duration
	// Drain bounds reading output after the group is gone; 0 means DefaultDrain.
	Drain time.Duration
	// OnDrainExpired, when set, is called once if the drain time runs out with output still
	// unread: an Output callback blocked on a slow consumer must then stop blocking, so that
	// Wait can return.
	OnDrainExpired func()
}

// Result is how a command ended.
type Result struct {
	// ExitCode is the exit status, or -1 when a signal ended the process.
	ExitCode int
	// Signal is the signal that ended the process, or 0.
	Signal syscall.Signal
	// Duration is the wall time from start to the end of the process.
	Duration time.Duration
	// TimedOut reports whether the helper killed the group because Timeout passed.
	TimedOut bool
	// Canceled reports whether the helper killed the group because the context ended
	// (client disconnect, helper shutdown).
	Canceled bool
	// StdoutBytes and StderrBytes count the output read.
	StdoutBytes, StderrBytes int64
}

// Status returns the shell-style status: ExitCode, or 128+Signal for a signal.
func (r Result) Status() int {
	if r.Signal != 0 {
		return 128 + int(r.Signal)
	}
	return r.ExitCode
}

// Process is a started command in its own process group.
type Process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File
	start  time.Time
	done   chan struct{}
	result Result
	cg     *commandCgroup // the command's own cgroup, or nil

	// mu guards reaped: once the leader is reaped its pid (= the group id) may be reused,
	// so no signal is sent after that.
	mu     sync.Mutex
	reaped bool
}

// Start starts cmd (from a Runner) in a new process group with pipes for its stdio and no
// other inherited descriptor (exec.Cmd passes only Stdin, Stdout, Stderr and ExtraFiles,
// which must be empty; Go opens every descriptor close-on-exec). When ctx ends, Timeout
// passes or the leader exits, the rest of the group is killed: SIGTERM, then SIGKILL after
// KillGrace on ctx end or timeout; SIGKILL at once when the leader has exited, so no
// process of the command outlives it. Where the helper can make cgroups (cgroup v2, as root
// or in a delegated cgroup), the command also starts in a cgroup of its own, which is killed
// as a whole (cgroup.kill) when the leader has been reaped: that also ends the processes that
// left the process group (setsid, a double fork); Wait returns once it is empty. Call Wait
// for the result.
func Start(ctx context.Context, cmd *exec.Cmd, opts Options) (*Process, error) {
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil || len(cmd.ExtraFiles) > 0 {
		return nil, errors.New("execrun: the Runner must leave stdio and ExtraFiles unset")
	}
	if err := MarkInheritedCloseOnExec(); err != nil {
		return nil, err
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.Drain <= 0 {
		opts.Drain = DefaultDrain
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("execrun: pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("execrun: pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("execrun: pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setProcessGroup(cmd.SysProcAttr)
	cg := newCommandCgroup()
	cg.apply(cmd.SysProcAttr)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		cg.remove()
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("execrun: start %s: %w", cmd.Path, err)
	}
	closeAll(inR, outW, errW)
	p := &Process{cmd: cmd, pid: cmd.Process.Pid, stdin: inW, start: start, done: make(chan struct{}), cg: cg}

	var readers sync.WaitGroup
	readers.Add(2)
	go p.read(&readers, outR, Stdout, &p.result.StdoutBytes, opts.Output)
	go p.read(&readers, errR, Stderr, &p.result.StderrBytes, opts.Output)
	go p.supervise(ctx, opts, &readers, outR, errR)
	return p, nil
}

// Pid returns the leader's process id, which is also the process group id.
func (p *Process) Pid() int { return p.pid }

// Stdin returns the write end of the command's standard input; close it to send EOF.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Signal delivers sig to the command's whole process group. It returns an error when the
// command has ended.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return errors.New("execrun: the command has ended")
	}
	return killGroup(p.pid, sig)
}

// Wait waits until the command has ended, its group is gone and its output is read, and
// returns the result.
func (p *Process) Wait() Result {
	<-p.done
	return p.result
}

// Done returns a channel closed when Wait would return.
func (p *Process) Done() <-chan struct{} { return p.done }

func (p *Process) read(wg *sync.WaitGroup, r *os.File, s Stream, n *int64, out func(Stream, []byte)) {
	defer wg.Done()
	buf := make([]byte, chunkSize)
	emit := func(b []byte) {
		*n += int64(len(b))
		if out != nil {
			out(s, b)
		}
	}
	for {
		k, err := r.Read(buf)
		if k > 0 {
			emit(buf[:k])
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// The drain time is over: a process outside the group holds the pipe open.
			// Take what is already in the pipe without waiting for more.
			drainNonBlocking(r, buf, emit)
			return
		}
		if err != nil {
			return
		}
	}
}

// drainNonBlocking reads what r's pipe holds now, never waiting for more.
func drainNonBlocking(r *os.File, buf []byte, emit func([]byte)) {
	r.SetReadDeadline(time.Time{})
	rc, err := r.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool {
		for {
			k, err := syscall.Read(int(fd), buf)
			if k > 0 {
				emit(buf[:k])
			}
			if k <= 0 || err != nil {
				return true // EAGAIN (empty), EOF or an error: done, never wait
			}
		}
	})
}

func (p *Process) supervise(ctx context.Context, opts Options, readers *sync.WaitGroup, outR, errR *os.File) {
	exited := make(chan struct{})
	var waitErr error
	reapedEarly := false
	go func() {
		if !waitExited(p.pid) {
			// No way to wait without reaping here: reap now, kill the group after.
			waitErr = p.cmd.Wait()
			p.mu.Lock()
			p.reaped, reapedEarly = true, true
			p.mu.Unlock()
		}
		close(exited)
	}()
	var timeout <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-exited:
	case <-ctx.Done():
		p.result.Canceled = true
		p.terminate(exited, opts.KillGrace)
	case <-timeout:
		p.result.TimedOut = true
		p.terminate(exited, opts.KillGrace)
	}
	if reapedEarly {
		// The group id may in principle have been reused in between; systems with
		// waitid(WNOWAIT) in Go (Linux) never take this path.
		killGroup(p.pid, syscall.SIGKILL)
	} else {
		// The leader has exited but is not reaped, so its pid still names the group and
		// cannot be reused: kill what is left of the group, then reap.
		p.mu.Lock()
		killGroup(p.pid, syscall.SIGKILL)
		p.mu.Unlock()
		waitErr = p.cmd.Wait()
		p.mu.Lock()
		p.reaped = true
		p.mu.Unlock()
	}
	// What left the process group is still in the command's cgroup: kill it as a whole.
	if p.cg != nil {
		if p.cg.kill(opts.KillGrace) {
			p.cg.remove()
		}
	}
	p.result.Duration = time.Since(p.start)
	p.stdin.Close()

	// Output still buffered in the pipes is read; a process that escaped the group and
	// holds a pipe open cannot hold the result back longer than Drain.
	drained := make(chan struct{})
	go func() { readers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(opts.Drain):
		outR.SetReadDeadline(time.Now())
		errR.SetReadDeadline(time.Now())
		if opts.OnDrainExpired != nil {
			opts.OnDrainExpired()
		}
		<-drained
	}
	outR.Close()
	errR.Close()

	p.result.ExitCode = -1
	var ee *exec.ExitError
	if waitErr == nil || errors.As(waitErr, &ee) {
		ws, _ := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			p.result.Signal = ws.Signal()
		} else {
			p.result.ExitCode = ws.ExitStatus()
		}
	}
	close(p.done)
}

// terminate sends SIGTERM to the group, then SIGKILL if the leader has not exited after
// grace.
func (p *Process) terminate(exited <-chan struct{}, grace time.Duration) {
	p.mu.Lock()
	killGroup(p.pid, syscall.SIGTERM)
	p.mu.Unlock()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		p.mu.Lock()
		killGroup(p.pid, syscall.SIGKILL)
		p.mu.Unlock()
		<-exited
	}
}

// killGroup sends sig to process group pgid; a group that is already gone is not an error.
func killGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("execrun: refusing to signal process group %d", pgid)
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kill -%d: %w", pgid, err)
	}
	return nil
}

func setProcessGroup(a *syscall.SysProcAttr) {
	a.Setpgid = true
	a.Pgid = 0
	setParentDeathSignal(a)
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
