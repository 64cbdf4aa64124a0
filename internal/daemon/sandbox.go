package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/safety"
)

// sandboxRunner runs each command of the user helper under the sandbox profile of its
// workspace, through the s-code-sandbox launcher; network, and extra writable paths, only
// as the helper's plan says (Spec.Network, Spec.ExtraWritable), which a person approved.
// It keeps each built command's post-run check until the helper asks for it (AfterExit).
type sandboxRunner struct {
	r     sandbox.Runner
	f     sandbox.Features
	cache *profileCache
	post  *postRuns
}

// postRuns holds the post-run check of each command built and not yet checked.
type postRuns struct {
	mu sync.Mutex // guards m
	m  map[*exec.Cmd]sandbox.PostRun
}

// profileCacheTTL is how long a computed profile is reused for the same inputs: long
// enough that the Plan a person approves and the Exec that follows share one profile (and
// one sandbox discovery, about half a millisecond of stat calls), short enough that a
// change on disk shows in the next plan. A stale profile can never be wider than one
// computed a moment earlier for the same request.
const profileCacheTTL = 2 * time.Second

// profileCache holds recent profiles by their inputs.
type profileCache struct {
	mu sync.Mutex // guards m
	m  map[string]cachedProfile
}

type cachedProfile struct {
	p    sandbox.Profile
	made time.Time
}

// profile returns the profile of spec, from the cache when one for the same inputs is
// younger than profileCacheTTL. The key holds every input of Runner.Profile: the workspace,
// network, the extra writable paths and the environment.
func (s sandboxRunner) profile(spec execrun.Spec) (sandbox.Profile, error) {
	if s.cache == nil {
		return s.r.Profile(spec.Workspace, spec.Network, spec.ExtraWritable, spec.Env)
	}
	key := strings.Join([]string{spec.Workspace, strconv.FormatBool(spec.Network), strings.Join(spec.ExtraWritable, "\x00"), strings.Join(spec.Env, "\x00")}, "\x01")
	now := time.Now()
	s.cache.mu.Lock()
	c, ok := s.cache.m[key]
	s.cache.mu.Unlock()
	if ok && now.Sub(c.made) < profileCacheTTL {
		return c.p, nil
	}
	p, err := s.r.Profile(spec.Workspace, spec.Network, spec.ExtraWritable, spec.Env)
	if err != nil {
		return p, err
	}
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	for k, c := range s.cache.m {
		if now.Sub(c.made) >= profileCacheTTL {
			delete(s.cache.m, k)
		}
	}
	if len(s.cache.m) < 256 {
		s.cache.m[key] = cachedProfile{p: p, made: now}
	}
	return p, nil
}

var (
	_ helperd.Planner   = sandboxRunner{}
	_ execrun.AfterExit = sandboxRunner{}
)

// Command implements execrun.Runner.
// It runs the profile the plan computed (Spec.Prepared) when there is one.
func (s sandboxRunner) Command(ctx context.Context, spec execrun.Spec) (*exec.Cmd, error) {
	p, ok := spec.Prepared.(sandbox.Profile)
	if !ok {
		var err error
		if p, err = s.profile(spec); err != nil {
			return nil, err
		}
	}
	cmd, check, err := s.r.CheckedCommandFor(ctx, p, spec.Dir, spec.Path, spec.Args, spec.Env)
	if err != nil {
		return nil, err
	}
	if s.post != nil {
		s.post.mu.Lock()
		s.post.m[cmd] = check
		s.post.mu.Unlock()
	}
	return cmd, nil
}

// AfterExit implements execrun.AfterExit: it runs cmd's post-run check (see
// sandbox.QuarantineGit) once; a command it did not build has none.
func (s sandboxRunner) AfterExit(cmd *exec.Cmd) ([]string, error) {
	if s.post == nil {
		return nil, nil
	}
	s.post.mu.Lock()
	check, ok := s.post.m[cmd]
	delete(s.post.m, cmd)
	s.post.mu.Unlock()
	if !ok {
		return nil, nil
	}
	return check.Run()
}

// Plan implements helperd.Planner: the profile summary of spec and the environment the
// command gets with the profile's changes.
func (s sandboxRunner) Plan(spec execrun.Spec) (permission.Sandbox, []string, any, error) {
	p, err := s.profile(spec)
	if err != nil {
		return permission.Sandbox{}, nil, nil, err
	}
	return SandboxSummary(p, s.f), p.Env.ApplyEnv(spec.Env), p, nil
}

// SandboxSummary returns the plan's summary of profile p on a machine with features f.
func SandboxSummary(p sandbox.Profile, f sandbox.Features) permission.Sandbox {
	return permission.Sandbox{
		Sandboxed: true, Confined: f.Confines(), Reason: f.Problem,
		WritableRoots: p.WritableRoots, ReadOnlyRoots: p.ReadOnlyRoots, DeniedPaths: p.DeniedPaths,
		ProtectedPaths: p.ProtectedPaths, Protection: p.Protection, Network: p.Network,
	}
}

// sandboxHost is what the user helper's sandbox profiles are computed from: the helper's own
// environment, never a request's.
type sandboxHost struct {
	// home is the helper's user's home directory (HOME in the profile).
	home string
	// hide are the helper's own socket and audit directories, hidden from every command.
	hide []string
}

// getenv returns the helper's environment variable k, HOME being h.home.
func (h sandboxHost) getenv(k string) string {
	if k == "HOME" {
		return h.home
	}
	return os.Getenv(k)
}

// newSandbox returns the user helper's runner, verdict gate and the kernel features found.
// launcher is the s-code-sandbox path (empty: next to the running executable, else on
// PATH); host says what profiles are computed from. On a machine that cannot confine
// commands the gate makes every verdict at least ask, so a command reaching the runner there
// was approved by a person and the launcher may run it unconfined (the card of s-code
// sandbox and the finding say why).
func newSandbox(launcher string, host sandboxHost) (execrun.Runner, func(safety.Verdict, string, safety.Context) safety.Verdict, sandbox.Features, error) {
	if launcher == "" {
		var err error
		if launcher, err = sandbox.FindLauncher(); err != nil {
			return nil, nil, sandbox.Features{}, fmt.Errorf("the user helper runs every command in the sandbox: %w", err)
		}
	}
	if !filepath.IsAbs(launcher) {
		return nil, nil, sandbox.Features{}, fmt.Errorf("%w: --sandbox-launcher %q must be an absolute path", ErrUsage, launcher)
	}
	if fi, err := os.Stat(launcher); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return nil, nil, sandbox.Features{}, fmt.Errorf("sandbox launcher %s is not an executable file: %w", launcher, errors.Join(err, sandbox.ErrLauncherMissing))
	}
	f := sandbox.ProbeFeatures()
	gate := func(v safety.Verdict, command string, _ safety.Context) safety.Verdict {
		return sandbox.GateVerdict(v, command, f)
	}
	var hide []string
	for _, h := range host.hide {
		if h != "" {
			hide = append(hide, h)
		}
	}
	r := sandbox.Runner{Launcher: launcher, Getenv: host.getenv, Hide: hide, AllowUnconfined: !f.Confines(), Cache: sandbox.NewProfileCache()}
	return sandboxRunner{r: r, f: f, cache: &profileCache{m: map[string]cachedProfile{}}, post: &postRuns{m: map[*exec.Cmd]sandbox.PostRun{}}}, gate, f, nil
}
