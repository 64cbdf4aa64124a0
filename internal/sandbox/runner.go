package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// Runner builds the commands a helper runs, each under the sandbox profile of its workspace.
// It is the user helper's hook for starting a child: an adapter to the helper's runner
// interface passes each command's workspace, working directory, network approval, program
// and environment to Command.
type Runner struct {
	// Launcher is the absolute path of s-code-sandbox (see FindLauncher).
	Launcher string
	// Getenv reads the helper's own environment (os.Getenv, with HOME the helper's user's
	// home): the profile is computed from it alone (HOME, XDG_*, S_CODE_TOOL_CACHE_DIR, PATH,
	// GOROOT), never from the command's environment, so that nothing a request adds (a
	// toolchain variable naming "/", a cache directory elsewhere) changes the profile.
	Getenv func(string) string
	// Hide are further paths to hide from every command, beyond the S-Code directories that
	// Discover finds: the helper's socket directory and audit directory (see
	// Host.StateDirs).
	Hide []string
	// AllowUnconfined lets the launcher run a command on a machine that cannot confine it.
	// Set it only when every verdict is gated by GateVerdict, so that on such a machine each
	// command reaching the runner was approved by a person who saw why.
	AllowUnconfined bool
	// Cache, when set, reuses the profile and the namespace probes between commands while
	// what they depend on is unchanged (see ProfileCache); nil computes both for every
	// command.
	Cache *ProfileCache
}

// Command returns the exec.Cmd that runs path with args (args[0] is the program name) in
// dir, confined to the profile of workspace with network on only when network is true (a
// person approved it for this one command). env is the command's complete environment; the
// profile's changes are applied to it; it has no say in the profile. On a kernel without Landlock the launcher refuses
// (exit 126) unless r.AllowUnconfined. It fails when the launcher is not absolute, path
// or dir is not absolute, dir lies outside the workspace, or the profile cannot be computed.
func (r Runner) Command(ctx context.Context, workspace, dir string, network bool, path string, args, env []string) (*exec.Cmd, error) {
	p, err := r.Profile(workspace, network, nil, env)
	if err != nil {
		return nil, err
	}
	return r.CommandFor(ctx, p, dir, path, args, env)
}

// Profile returns the sandbox profile a command of workspace runs under, with network on
// only when network is true and each of extraWritable (absolute directories outside the
// workspace a person approved for this one run) added to the writable roots. The profile is
// computed from r.Getenv and the machine alone: env, the command's environment, has no say
// in it (a request's additions must not widen what runs). It fails when a path is relative or
// the profile cannot be computed.
func (r Runner) Profile(workspace string, network bool, extraWritable, env []string) (Profile, error) {
	_ = env // kept in the signature for callers that pass it; deliberately unread
	getenv := r.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	probes := namespaceProbes{mount: MountNamespaceUsable, pid: PIDNamespaceUsable}
	if r.Cache != nil {
		probes = r.Cache.probes()
	}
	h, err := discover(getenv, workspace, probes)
	if err != nil {
		return Profile{}, err
	}
	h.StateDirs = append(h.StateDirs, existing(r.Hide)...)
	var p Profile
	if r.Cache != nil {
		p, err = r.Cache.profile(h, network)
	} else {
		p, err = NewProfile(h, network)
	}
	if err != nil {
		return Profile{}, err
	}
	for _, w := range extraWritable {
		if !filepath.IsAbs(w) || filepath.Clean(w) != w {
			return Profile{}, fmt.Errorf("sandbox runner: extra writable path %q: %w", w, ErrRelativePath)
		}
		if !slices.Contains(p.WritableRoots, w) {
			p.WritableRoots = append(p.WritableRoots, w)
		}
	}
	p.AllowUnconfined = r.AllowUnconfined
	return p, nil
}

// CommandFor returns the exec.Cmd that runs path with args in dir under the profile p (see
// Profile), with the profile's environment changes applied to env. It fails when the
// launcher, path or dir is not absolute, or dir lies outside p's workspace.
func (r Runner) CommandFor(ctx context.Context, p Profile, dir, path string, args, env []string) (*exec.Cmd, error) {
	if !filepath.IsAbs(r.Launcher) || !filepath.IsAbs(path) || !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("sandbox runner: launcher %q, program %q and directory %q must be absolute: %w", r.Launcher, path, dir, ErrRelativePath)
	}
	if len(args) == 0 {
		return nil, errors.New("sandbox runner: empty argv")
	}
	cdir, err := Canonical(dir)
	if err != nil {
		return nil, err
	}
	if !within(p.Workspace, cdir) {
		return nil, fmt.Errorf("sandbox runner: directory %s lies outside the workspace %s", cdir, p.Workspace)
	}
	argv := append([]string{path}, args[1:]...)
	cmd, err := Command(ctx, r.Launcher, p, argv, env)
	if err != nil {
		return nil, err
	}
	cmd.Dir = cdir
	return cmd, nil
}

// PostRun is the post-run check of one command: Quarantine of its workspace with the
// mark taken just before it started. Run it once no process of the command is left (with
// the profile's PID namespace: once the launcher has ended).
type PostRun struct {
	// Workspace is the canonical workspace root the command ran in.
	Workspace string
	// Since is the change-time mark taken before the command started (see Since).
	Since time.Time
	// Tag names the quarantined entries of this command (NAME.s-code-quarantine-TAG).
	Tag string
}

// Run quarantines what the command left in the workspace's Git directories and control
// files and returns the workspace-relative paths moved aside (see Quarantine).
func (c PostRun) Run() ([]string, error) { return Quarantine(c.Workspace, c.Since, c.Tag) }

// CheckedCommandFor is CommandFor that also returns the command's post-run check, with its
// mark taken after everything CommandFor prepares (the cache namespace, the Git
// placeholders); the caller runs it (PostRun.Run) when the command has ended, and reports
// what it quarantined.
func (r Runner) CheckedCommandFor(ctx context.Context, p Profile, dir, path string, args, env []string) (*exec.Cmd, PostRun, error) {
	cmd, err := r.CommandFor(ctx, p, dir, path, args, env)
	if err != nil {
		return nil, PostRun{}, err
	}
	since, err := Since(p.CacheNamespace)
	if err != nil {
		return nil, PostRun{}, err
	}
	return cmd, PostRun{Workspace: p.Workspace, Since: since, Tag: since.UTC().Format("20060102T150405.000000000Z")}, nil
}
