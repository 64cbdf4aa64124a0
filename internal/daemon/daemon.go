package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/listener"
	"github.com/s-code-dev/s-code/internal/sdnotify"
	"github.com/s-code-dev/s-code/internal/version"
)

// ErrUsage marks a flag error; the mains exit with status 2 for it.
var ErrUsage = errors.New("usage")

// ExitStatus turns the error a helper's Run function returned into the process's exit
// status, printing it to stderr as "prog: err": 0 for nil and for -h/--help (flag.ErrHelp),
// 2 for ErrUsage, 1 for anything else.
func ExitStatus(prog string, err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, ErrUsage):
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", prog, err)
	return 1
}

// common are the flags both helpers take.
type common struct {
	listen   string
	auditDir string
	logLevel string
	version  bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.listen, "listen", "", "create the socket at `PATH` when not started by systemd or launchd")
	fs.StringVar(&c.auditDir, "audit-dir", "", "audit log `DIR` (default: the role's audit directory)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log `LEVEL`: debug, info, warn or error")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
}

// parse parses args into fs, turning errors into ErrUsage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", ErrUsage, fs.Args())
	}
	return nil
}

// newLogger returns a zap logger writing to w: JSON when w is not a terminal, console
// otherwise.
func newLogger(w io.Writer, level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("%w: --log-level: %w", ErrUsage, err)
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		encCfg.EncodeLevel = zapcore.CapitalColorLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	} else {
		enc = zapcore.NewJSONEncoder(encCfg)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), lvl)), nil
}

// serveParams is what runServer needs beyond the helper's Config.
type serveParams struct {
	role     string
	listener listener.Config
	auditDir string
	drain    time.Duration
	cfg      helperd.Config
	log      *zap.Logger
}

// runServer opens the listener and the audit log, serves until ctx ends, then stops:
// STOPPING=1, no new calls, running commands drained for p.drain and then killed, audit log
// closed (sealed).
func runServer(ctx context.Context, p serveParams) (err error) {
	log := p.log
	// Listen first: it sets the umask while it binds, before other goroutines create files.
	l, src, err := listener.Listen(p.listener)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer l.Close()
	if err := execrun.MarkInheritedCloseOnExec(); err != nil {
		return err
	}
	alog, err := audit.Open(p.auditDir, audit.Options{})
	if err != nil {
		// audit's errors already name the log ("audit log: DIR …").
		return err
	}
	defer func() {
		if cerr := alog.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close audit log: %w", cerr)
		}
	}()
	cfg := p.cfg
	cfg.Auditor = alog
	cfg.Logger = log
	// No workspace may hold or lie inside the audit log, wherever it was put. (A --listen
	// socket's directory is not added: it may be a shared one such as /tmp.)
	cfg.StateDirs = append(cfg.StateDirs, p.auditDir)
	cfg.Version = version.Version
	srv, err := helperd.New(cfg)
	if err != nil {
		return err
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(l) }()
	seq, _ := alog.Head()
	log.Info("helper ready", zap.String("role", p.role), zap.String("listener", string(src)), zap.String("address", addr(l)),
		zap.String("audit_dir", p.auditDir), zap.Uint64("audit_seq", seq), zap.String("policy", cfg.PolicySummary), zap.String("version", version.Version))
	if err := sdnotify.Ready(); err != nil {
		log.Warn("sd_notify READY failed", zap.Error(err))
	}
	wdCtx, wdCancel := context.WithCancel(ctx)
	defer wdCancel()
	go func() {
		if err := sdnotify.Watchdog(wdCtx); err != nil {
			log.Error("watchdog", zap.Error(err))
		}
	}()
	select {
	case <-ctx.Done():
		log.Info("stopping: draining running commands", zap.Duration("grace", p.drain), zap.Int("running", srv.Running()))
		if err := sdnotify.Stopping(); err != nil {
			log.Warn("sd_notify STOPPING failed", zap.Error(err))
		}
		srv.Shutdown(p.drain)
		<-serveErr
		log.Info("stopped")
		return nil
	case err := <-serveErr:
		srv.Shutdown(0)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	}
}

func addr(l net.Listener) string {
	if a := l.Addr(); a != nil {
		return a.String()
	}
	return ""
}

// currentUser returns the name and home directory of the process's user; an unknown user
// is an error, never a default.
func currentUser() (name, home string, err error) {
	u, err := user.Current()
	if err != nil {
		return "", "", fmt.Errorf("look up the helper's user: %w", err)
	}
	if u.HomeDir == "" {
		return "", "", fmt.Errorf("user %s has no home directory", u.Username)
	}
	return u.Username, u.HomeDir, nil
}
