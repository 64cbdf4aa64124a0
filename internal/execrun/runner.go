package execrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Spec is one command a helper has decided to run.
type Spec struct {
	// Path is the absolute path of the program (the shell), Args its argv with Args[0].
	Path string
	Args []string
	// Env is the complete environment, "NAME=value" entries (see BuildEnv).
	Env []string
	// Dir is the absolute working directory.
	Dir string
	// Workspace is the absolute workspace root (a sandbox profile's writable root).
	Workspace string
	// Network reports whether a person approved network access for this one command.
	Network bool
	// ExtraWritable are absolute paths outside the workspace that a person approved as
	// writable for this one command (a sandbox profile's extra writable roots).
	ExtraWritable []string
	// RequestID is the helper's id for the request, for logs and sandbox profiles.
	RequestID string
	// Prepared is what the helper's planner computed for this Spec (the user helper's
	// sandbox profile), so that the Runner builds the command from exactly what was planned
	// without computing it again; nil when there is none.
	Prepared any
}

// Runner turns a Spec into a command that is not started yet. The plain runner runs the
// Spec as it is; the sandbox wraps it (a different argv, extra SysProcAttr). Start adds the
// process group, the stdio pipes and the kill handling, so a Runner must leave Stdin,
// Stdout, Stderr and ExtraFiles unset.
type Runner interface {
	Command(ctx context.Context, spec Spec) (*exec.Cmd, error)
}

// AfterExit is implemented by a Runner that checks what a command left behind once it has
// ended and no process of it is left: the sandbox's post-run quarantine of Git
// configuration and indirections (internal/sandbox QuarantineGit). The helper calls it once
// for each command the Runner built, after Process.Wait (or when the command failed to
// start), and puts the quarantined paths (relative to the workspace) into the exit audit
// record. An error means the check was incomplete or an entry could not be moved aside.
type AfterExit interface {
	AfterExit(cmd *exec.Cmd) (quarantined []string, err error)
}

// Plain runs the Spec unchanged, without a sandbox.
type Plain struct{}

// Command returns an exec.Cmd for spec. It fails when Path or Dir is not absolute.
func (Plain) Command(_ context.Context, spec Spec) (*exec.Cmd, error) {
	if !filepath.IsAbs(spec.Path) || !filepath.IsAbs(spec.Dir) {
		return nil, fmt.Errorf("execrun: path %q and dir %q must be absolute", spec.Path, spec.Dir)
	}
	if len(spec.Args) == 0 {
		return nil, errors.New("execrun: empty argv")
	}
	return &exec.Cmd{Path: spec.Path, Args: spec.Args, Env: spec.Env, Dir: spec.Dir}, nil
}

// Shell paths, looked up by absolute path only (never through PATH).
var shellCandidates = map[string][]string{
	"bash": {"/bin/bash", "/usr/bin/bash"},
	"sh":   {"/bin/sh", "/usr/bin/sh"},
}

// ErrNoShell is returned by ShellPath when no candidate path of the shell exists.
var ErrNoShell = errors.New("execrun: shell not found")

// ShellPath returns the absolute path of the named shell ("bash" or "sh"): the first of its
// fixed candidate paths (/bin/NAME, /usr/bin/NAME) that is a regular executable file. It
// never searches PATH. It fails with ErrNoShell.
func ShellPath(name string) (string, error) {
	for _, p := range shellCandidates[name] {
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrNoShell, name)
}
