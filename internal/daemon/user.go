package daemon

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/listener"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/version"
	"github.com/s-code-dev/s-code/safety"
)

// RunUser runs the user helper (s-code-userhelper) with args (the flags, without the
// program name) until ctx ends, logging to stderr. It accepts calls only from its own uid
// and runs commands as that user. It returns an error wrapping ErrUsage for bad flags.
func RunUser(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("s-code-userhelper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	path := fs.String("path", execrun.SafePath, "the `PATH` commands get (absolute directories)")
	maxConcurrent := fs.Int("max-concurrent", helperd.DefaultMaxConcurrent, "commands running at once; more wait for a slot")
	defTimeout := fs.Duration("default-timeout", 0, "time limit of a command whose request names none (0: none)")
	maxTimeout := fs.Duration("max-timeout", 0, "largest time limit a request may ask for (0: no limit)")
	killGrace := fs.Duration("kill-grace", execrun.DefaultKillGrace, "time between SIGTERM and SIGKILL for a command's process group")
	drain := fs.Duration("drain", 10*time.Second, "on SIGTERM, how long running commands may finish before they are killed")
	policyFile := fs.String("policy", "", "extra ShellSafety rules: a policy `FILE` (docs/policy.md) owned by you or root and not writable by group or others")
	launcher := fs.String("sandbox-launcher", "", "the s-code-sandbox `PATH` every command runs through (default: next to this executable, else on PATH)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: s-code-userhelper [--listen PATH] [flags]\n\nThe S-Code user helper: runs the commands s-code sends it, for its own user only.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if c.version {
		_, err := fmt.Fprintf(stdout, "s-code-userhelper %s\n", version.Version)
		return err
	}
	if err := execrun.ValidatePath(*path); err != nil {
		return fmt.Errorf("%w: --path: %w", ErrUsage, err)
	}
	log, err := newLogger(stderr, c.logLevel)
	if err != nil {
		return err
	}
	defer log.Sync()
	name, home, err := currentUser()
	if err != nil {
		return err
	}
	dir := c.auditDir
	if dir == "" {
		if dir, err = audit.DefaultDir("user"); err != nil {
			return err
		}
	}
	runner, gate, features, err := newSandbox(*launcher, sandboxHost{home: home, hide: []string{sandbox.SocketHidePath(c.listen), dir}})
	if err != nil {
		return err
	}
	log.Info("sandbox", zap.String("kernel_features", features.Describe()), zap.Bool("confined", features.Confines()))
	uid := uint32(os.Geteuid())
	var pol *safety.Policy
	var envAllow []string
	summary := fmt.Sprintf("uid %d only", uid)
	if *policyFile != "" {
		if pol, err = loadUserPolicy(*policyFile); err != nil {
			return err
		}
		if err := execrun.ValidateEnvAllow(pol.EnvAllow); err != nil {
			return fmt.Errorf("policy %s: env_allow: %w", *policyFile, err)
		}
		envAllow = pol.EnvAllow
		summary += fmt.Sprintf("; ShellSafety policy %s (%d rules)", *policyFile, len(pol.Rules))
	}
	return runServer(ctx, serveParams{
		role:        "user",
		listener:    listener.Config{Path: c.listen, Mode: 0o600, GID: -1, Names: []string{listener.UserSocketName}},
		auditDir:    dir,
		auditExport: c.auditExport,
		drain:       *drain,
		log:         log,
		hostProcs:   true,
		cfg: helperd.Config{
			Role:             safety.RoleUser,
			Authorize:        helperd.SameUID(uid), // helperd itself refuses sandboxed callers
			Runner:           runner,
			Gate:             gate,
			Policy:           pol,
			PolicySummary:    summary,
			Path:             *path,
			EnvAllow:         envAllow,
			Home:             home,
			User:             name,
			RequireOwnedDirs: true,
			Edits:            true,
			MaxConcurrent:    *maxConcurrent,
			DefaultTimeout:   *defTimeout,
			MaxTimeout:       *maxTimeout,
			KillGrace:        *killGrace,
		},
	})
}

// UnsafePolicyError reports a user helper policy file someone other than its user (or root)
// could have written: its allow rules would let them lower the helper's verdicts.
type UnsafePolicyError struct {
	Path   string
	Reason string
}

// Error names the file and why it is refused.
func (e *UnsafePolicyError) Error() string {
	return fmt.Sprintf("policy %s is unsafe: %s (it must be a regular file owned by you or root, not writable by group or others)", e.Path, e.Reason)
}

// loadUserPolicy checks and loads the user helper's ShellSafety policy file.
func loadUserPolicy(path string) (*safety.Policy, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &UnsafePolicyError{Path: path, Reason: "not a regular file"}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, &UnsafePolicyError{Path: path, Reason: fmt.Sprintf("mode %v is writable by group or others", fi.Mode().Perm())}
	}
	if uid, ok := fileOwner(fi); !ok || (uid != uint32(os.Geteuid()) && uid != 0) {
		return nil, &UnsafePolicyError{Path: path, Reason: fmt.Sprintf("owned by uid %d", uid)}
	}
	p, err := safety.LoadPolicy(path)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}
