package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/listener"
	"github.com/s-code-dev/s-code/internal/rootpolicy"
	"github.com/s-code-dev/s-code/internal/version"
	"github.com/s-code-dev/s-code/safety"
)

// ErrNotRoot is returned by RunRoot when the process's effective uid is not 0.
var ErrNotRoot = errors.New("the root helper must run as root (euid 0)")

// RunRoot runs the root helper (s-code-roothelper) with args until ctx ends, logging to
// stderr. It refuses to start unless its euid is 0 and its policy file is root-owned and
// not writable by group or others; it accepts only the uids and groups the policy names.
func RunRoot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("s-code-roothelper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	policyPath := fs.String("policy", rootpolicy.DefaultPath, "the root helper's policy `FILE`")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: s-code-roothelper [--listen PATH] [--policy FILE] [flags]\n\nThe S-Code root helper: runs commands as root for the callers its policy names.\n\n")
		fs.PrintDefaults()
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if c.version {
		_, err := fmt.Fprintf(stdout, "s-code-roothelper %s\n", version.Version)
		return err
	}
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	log, err := newLogger(stderr, c.logLevel)
	if err != nil {
		return err
	}
	defer log.Sync()
	pol, err := rootpolicy.Load(*policyPath)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w (install the default policy with `make install`, which admits nobody until you name users or groups, or pass --policy FILE: a root-owned file not writable by group or others)", err)
	}
	if err != nil {
		return err
	}
	name, home, err := currentUser()
	if err != nil {
		return err
	}
	dir := c.auditDir
	if dir == "" {
		dir = audit.RootDir
	}
	return runServer(ctx, serveParams{
		role:        "root",
		listener:    listener.Config{Path: c.listen, Mode: 0o660, GID: pol.SocketGroup, Names: []string{listener.RootSocketName}},
		auditDir:    dir,
		auditExport: c.auditExport,
		drain:       pol.Drain,
		log:         log,
		cfg: helperd.Config{
			Role:           safety.RoleRoot,
			Authorize:      pol.Authorize,
			Runner:         execrun.Plain{},
			Gate:           gitGate,
			Policy:         pol.Safety,
			Team:           pol.Approvers,
			PolicySummary:  pol.Summary(),
			Path:           pol.Path,
			EnvAllow:       pol.EnvAllow,
			Home:           home,
			User:           name,
			MaxConcurrent:  pol.MaxConcurrent,
			DefaultTimeout: pol.DefaultTimeout,
			MaxTimeout:     pol.MaxTimeout,
			KillGrace:      pol.KillGrace,
		},
	})
}
