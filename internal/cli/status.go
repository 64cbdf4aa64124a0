package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/version"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// statusReport is what `s-code status` found: one entry a helper, the kernel's sandbox
// features, and hints for what is missing. It is also the --json output.
type statusReport struct {
	// Client is this s-code's version.
	Client string `json:"client_version"`
	// Helpers holds the user helper, then the root helper.
	Helpers []helperStatus `json:"helpers"`
	// Sandbox is what this kernel offers for confining commands (as s-code sandbox shows).
	Sandbox sandbox.Features `json:"sandbox"`
	// Confined reports whether commands can be confined here.
	Confined bool `json:"confined"`
	// InSandbox reports whether this s-code process itself runs inside an S-Code sandbox
	// (then the helpers refuse it, as they must).
	InSandbox bool `json:"in_sandbox"`
	// Mode is the default permission mode of a session (s-code run without --mode):
	// "manual", "accept-edits" or "workspace"; ModeSource says where it comes from: the
	// configuration file, or "default". ModeError says why the configuration is unusable.
	Mode       string `json:"mode"`
	ModeSource string `json:"mode_source"`
	ModeError  string `json:"mode_error,omitempty"`
	configFile string // the configuration file's path, for the plain output
	// Hints are things to do or know, one sentence each.
	Hints []string `json:"hints"`
}

// helperStatus is one helper as seen from this process: answering with its Status, or not,
// with the reason.
type helperStatus struct {
	Role   string `json:"role"` // "user" or "root": the helper asked for
	Socket string `json:"socket"`
	// State is "answering", "refused" (it answers but refuses this caller), "absent"
	// (nothing listens), "not-answering" (something listens but never answered), or "error".
	State string `json:"state"`
	// Error says why the helper is not answering; empty when it answers.
	Error string `json:"error,omitempty"`

	// The helper's Status reply (when State is "answering").
	Version       string  `json:"version,omitempty"`
	UptimeSeconds float64 `json:"uptime_seconds,omitempty"`
	HelperRole    string  `json:"helper_role,omitempty"` // the role the helper reports
	PolicySummary string  `json:"policy_summary,omitempty"`
	AuditHeadSeq  uint64  `json:"audit_head_seq,omitempty"`
	AuditHeadHash string  `json:"audit_head_hash,omitempty"`
	// AuditSealing says the helper's audit log writes forward-secure seals; AuditSeals is
	// how many it has written, AuditUnsealed how many records follow the last one.
	AuditSealing  bool   `json:"audit_sealing"`
	AuditSeals    uint64 `json:"audit_seals"`
	AuditUnsealed uint64 `json:"audit_unsealed"`
	Running       int32  `json:"running"`
	// AuditExport is the helper's export of audit records to OpenTelemetry; absent when it
	// exports nowhere.
	AuditExport *auditExportStatus `json:"audit_export,omitempty"`
}

// auditExportStatus is a helper's audit export as its Status reports it (docs/audit.md).
type auditExportStatus struct {
	Endpoint    string `json:"endpoint"`
	Protocol    string `json:"protocol"`
	Backlog     uint64 `json:"backlog"`      // records waiting for export
	Exported    uint64 `json:"exported"`     // records the endpoint accepted
	ExportedSeq uint64 `json:"exported_seq"` // seq of the last one
	Failed      uint64 `json:"failed"`       // failed attempts (each retried)
	Dropped     uint64 `json:"dropped"`      // records the full queue did not take
	LastError   string `json:"last_error,omitempty"`
}

// Helper states of helperStatus.State.
const (
	stateAnswering    = "answering"
	stateRefused      = "refused"
	stateAbsent       = "absent"
	stateNotAnswering = "not-answering"
	stateError        = "error"
)

func newStatusCmd(streams IO) *cobra.Command {
	var (
		asJSON             bool
		userSock, rootSock string
		timeout            time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show which helpers answer, their versions, uptime, policy and audit head, and the sandbox's kernel features",
		Long: `status asks the user helper and the root helper for their Status (version, uptime, role,
policy summary, last audit record, commands running) over their sockets, probes the kernel's
sandbox features, and says what to do about what is missing.

Exit status: 0 when at least one helper answers; 1 when none does; 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if timeout <= 0 {
				return usagef("--timeout must be positive")
			}
			rep := gatherStatus(cmd.Context(), userSock, rootSock, timeout)
			var err error
			if asJSON {
				err = writeJSON(streams.Out, rep)
			} else {
				err = writeStatusReport(streams.Out, rep)
			}
			if err != nil {
				return err
			}
			for _, h := range rep.Helpers {
				if h.State == stateAnswering {
					return nil
				}
			}
			return &ExitError{Code: ExitFailure}
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	fl.StringVar(&userSock, "socket", "", "the user helper's socket `PATH` (default $S_CODE_USER_SOCKET or $XDG_RUNTIME_DIR/s-code/user.sock)")
	fl.StringVar(&rootSock, "root-socket", "", "the root helper's socket `PATH` (default $S_CODE_ROOT_SOCKET or /run/s-code/root.sock)")
	fl.DurationVar(&timeout, "timeout", 3*time.Second, "how long to wait for each helper's answer")
	return cmd
}

// gatherStatus asks both helpers and the kernel; it never fails: what it cannot learn is in
// the report.
func gatherStatus(ctx context.Context, userSock, rootSock string, timeout time.Duration) *statusReport {
	rep := &statusReport{Client: version.Version, Sandbox: sandbox.ProbeFeatures(), Hints: []string{}}
	rep.Confined = rep.Sandbox.Confines()
	rep.Mode, rep.ModeSource = permission.Manual.String(), "default"
	if path, err := configPath(); err == nil {
		rep.configFile = path
		switch c, err := loadUserConfig(); {
		case err != nil:
			rep.ModeError = err.Error()
			rep.Hints = append(rep.Hints, "the configuration file is unusable, so s-code run refuses to start without --mode: "+err.Error())
		case c.Mode != "":
			rep.Mode, rep.ModeSource = c.Mode, path
		}
	}
	if in, err := sandbox.ProcessConfined(os.Getpid()); err == nil {
		rep.InSandbox = in
	}
	for _, r := range []struct {
		role   helperclient.Role
		socket string
	}{{helperclient.User, userSock}, {helperclient.Root, rootSock}} {
		rep.Helpers = append(rep.Helpers, askHelper(ctx, r.role, r.socket, timeout, rep.InSandbox))
	}
	user, root := rep.Helpers[0], rep.Helpers[1]
	switch {
	case rep.InSandbox:
		rep.Hints = append(rep.Hints, "this process runs inside an S-Code sandbox: the helpers refuse callers from inside a sandbox, so not reaching them here is expected")
	case user.State == stateAbsent:
		sock := user.Socket
		if sock == "" {
			sock = "PATH` and `export " + helperclient.UserSocketEnv + "=PATH"
		}
		rep.Hints = append(rep.Hints, "no user helper (s-code run needs one): start it with `systemctl --user enable --now s-code-userhelper.socket`, or by hand with `s-code-userhelper --listen "+sock+"`")
	case user.State == stateNotAnswering:
		rep.Hints = append(rep.Hints, "something listens on "+user.Socket+" but does not answer as a helper: see `journalctl --user -u s-code-userhelper`, or the terminal that started it")
	}
	if !rep.InSandbox {
		switch root.State {
		case stateAbsent:
			rep.Hints = append(rep.Hints, "no root helper (needed only for admin work, s-code run --root): an admin installs a policy naming the admitted users in /etc/s-code/roothelper.toml and runs `systemctl enable --now s-code-roothelper.socket`")
		case stateRefused:
			rep.Hints = append(rep.Hints, "the root helper answers but does not admit you: an admin must name you (or one of your groups) in [allow] of /etc/s-code/roothelper.toml")
		}
	}
	if !rep.Confined {
		rep.Hints = append(rep.Hints, "this kernel cannot confine commands ("+rep.Sandbox.Problem+"): the user helper turns every verdict into ask (rule sandbox.unconfined)")
	}
	return rep
}

// askHelper dials one helper and asks its Status. inSandbox says this process runs inside an
// S-Code sandbox, which hides the helpers' sockets: an absent helper then gets no advice to
// start one, since one may well be running outside.
func askHelper(ctx context.Context, role helperclient.Role, socket string, timeout time.Duration, inSandbox bool) helperStatus {
	h := helperStatus{Role: role.String(), Socket: socket}
	if h.Socket == "" {
		s, err := helperclient.DefaultSocket(role)
		if err != nil {
			h.State, h.Error = stateAbsent, err.Error()
			return h
		}
		h.Socket = s
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := helperclient.Dial(ctx, role, h.Socket)
	if err != nil {
		var nh *helperclient.NoHelperError
		var na *helperclient.NoAnswerError
		switch {
		case errors.As(err, &nh):
			h.State = stateAbsent
			if inSandbox {
				h.Error = fmt.Sprintf("%s cannot be reached from inside the sandbox (%v): expected, whether or not a helper runs (the sandbox hides the helpers' sockets)", h.Socket, nh.Err)
				return h
			}
		case errors.As(err, &na):
			h.State = stateNotAnswering
		default:
			h.State = stateError // an impostor, unreadable peer credentials
		}
		h.Error = err.Error()
		return h
	}
	defer c.Close()
	st, err := c.API().Status(ctx, &helperv1.StatusRequest{})
	if err != nil {
		h.State, h.Error = stateError, err.Error()
		if s, ok := status.FromError(err); ok {
			h.Error = s.Message()
			if s.Code() == codes.PermissionDenied || s.Code() == codes.Unauthenticated {
				h.State = stateRefused
			}
		}
		return h
	}
	h.State = stateAnswering
	h.Version = st.GetVersion()
	h.UptimeSeconds = st.GetUptime().AsDuration().Seconds()
	switch st.GetRole() {
	case helperv1.Role_ROLE_USER:
		h.HelperRole = "user"
	case helperv1.Role_ROLE_ROOT:
		h.HelperRole = "root"
	default:
		h.HelperRole = "unknown"
	}
	h.PolicySummary = st.GetPolicySummary()
	h.AuditHeadSeq, h.AuditHeadHash = st.GetAuditHeadSeq(), st.GetAuditHeadHash()
	h.AuditSealing, h.AuditSeals, h.AuditUnsealed = st.GetAuditSealing(), st.GetAuditSeals(), st.GetAuditUnsealed()
	h.Running = st.GetRunning()
	if x := st.GetAuditExport(); x != nil {
		h.AuditExport = &auditExportStatus{Endpoint: x.GetEndpoint(), Protocol: x.GetProtocol(), Backlog: x.GetBacklog(),
			Exported: x.GetExported(), ExportedSeq: x.GetExportedSeq(), Failed: x.GetFailed(), Dropped: x.GetDropped(), LastError: x.GetLastError()}
	}
	return h
}

// writeStatusReport prints rep for a person.
func writeStatusReport(w io.Writer, rep *statusReport) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "s-code %s\n", rep.Client)
	for _, h := range rep.Helpers {
		where := ""
		if h.Socket != "" {
			where = " on " + displayPath(h.Socket)
		}
		fmt.Fprintf(&sb, "%s helper: %s%s\n", h.Role, h.State, where)
		if h.State != stateAnswering {
			fmt.Fprintf(&sb, "  %s\n", oneLine(h.Error))
			continue
		}
		head := "no records yet"
		if h.AuditHeadSeq > 0 {
			head = fmt.Sprintf("seq %d, hash %s", h.AuditHeadSeq, short(h.AuditHeadHash))
		}
		fmt.Fprintf(&sb, "  version     %s\n", h.Version)
		fmt.Fprintf(&sb, "  uptime      %s\n", (time.Duration(h.UptimeSeconds * float64(time.Second))).Round(time.Second))
		fmt.Fprintf(&sb, "  role        %s\n", h.HelperRole)
		fmt.Fprintf(&sb, "  policy      %s\n", oneLine(h.PolicySummary))
		fmt.Fprintf(&sb, "  audit head  %s\n", head)
		if h.AuditSealing {
			fmt.Fprintf(&sb, "  seals       %d written, %d records unsealed (s-code audit verify --key checks them)\n", h.AuditSeals, h.AuditUnsealed)
		} else {
			sb.WriteString("  seals       none (the log keeps no seal key)\n")
		}
		fmt.Fprintf(&sb, "  running     %d\n", h.Running)
		if x := h.AuditExport; x != nil {
			fmt.Fprintf(&sb, "  export      %s over %s: %d exported (to seq %d), backlog %d, %d failed attempts, %d dropped\n",
				x.Endpoint, x.Protocol, x.Exported, x.ExportedSeq, x.Backlog, x.Failed, x.Dropped)
			if x.LastError != "" {
				fmt.Fprintf(&sb, "  export error %s\n", oneLine(x.LastError))
			}
		}
	}
	conf := "yes"
	if !rep.Confined {
		conf = "NO: " + rep.Sandbox.Problem
	}
	fmt.Fprintf(&sb, "sandbox: %s; confinement: %s\n", rep.Sandbox.Describe(), conf)
	switch {
	case rep.ModeError != "":
		sb.WriteString("mode: unknown (the configuration file is unusable)\n")
	case rep.ModeSource == "default":
		fmt.Fprintf(&sb, "mode: %s (the default; set mode in %s, or --mode)\n", rep.Mode, displayPath(rep.configFile))
	default:
		fmt.Fprintf(&sb, "mode: %s (from %s)\n", rep.Mode, displayPath(rep.ModeSource))
	}
	if rep.InSandbox {
		sb.WriteString("this process: inside an S-Code sandbox\n")
	}
	for _, hint := range rep.Hints {
		fmt.Fprintf(&sb, "hint: %s\n", hint)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// short returns the first 16 hex digits of a hash, for plain output.
func short(hash string) string {
	if len(hash) > 16 {
		return hash[:16] + "…"
	}
	return hash
}
