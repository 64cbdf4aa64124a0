package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/safety"
)

// sandboxRunner runs each command of the user helper under the sandbox profile of its
// workspace, through the s-code-sandbox launcher; network, and extra writable paths, only
// as the helper's plan says (Spec.Network, Spec.ExtraWritable), which a person approved.
type sandboxRunner struct {
	r sandbox.Runner
	f sandbox.Features
}

var _ helperd.Planner = sandboxRunner{}

// Command implements execrun.Runner.
func (s sandboxRunner) Command(ctx context.Context, spec execrun.Spec) (*exec.Cmd, error) {
	p, err := s.r.Profile(spec.Workspace, spec.Network, spec.ExtraWritable, spec.Env)
	if err != nil {
		return nil, err
	}
	return s.r.CommandFor(ctx, p, spec.Dir, spec.Path, spec.Args, spec.Env)
}

// Plan implements helperd.Planner: the profile summary of spec and the environment the
// command gets with the profile's changes.
func (s sandboxRunner) Plan(spec execrun.Spec) (permission.Sandbox, []string, error) {
	p, err := s.r.Profile(spec.Workspace, spec.Network, spec.ExtraWritable, spec.Env)
	if err != nil {
		return permission.Sandbox{}, nil, err
	}
	return SandboxSummary(p, s.f), p.Env.ApplyEnv(spec.Env), nil
}

// SandboxSummary returns the plan's summary of profile p on a machine with features f.
func SandboxSummary(p sandbox.Profile, f sandbox.Features) permission.Sandbox {
	return permission.Sandbox{
		Sandboxed: true, Confined: f.Confines(), Reason: f.Problem,
		WritableRoots: p.WritableRoots, ReadOnlyRoots: p.ReadOnlyRoots, DeniedPaths: p.DeniedPaths,
		ProtectedPaths: p.ProtectedPaths, Protection: p.Protection, Network: p.Network,
	}
}

// newSandbox returns the user helper's runner, verdict gate and the kernel features found.
// launcher is the s-code-sandbox path (empty: next to the running executable, else on
// PATH). On a machine that cannot confine commands the gate makes every verdict at least ask,
// so a command reaching the runner there was approved by a person and the launcher may run
// it unconfined (the card of s-code sandbox and the finding say why).
func newSandbox(launcher string) (execrun.Runner, func(safety.Verdict, string, safety.Context) safety.Verdict, sandbox.Features, error) {
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
	r := sandbox.Runner{Launcher: launcher, Getenv: os.Getenv, AllowUnconfined: !f.Confines(), Cache: sandbox.NewProfileCache()}
	return sandboxRunner{r: r, f: f}, gate, f, nil
}

// refuseConfined wraps next so that a peer running inside a sandbox is refused: before
// Landlock ABI 9 a confined command can connect to the helper's socket, and must not get
// commands run for it outside its own profile (another workspace, network).
func refuseConfined(next helperd.Authorizer) helperd.Authorizer {
	return func(c peercred.Creds) error {
		if err := next(c); err != nil {
			return err
		}
		confined, err := sandbox.ProcessConfined(int(c.PID))
		if err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return fmt.Errorf("check whether peer pid %d is sandboxed: %w", c.PID, err)
		}
		if confined {
			return fmt.Errorf("peer pid %d runs inside an S-Code sandbox; sandboxed commands cannot ask the helper to run commands", c.PID)
		}
		return nil
	}
}
