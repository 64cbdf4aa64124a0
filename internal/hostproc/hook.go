package hostproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/redact"
)

// Decision is a pre-call hook's answer. The zero value is no answer and counts as deny.
type Decision string

// The decisions a pre-call hook can give (as "decision" in its JSON output).
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// HookInput is the JSON a hook reads on its standard input.
type HookInput struct {
	Event   string `json:"event"` // hostdef.Event*
	Session string `json:"session,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	// Tool and Input describe the call (pre-call, post-call).
	Tool  string          `json:"tool,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// Result is the call's result (post-call).
	Result json.RawMessage `json:"result,omitempty"`
}

// hookOutput is the JSON a pre-call hook may print on its standard output.
type hookOutput struct {
	Decision Decision `json:"decision"`
	Reason   string   `json:"reason"`
}

// HookResult is the outcome of the hooks of one event. For pre-call, Decision is the most
// restrictive of the hooks' answers (deny over ask over allow); Reason, for the model, names
// the hook that decided.
type HookResult struct {
	Decision Decision
	Reason   string
	// Hook is the name of the hook that decided ("" when all allowed or none ran).
	Hook string
}

// maxHookOutput bounds what is read of a hook's standard output and error, in bytes each.
const maxHookOutput = 64 << 10

// hookExit is the exit status with which a hook denies, its standard error the reason.
const hookExit = 2

// PreCall runs the enabled pre-call hooks among defs, in name order, and returns the most
// restrictive decision; it stops at the first deny. It fails closed: a hook that is not
// confirmed as it is now, that fails to start, exits other than 0 or 2, prints output that
// is not a decision, or passes its time limit (default 30 s; killed with its children) denies
// the call. No hook means allow.
func (s *Supervisor) PreCall(ctx context.Context, defs []*hostdef.Definition, in HookInput) HookResult {
	in.Event = hostdef.EventPreCall
	res := HookResult{Decision: Allow}
	for _, d := range hooksOf(defs, hostdef.EventPreCall) {
		out, err := s.runHook(ctx, d, in)
		var dec hookOutput
		switch {
		case err != nil:
			dec = hookOutput{Deny, err.Error()}
		case out.code == hookExit:
			dec = hookOutput{Deny, strings.TrimSpace(out.stderr)}
		case out.code != 0:
			dec = hookOutput{Deny, fmt.Sprintf("the hook failed (exit status %d)", out.code)}
		case strings.TrimSpace(out.stdout) == "":
			dec = hookOutput{Allow, ""}
		default:
			if jerr := json.Unmarshal([]byte(out.stdout), &dec); jerr != nil {
				dec = hookOutput{Deny, "the hook's output is not a decision: " + jerr.Error()}
			}
			switch dec.Decision {
			case Allow, Ask, Deny:
			default:
				dec = hookOutput{Deny, fmt.Sprintf("the hook's decision %q is not allow, ask or deny", out.red.String(string(dec.Decision)))}
			}
		}
		if out.red != nil {
			dec.Reason = out.red.String(dec.Reason)
		}
		if len(dec.Reason) > 2000 {
			dec.Reason = dec.Reason[:2000] + "…"
		}
		switch dec.Decision {
		case Deny:
			return HookResult{Decision: Deny, Reason: fmt.Sprintf("denied by the pre-call hook %s: %s", d.Name, dec.Reason), Hook: d.Name}
		case Ask:
			if res.Decision == Allow {
				res = HookResult{Decision: Ask, Reason: fmt.Sprintf("the pre-call hook %s asks for a person's approval: %s", d.Name, dec.Reason), Hook: d.Name}
			}
		}
	}
	return res
}

// Notify runs the enabled hooks of event (post-call, session-start, session-end) among defs,
// in name order, and returns their failures (not confirmed, not started, non-zero exit, time
// limit passed); they change nothing of the call.
func (s *Supervisor) Notify(ctx context.Context, defs []*hostdef.Definition, event string, in HookInput) []error {
	in.Event = event
	var errs []error
	for _, d := range hooksOf(defs, event) {
		out, err := s.runHook(ctx, d, in)
		if err == nil && out.code != 0 {
			err = fmt.Errorf("hook %s: exit status %d", d.Name, out.code)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func hooksOf(defs []*hostdef.Definition, event string) []*hostdef.Definition {
	var out []*hostdef.Definition
	for _, d := range defs {
		if d != nil && d.Kind == hostdef.KindHook && d.Event == event && d.Enabled {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

type hookRun struct {
	code           int
	stdout, stderr string
	red            *redact.Redactor
}

// ErrHookTimeout is wrapped by a hook's error when it passed its time limit.
var ErrHookTimeout = errors.New("the hook passed its time limit and was killed")

// runHook runs one hook with in as its standard input, contained like every host process
// (own session, process group and cgroup), audited (start and exit), killed with all its
// children at its time limit.
func (s *Supervisor) runHook(ctx context.Context, d *hostdef.Definition, in HookInput) (hookRun, error) {
	if s.cfg.Audit == nil {
		return hookRun{}, ErrNoAudit
	}
	if err := d.Runnable(s.cfg.Home); err != nil {
		return hookRun{}, err
	}
	env, secrets, err := s.environment(d)
	if err != nil {
		return hookRun{}, fmt.Errorf("hook %s: %w", d.Name, err)
	}
	red, err := redact.New(secrets)
	if err != nil {
		return hookRun{}, fmt.Errorf("hook %s: %w", d.Name, err)
	}
	limit := time.Duration(d.Timeout)
	if limit <= 0 {
		limit = hostdef.DefaultHookTimeout
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return hookRun{}, fmt.Errorf("hook %s: %w", d.Name, err)
	}
	s.mu.Lock()
	s.next++
	id := fmt.Sprintf("%s-%d", d.Name, s.next)
	s.mu.Unlock()
	p := &proc{id: id, def: d, digest: d.Card(s.cfg.Home).Digest(), red: red, cgFD: -1}
	cmd := exec.Command(d.Command, d.Args...)
	cmd.Path, cmd.Dir, cmd.Env = d.Command, d.Card(s.cfg.Home).Dir, env
	cmd.Stdin = bytes.NewReader(payload)
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxHookOutput, maxHookOutput
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if parent := s.cgroupParent(); parent != "" {
		dir := parent + "/" + id
		if fd, err := newCgroup(dir); err == nil {
			p.cgDir, p.cgFD = dir, fd
		}
	}
	defer removeCgroup(p.cgDir, p.cgFD)
	cmd.SysProcAttr = sysProcAttr(false, p.cgFD, false)
	// The output pipes close when the hook's first process ends, even if a child holds them.
	cmd.WaitDelay = time.Second
	rec := s.record(p, audit.KindStart, nil)
	rec.Env = redactedEnv(red, env)
	rec.Reason = fmt.Sprintf("hook %s (%s) starts outside the sandbox with your authority; time limit %s; tool %q", d.Name, in.Event, limit, in.Tool)
	if err := s.cfg.Audit(rec); err != nil {
		return hookRun{}, fmt.Errorf("hook %s: audit: %w", d.Name, err)
	}
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return hookRun{red: red}, s.startFailed(p, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(limit)
	defer t.Stop()
	var waitErr, runErr error
	select {
	case waitErr = <-done:
	case <-t.C:
		runErr = fmt.Errorf("hook %s: %w (%s)", d.Name, ErrHookTimeout, limit)
	case <-ctx.Done():
		runErr = fmt.Errorf("hook %s: %w", d.Name, ctx.Err())
	}
	killAll(cmd.Process.Pid, p.cgDir)
	if runErr != nil {
		waitErr = <-done
	}
	p.pid = cmd.Process.Pid
	s.waitEmpty(p)
	code := cmd.ProcessState.ExitCode()
	exit := s.record(p, audit.KindExit, nil)
	exit.ExitCode, exit.Duration = &code, time.Since(started).Seconds()
	exit.Stdout, exit.Stderr = int64(stdout.n), int64(stderr.n)
	exit.Reason = fmt.Sprintf("hook %s exited", d.Name)
	if runErr != nil {
		exit.Reason = red.String(runErr.Error())
	}
	if err := s.cfg.Audit(exit); err != nil {
		s.cfg.Logger.Error("audit: hook exit", zap.String("id", id), zap.Error(err))
	}
	s.cfg.Logger.Info("hook ran", zap.String("id", id), zap.String("event", in.Event), zap.Int("exit_code", code), zap.Bool("killed", runErr != nil))
	_ = waitErr
	if runErr != nil {
		return hookRun{red: red}, runErr
	}
	return hookRun{code: code, stdout: stdout.String(), stderr: red.String(stderr.String()), red: red}, nil
}

// limitedBuffer keeps the first max bytes written and counts all.
type limitedBuffer struct {
	bytes.Buffer
	max, n int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.n += len(p)
	if room := b.max - b.Buffer.Len(); room > 0 {
		if len(p) > room {
			b.Buffer.Write(p[:room])
		} else {
			b.Buffer.Write(p)
		}
	}
	return len(p), nil
}

var _ io.Writer = (*limitedBuffer)(nil)
