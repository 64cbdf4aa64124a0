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
	"path/filepath"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/auditexport"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/listener"
	"github.com/s-code-dev/s-code/internal/sdnotify"
	"github.com/s-code-dev/s-code/internal/version"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
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
	listen      string
	auditDir    string
	auditExport string
	logLevel    string
	version     bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.listen, "listen", "", "create the socket at `PATH` when not started by systemd or launchd")
	fs.StringVar(&c.auditDir, "audit-dir", "", "audit log `DIR` (default: the role's audit directory)")
	fs.StringVar(&c.auditExport, "audit-export", "", "export every audit record over OTLP as configured in `FILE` (TOML, docs/audit.md), owned by you or root and not writable by group or others")
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
	// auditExport is the audit export's configuration file; empty means no export.
	auditExport string
	drain       time.Duration
	cfg         helperd.Config
	log         *zap.Logger
	// hostProcs serves the Processes service (the user helper's host process supervisor).
	hostProcs bool
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
	var aopts audit.Options
	var export *auditexport.Exporter
	if p.auditExport != "" {
		if export, err = newAuditExport(p); err != nil {
			return err
		}
		aopts.Observer = export
		export.Start()
		// Deferred before the log's Close, so it runs after it: the closing seal is exported too.
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), auditExportGrace)
			defer cancel()
			if err := export.Shutdown(ctx); err != nil {
				log.Warn("audit export stopped", zap.Error(err))
			}
			st := export.Stats()
			log.Info("audit export stopped", zap.Uint64("exported", st.Exported), zap.Uint64("exported_seq", st.ExportedSeq),
				zap.Uint64("failed_attempts", st.Failed), zap.Uint64("dropped", st.Dropped), zap.Uint64("backlog", st.Backlog))
		}()
	}
	alog, err := audit.Open(p.auditDir, aopts)
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
	if p.hostProcs {
		sup := newHostProcs(&cfg, alog, log)
		// Deferred after the audit log's Close, so it runs first: every host process's
		// stop and exit are recorded before the log is sealed.
		defer sup.Close(context.Background())
	}
	cfg.Logger = log
	// No workspace may hold or lie inside the audit log, wherever it was put. (A --listen
	// socket's directory is not added: it may be a shared one such as /tmp.)
	cfg.StateDirs = append(cfg.StateDirs, p.auditDir)
	cfg.Version = version.Version
	if export != nil {
		cfg.AuditExport = func() *helperv1.AuditExportStatus { return exportStatus(export.Stats()) }
	}
	srv, err := helperd.New(cfg)
	if err != nil {
		return err
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(l) }()
	seq, _ := alog.Head()
	log.Info("helper ready", zap.String("role", p.role), zap.String("listener", string(src)), zap.String("address", addr(l)),
		zap.String("audit_dir", p.auditDir), zap.String("audit_export", p.auditExport), zap.Uint64("audit_seq", seq), zap.String("policy", cfg.PolicySummary), zap.String("version", version.Version))
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

// auditExportGrace is how long a stopping helper keeps trying to export the records still
// queued (the closing seal among them) before it gives up on them; the local log has them.
const auditExportGrace = 3 * time.Second

// newAuditExport loads the export's configuration and makes the exporter.
func newAuditExport(p serveParams) (*auditexport.Exporter, error) {
	cfg, err := auditexport.LoadConfig(p.auditExport)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(p.auditDir)
	if err != nil {
		return nil, fmt.Errorf("audit export: %w", err)
	}
	return auditexport.New(cfg, auditexport.Settings{
		Service: "s-code-" + p.role + "helper",
		Version: version.Version,
		Role:    p.role,
		LogDir:  dir,
		Logger:  p.log,
	})
}

// exportStatus is the Status RPC's view of the export's counts.
func exportStatus(s auditexport.Stats) *helperv1.AuditExportStatus {
	return &helperv1.AuditExportStatus{Endpoint: s.Endpoint, Protocol: s.Protocol, Backlog: s.Backlog,
		Exported: s.Exported, ExportedSeq: s.ExportedSeq, Failed: s.Failed, Dropped: s.Dropped, LastError: s.LastError}
}
