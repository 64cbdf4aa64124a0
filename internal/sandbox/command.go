package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// LauncherName is the file name of the sandbox launcher binary (cmd/sandbox).
const LauncherName = "s-code-sandbox"

// MaxProfileBytes bounds the JSON profile passed to the launcher on its command line
// (Linux allows 128 KiB for one argument, MAX_ARG_STRLEN).
const MaxProfileBytes = 96 << 10

// ErrLauncherMissing means the s-code-sandbox binary was found neither next to the running
// executable nor on PATH.
var ErrLauncherMissing = errors.New(LauncherName + " not found next to the s-code executable or on PATH")

// FindLauncher returns the absolute path of the s-code-sandbox binary: the one next to the
// running executable, else the first on PATH. It fails with ErrLauncherMissing.
func FindLauncher() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), LauncherName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(LauncherName)
	if err != nil {
		return "", fmt.Errorf("%w (build it with make build, or install it beside s-code): %w", ErrLauncherMissing, err)
	}
	if !filepath.IsAbs(p) {
		if p, err = filepath.Abs(p); err != nil {
			return "", fmt.Errorf("%w: %w", ErrLauncherMissing, err)
		}
	}
	return p, nil
}

// LauncherArgs returns the argument vector (starting with launcher) that runs argv under p:
// launcher --profile-json JSON -- argv…. It fails when argv is empty or the profile is
// larger than MaxProfileBytes.
func LauncherArgs(launcher string, p Profile, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: no command to run")
	}
	b, err := p.Marshal()
	if err != nil {
		return nil, fmt.Errorf("sandbox: encode profile: %w", err)
	}
	if len(b) > MaxProfileBytes {
		return nil, fmt.Errorf("sandbox: profile is %d bytes, more than %d", len(b), MaxProfileBytes)
	}
	return append([]string{launcher, "--profile-json", string(b), "--"}, argv...), nil
}

// Command returns the exec.Cmd that runs argv under the profile p through the launcher
// binary at launcher (see FindLauncher): the environment is env with the profile's changes
// applied, the working directory is the workspace. It prepares the cache namespace first
// (see Prepare) and the workspace's Git placeholders (see MakeGitPlaceholders). The caller sets the standard streams and starts it; the launcher confines
// itself and then execs argv[0] (looked up on the PATH of the changed environment).
// When p asks for ProtectionMountNamespace and this process lacks CAP_SYS_ADMIN, the
// launcher starts in a new user and mount namespace (cmd.SysProcAttr; a caller that sets
// its own attributes must keep these).
// This is the hook the user helper uses to start every command.
func Command(ctx context.Context, launcher string, p Profile, argv, env []string) (*exec.Cmd, error) {
	if err := Prepare(p); err != nil {
		return nil, err
	}
	// A placeholder that cannot be made here (a .git the user may not write) is tried again
	// by the launcher, which falls back to the per-entry layout when it fails too.
	_ = MakeGitPlaceholders(p)
	args, err := LauncherArgs(launcher, p, argv)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, launcher)
	cmd.Args = args
	cmd.Env = p.Env.ApplyEnv(env)
	cmd.Dir = p.Workspace
	cmd.SysProcAttr = LauncherSysProcAttr(p)
	return cmd, nil
}
