package helperd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/rootpolicy"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// Auditor is where the helper writes its audit records (audit.Log in the daemons).
type Auditor interface {
	// Append writes r, filling its Seq, Time, Prev and Hash. With durable true it returns
	// only once the record is on disk (fsync); an error means the record may be lost.
	Append(ctx context.Context, r *audit.Record, durable bool) error
	// Head returns the sequence number and hash of the last record written.
	Head() (seq uint64, hash string)
}

// SealStater is an Auditor that reports its seals (audit.Log.SealState); Status shows them
// when the Auditor has it.
type SealStater interface {
	// SealState returns how many seals were written, how many records follow the last
	// one, and whether the log seals at all.
	SealState() (seals uint64, unsealed int, enabled bool)
}

// Authorizer decides whether a peer may call the helper at all. It returns nil to accept,
// or an error saying why not (recorded in the refused audit record).
type Authorizer func(c peercred.Creds) error

// SameUID returns an Authorizer that accepts only peers whose uid is uid (the user helper:
// its own uid).
func SameUID(uid uint32) Authorizer {
	return func(c peercred.Creds) error {
		if c.UID != uid {
			return fmt.Errorf("uid %d is not the helper's uid %d", c.UID, uid)
		}
		return nil
	}
}

// Defaults for Config.
const (
	DefaultMaxConcurrent = 256
	// MaxCommandLen is the longest command text a helper accepts, in bytes.
	MaxCommandLen = 128 << 10
	// MaxMessageSize is the largest message a helper receives (a start message or a stdin
	// chunk), in bytes.
	MaxMessageSize = 1 << 20
)

// Config configures a Server. Role, Auditor, Authorize, Runner, Home, User and Path are
// required.
type Config struct {
	// Role is the helper's context: safety.RoleUser or safety.RoleRoot.
	Role safety.Role
	// Version is reported by Status.
	Version string
	Auditor Auditor
	// Services registers further gRPC services on the helper's server (the user helper's
	// Processes service); they get the same authentication, authorization and limits.
	Services func(grpc.ServiceRegistrar)
	// Authorize is called on every call with the peer's credentials.
	Authorize Authorizer
	// Runner builds each command (execrun.Plain, or the sandbox).
	Runner execrun.Runner
	// Gate, when not nil, may make the helper's verdict for a command stricter (never
	// looser), for example ask when the sandbox cannot confine commands on this machine. The
	// helper keeps the stricter of the two decisions whatever Gate returns. ctx is the
	// context the command was judged in (its resolved workspace and cwd).
	Gate func(v safety.Verdict, command string, ctx safety.Context) safety.Verdict
	// Policy is the helper's own extra ShellSafety policy; nil means none.
	Policy *safety.Policy
	// PolicySummary is one line describing the policy, reported by Status.
	PolicySummary string
	// AuditExport, when not nil, returns the audit export's counts for Status; nil means
	// the helper exports nowhere.
	AuditExport func() *helperv1.AuditExportStatus
	// Path is the PATH commands get (execrun.ValidatePath must accept it), before the
	// caller's safe entries are added (execrun.MergePath).
	Path string
	// EnvAllow are the variable names, beyond execrun.DefaultEnvAllow, that a request may add
	// to a command's environment (the helper's policy; execrun.MatchEnvAllow patterns).
	EnvAllow []string
	// Home and User describe the user commands run as (HOME, USER, LOGNAME, and the
	// ShellSafety context's home).
	Home, User string
	// RequireOwnedDirs makes the helper refuse a workspace the peer's uid does not own
	// (workspace.Validate's workspace.other-owner; the user helper).
	RequireOwnedDirs bool
	// StateDirs are S-Code state directories beyond workspace.StateDirs (the audit log's
	// directory when it was moved); no workspace may hold or lie inside one.
	StateDirs []string
	// Edits makes the helper serve ApplyPatch: file edits as the peer's own user (the user
	// helper, whose uid is the peer's). Without it ApplyPatch is refused.
	Edits bool
	// Team, when set (the root helper's [approvals] policy), makes requests whose plan needs
	// approval for one of its rules wait for a team approver (ListApprovals, DecideApproval).
	Team *rootpolicy.Approvers
	// ApprovalTTL is how long an approval stays valid after its plan was issued; 0 means
	// permission.DefaultTTL (5 minutes).
	ApprovalTTL time.Duration
	// MaxConcurrent bounds commands running at once (further requests wait for a free
	// slot); 0 means DefaultMaxConcurrent.
	MaxConcurrent int
	// DefaultTimeout applies when a request has none; 0 means no limit.
	DefaultTimeout time.Duration
	// MaxTimeout caps every command's timeout (a request asking for more, or for none,
	// gets MaxTimeout); 0 means no cap.
	MaxTimeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL; 0 means execrun.DefaultKillGrace.
	KillGrace time.Duration
	// Limits bound the connections and calls of each uid (limits.go); the zero value
	// takes the defaults.
	Limits Limits
	// Logger receives the helper's logs; nil means none.
	Logger *zap.Logger
}

func (c *Config) validate() error {
	switch {
	case c.Auditor == nil:
		return errors.New("helperd: no Auditor")
	case c.Authorize == nil:
		return errors.New("helperd: no Authorizer")
	case c.Runner == nil:
		return errors.New("helperd: no Runner")
	case c.Home == "" || c.User == "":
		return errors.New("helperd: Home and User are required")
	}
	if err := execrun.ValidatePath(c.Path); err != nil {
		return fmt.Errorf("helperd: %w", err)
	}
	if err := execrun.ValidateEnvAllow(c.EnvAllow); err != nil {
		return fmt.Errorf("helperd: %w", err)
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return nil
}
