package helperd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/helperwire"
	"github.com/s-code-dev/s-code/internal/peerauth"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/workspace"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// Server is the helper service. Create it with New, serve it with Serve, stop it with
// Shutdown.
type Server struct {
	helperv1.UnimplementedHelperServer

	cfg     Config
	grpc    *grpc.Server
	health  *health.Server
	started time.Time
	slots   chan struct{} // one token per running command (MaxConcurrent)
	running atomic.Int32
	// nonces are the single-use nonces of plans that need approval.
	nonces *permission.Nonces
	// home is Config.Home with symbolic links resolved; stateDirs are S-Code's own state
	// directories (workspace.Validate refuses them).
	home      string
	stateDirs []string

	// runCtx ends when Shutdown gives up waiting: every running command is killed.
	runCtx    context.Context
	runCancel context.CancelFunc
	// handlers counts Exec handlers, so Shutdown can wait for their exit records.
	handlers sync.WaitGroup

	lim      *limiter   // per-uid connections and calls (limits.go)
	refusals *refusals  // refusal records, bursts summarized
	pending  pendingSet // requests waiting for a team approver (team.go)
}

var _ helperv1.HelperServer = (*Server)(nil)

// New returns a Server for cfg, with its gRPC server built on the peer-credential
// transport credentials and the authorizing interceptors. It fails when cfg is incomplete.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, started: time.Now(), slots: make(chan struct{}, cfg.MaxConcurrent), health: health.NewServer()}
	s.nonces = permission.NewNonces(cfg.ApprovalTTL, 0)
	s.home = filepath.Clean(cfg.Home)
	if h, err := filepath.EvalSymlinks(cfg.Home); err == nil {
		s.home = h
	}
	s.stateDirs = append(workspace.StateDirs(os.Getenv, s.home), cfg.StateDirs...)
	s.runCtx, s.runCancel = context.WithCancel(context.Background())
	s.lim = newLimiter(cfg.Limits)
	s.refusals = newRefusals(s.lim.lim.RefusalInterval, func(r *audit.Record) { s.audit(context.Background(), r, false) })
	s.grpc = grpc.NewServer(
		grpc.Creds(limitCreds{TransportCredentials: peerauth.NewServerCredentials(s.handshakeFailed), s: s}),
		grpc.MaxRecvMsgSize(MaxMessageSize),
		grpc.StatsHandler(callWatch{s}),
		grpc.ChainUnaryInterceptor(s.unaryLimit, s.unaryAuth),
		grpc.ChainStreamInterceptor(s.streamLimit, s.streamAuth),
	)
	helperv1.RegisterHelperServer(s.grpc, s)
	if cfg.Services != nil {
		cfg.Services(s.grpc)
	}
	healthpb.RegisterHealthServer(s.grpc, s.health)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(helperv1.Helper_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	return s, nil
}

// Serve accepts connections on l until Shutdown or a listener error; it returns nil after
// Shutdown.
func (s *Server) Serve(l net.Listener) error {
	err := s.grpc.Serve(l)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// Shutdown stops accepting calls and lets running commands finish for up to grace; then it
// kills what still runs (SIGTERM, SIGKILL after the kill grace), waits for their exit
// records, and closes every connection. It returns when the server has stopped.
func (s *Server) Shutdown(grace time.Duration) {
	defer s.refusals.stop()
	s.health.Shutdown()
	stopped := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(stopped)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-stopped:
		s.runCancel()
		return
	case <-t.C:
	}
	if n := s.running.Load(); n > 0 {
		s.cfg.Logger.Warn("drain grace over: killing running commands", zap.Int32("running", n))
	}
	s.runCancel()
	done := make(chan struct{})
	go func() { s.handlers.Wait(); close(done) }()
	select {
	case <-done:
		// The handlers have returned: give gRPC a moment to flush their last events.
		select {
		case <-stopped:
			return
		case <-time.After(2 * time.Second):
		}
	case <-time.After(s.killGrace() + 5*time.Second):
	}
	s.grpc.Stop()
	<-stopped
}

// Running returns the number of commands running now.
func (s *Server) Running() int { return int(s.running.Load()) }

func (s *Server) killGrace() time.Duration {
	if s.cfg.KillGrace > 0 {
		return s.cfg.KillGrace
	}
	return 2 * time.Second
}

// handshakeFailed audits a connection whose peer credentials could not be read.
func (s *Server) handshakeFailed(err error) {
	s.cfg.Logger.Warn("refused connection: peer credentials unavailable", zap.Error(err))
	s.auditRefusal(&audit.Record{Kind: audit.KindRefused, Helper: s.cfg.Role.String(), Verdict: denialSummary(RulePeerUnknown, nil), Reason: RulePeerUnknown + ": " + err.Error()})
}

// authorize checks the identity of a call. Failures are audited as refused.
func (s *Server) authorize(ctx context.Context, method string) error {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		s.cfg.Logger.Warn("refused call without peer credentials", zap.String("method", method), zap.Error(err))
		s.auditRefusal(&audit.Record{Kind: audit.KindRefused, Helper: s.cfg.Role.String(), Verdict: denialSummary(RulePeerUnknown, nil), Reason: RulePeerUnknown + ": " + method + ": " + err.Error()})
		return status.Error(codes.Unauthenticated, "the helper could not read the caller's peer credentials")
	}
	if err := s.refuseSandboxed(c, method); err != nil {
		return err
	}
	if err := s.cfg.Authorize(c); err != nil {
		s.cfg.Logger.Warn("refused caller", zap.String("method", method), zap.Stringer("peer", &c), zap.Error(err))
		s.auditRefusal(&audit.Record{Kind: audit.KindRefused, Helper: s.cfg.Role.String(), Peer: auditPeer(c), Verdict: denialSummary(RulePeerNotAdmitted, nil), Reason: RulePeerNotAdmitted + ": " + method + ": " + err.Error()})
		// The client says which helper refused ("refused by the root helper: …"); the
		// message is only the reason, so that the helper is not named twice.
		return status.Error(codes.PermissionDenied, err.Error())
	}
	return nil
}

func (s *Server) unaryAuth(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := s.authorize(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (s *Server) streamAuth(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := s.authorize(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}

// audit appends r and logs a failure; it reports whether the record was written.
func (s *Server) audit(ctx context.Context, r *audit.Record, durable bool) bool {
	if err := s.cfg.Auditor.Append(ctx, r, durable); err != nil {
		s.cfg.Logger.Error("audit append failed", zap.String("kind", string(r.Kind)), zap.String("request_id", r.RequestID), zap.Error(err))
		return false
	}
	return true
}

func auditPeer(c peercred.Creds) *audit.Peer {
	return &audit.Peer{UID: c.UID, GID: c.GID, PID: c.PID, Exe: c.Exe}
}

// newRequestID returns 16 random bytes in hex.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Check returns the helper's verdict for a command in its own context, without running it.
func (s *Server) Check(ctx context.Context, req *helperv1.CheckRequest) (*helperv1.CheckResponse, error) {
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	dialect, err := dialectOf(req.GetShell())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	dirs, denial := s.resolveDirs(c, req.GetWorkspace(), req.GetCwd())
	if denial != nil {
		return nil, status.Error(codes.InvalidArgument, denial.GetReason())
	}
	v := s.judge(req.GetCommand(), s.safetyContext(dirs, dialect))
	return &helperv1.CheckResponse{Verdict: helperwire.VerdictToProto(v)}, nil
}

// Status reports the helper's version, uptime, role, policy summary and audit head.
func (s *Server) Status(context.Context, *helperv1.StatusRequest) (*helperv1.StatusResponse, error) {
	seq, hash := s.cfg.Auditor.Head()
	role := helperv1.Role_ROLE_USER
	if s.cfg.Role == safety.RoleRoot {
		role = helperv1.Role_ROLE_ROOT
	}
	var seals, unsealed uint64
	var sealing bool
	if ss, ok := s.cfg.Auditor.(SealStater); ok {
		n, u, on := ss.SealState()
		seals, unsealed, sealing = n, uint64(max(u, 0)), on
	}
	return &helperv1.StatusResponse{
		AuditSeals:    seals,
		AuditUnsealed: unsealed,
		AuditSealing:  sealing,
		Version:       s.cfg.Version,
		Uptime:        durationpb.New(time.Since(s.started)),
		Role:          role,
		PolicySummary: s.cfg.PolicySummary,
		AuditHeadSeq:  seq,
		AuditHeadHash: hash,
		Running:       s.running.Load(),
		AuditExport:   s.auditExport(),
	}, nil
}

func (s *Server) auditExport() *helperv1.AuditExportStatus {
	if s.cfg.AuditExport == nil {
		return nil
	}
	return s.cfg.AuditExport()
}
