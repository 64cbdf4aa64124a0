package helperd

import (
	"fmt"

	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/sandbox"
)

// RulePeerSandboxed is the rule id of a refused caller that runs inside an S-Code sandbox,
// or whose confinement the helper could not read (refused record).
const RulePeerSandboxed = "peer.sandboxed"

// refuseSandboxed refuses, audits and logs a call from a peer that runs inside an S-Code
// sandbox: a confined command must never get commands run for it outside its own profile
// (another workspace, network, root). Every helper applies it before its own Authorizer.
// The refused record goes through auditRefusal, so a flood of them is summarized.
func (s *Server) refuseSandboxed(c peercred.Creds, method string) error {
	err := sandboxedPeer(c)
	if err == nil {
		return nil
	}
	s.cfg.Logger.Warn("refused sandboxed caller", zap.String("method", method), zap.Stringer("peer", &c), zap.Error(err))
	s.auditRefusal(&audit.Record{Kind: audit.KindRefused, Helper: s.cfg.Role.String(), Peer: auditPeer(c), Verdict: denialSummary(RulePeerSandboxed, nil), Reason: RulePeerSandboxed + ": " + method + ": " + err.Error()})
	return status.Errorf(codes.PermissionDenied, "the %s helper refuses this caller: %v", s.cfg.Role, err)
}

// sandboxedPeer returns why c may not call a helper because of confinement, or nil. It judges
// the peer's state as the kernel reported it when the connection was accepted (see
// peercred.ProcStatus; pinned by a pidfd where the kernel has SO_PEERPIDFD), never a later
// read of a pid that may have been reused. A status that could not be read is refused: the
// peer was gone at accept, or lives in a pid namespace the helper cannot see. Systems without
// such a status (macOS) are not checked here: there only the sandbox profile keeps commands
// from the socket.
func sandboxedPeer(c peercred.Creds) error {
	if !peercred.ReadsProcStatus() {
		return nil
	}
	if !c.Status.Known {
		return fmt.Errorf("cannot tell whether peer pid %d runs inside a sandbox (it had exited when its connection was accepted, or runs in another pid namespace)", c.PID)
	}
	if sandbox.ConfinedStatus(c.Status.NoNewPrivs, c.Status.SeccompFilters) {
		return fmt.Errorf("peer pid %d runs inside an S-Code sandbox (no_new_privs and %d seccomp filters when it connected); sandboxed commands cannot ask a helper to run commands", c.PID, c.Status.SeccompFilters)
	}
	return nil
}
