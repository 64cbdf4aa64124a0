package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Runner builds the commands a helper runs, each under the sandbox profile of its workspace.
// It is the user helper's hook for starting a child: an adapter to the helper's runner
// interface passes each command's workspace, working directory, network approval, program
// and environment to Command.
type Runner struct {
	// Launcher is the absolute path of s-code-sandbox (see FindLauncher).
	Launcher string
	// Getenv reads the helper's own environment (os.Getenv); variables that the command's
	// environment lacks (HOME, XDG_CACHE_HOME, S_CODE_TOOL_CACHE_DIR, PATH) are read here.
	Getenv func(string) string
	// AllowUnconfined lets the launcher run a command on a machine that cannot confine it.
	// Set it only when every verdict is gated by GateVerdict, so that on such a machine each
	// command reaching the runner was approved by a person who saw why.
	AllowUnconfined bool
	// Cache, when set, reuses the profile and the user-namespace probe between commands
	// while what they depend on is unchanged (see ProfileCache); nil computes both for
	// every command.
	Cache *ProfileCache
}

// Command returns the exec.Cmd that runs path with args (args[0] is the program name) in
// dir, confined to the profile of workspace with network on only when network is true (a
// person approved it for this one command). env is the command's complete environment; the
// profile's changes are applied to it. On a kernel without Landlock the launcher refuses
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
// workspace a person approved for this one run) added to the writable roots. env is the
// command's environment; variables it lacks are read from r.Getenv. It fails when a path
// is relative or the profile cannot be computed.
func (r Runner) Profile(workspace string, network bool, extraWritable, env []string) (Profile, error) {
	getenv := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		if r.Getenv != nil {
			return r.Getenv(k)
		}
		return ""
	}
	var p Profile
	if r.Cache == nil {
		var err error
		if p, err = ForWorkspace(getenv, workspace, network); err != nil {
			return Profile{}, err
		}
	} else {
		h, err := discover(getenv, workspace, r.Cache.mountNamespaceUsable)
		if err != nil {
			return Profile{}, err
		}
		if p, err = r.Cache.profile(h, network); err != nil {
			return Profile{}, err
		}
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
