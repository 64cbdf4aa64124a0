package rootpolicy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/safety"
)

// DefaultPath is where the root helper reads its policy unless told otherwise.
const DefaultPath = "/etc/s-code/roothelper.toml"

// Defaults for the limits and timeouts a policy file leaves out.
const (
	DefaultMaxConcurrent  = 8
	DefaultMaxTimeout     = time.Hour
	DefaultDefaultTimeout = 10 * time.Minute
	DefaultKillGrace      = 5 * time.Second
	DefaultDrain          = 30 * time.Second
	// DefaultApprovalTimeout is how long a request that needs a team approver waits.
	DefaultApprovalTimeout = 10 * time.Minute
	maxPolicySize          = 1 << 20
)

// Policy is a loaded root helper policy.
type Policy struct {
	// UIDs and GIDs are the callers the root helper accepts: a peer whose uid is in UIDs, or
	// whose primary or supplementary group (peer credentials) is in GIDs.
	UIDs []uint32
	GIDs []uint32
	// MaxConcurrent bounds commands running at once.
	MaxConcurrent int
	// DefaultTimeout applies to a request without one; MaxTimeout caps every request (a
	// request asking for more gets MaxTimeout).
	DefaultTimeout, MaxTimeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL; Drain is how long running commands
	// may finish after SIGTERM to the helper.
	KillGrace, Drain time.Duration
	// Path is the PATH commands get (before the caller's root-owned entries are added,
	// see execrun.MergePath).
	Path string
	// EnvAllow are the variable names, beyond execrun.DefaultEnvAllow, that a request may
	// add to a command's environment ([exec] env_allow; execrun.MatchEnvAllow patterns).
	EnvAllow []string
	// Safety is the extra ShellSafety policy of the [safety] table; nil means none.
	Safety *safety.Policy
	// SocketGroup is the group that owns the socket when the helper creates it; -1 keeps it.
	SocketGroup int
	// Approvers is the [approvals] table: who approves which requests; nil means no team
	// approvals (the requester's own approval is enough).
	Approvers *Approvers
}

// Approvers is the [approvals] table of a policy: a request whose plan needs approval for
// one of Rules waits, up to Timeout, for a person in group GID other than the requester.
type Approvers struct {
	// GID is the approvers group; Group is how the policy named it (for messages).
	GID   uint32
	Group string
	// Rules are rule ids ("root.change") or classes ("network.*", every id with that prefix
	// and a dot), or "*" for every request that needs approval.
	Rules []string
	// Timeout bounds the wait (default DefaultApprovalTimeout).
	Timeout time.Duration
}

// Needs reports whether a plan needing approval for rules needs a team approver.
func (a *Approvers) Needs(rules []string) bool {
	if a == nil {
		return false
	}
	for _, want := range a.Rules {
		for _, r := range rules {
			if want == "*" || r == want || strings.HasSuffix(want, ".*") && strings.HasPrefix(r, want[:len(want)-1]) {
				return true
			}
		}
	}
	return false
}

// file is the TOML layout of the policy file (docs in deploy/roothelper.toml).
type file struct {
	Allow struct {
		Users  []any `toml:"users"`
		Groups []any `toml:"groups"`
	} `toml:"allow"`
	Limits struct {
		MaxConcurrent  *int   `toml:"max_concurrent"`
		MaxTimeout     string `toml:"max_timeout"`
		DefaultTimeout string `toml:"default_timeout"`
	} `toml:"limits"`
	Timeouts struct {
		KillGrace string `toml:"kill_grace"`
		Drain     string `toml:"drain"`
	} `toml:"timeouts"`
	Exec struct {
		Path     string   `toml:"path"`
		EnvAllow []string `toml:"env_allow"`
	} `toml:"exec"`
	Socket struct {
		Group any `toml:"group"`
	} `toml:"socket"`
	Safety    *safetyTable `toml:"safety"`
	Approvals *struct {
		Group   any      `toml:"group"`
		Rules   []string `toml:"rules"`
		Timeout string   `toml:"timeout"`
	} `toml:"approvals"`
}

// safetyTable is the [safety] table: the ShellSafety policy format (docs/policy.md) inside the
// root helper's policy, rules as [[safety.rule]].
type safetyTable struct {
	ProtectedPaths  []string          `toml:"protected_paths,omitempty"`
	CredentialPaths []string          `toml:"credential_paths,omitempty"`
	Rules           []safetyRuleTable `toml:"rule,omitempty"`
}

type safetyRuleTable struct {
	ID       string   `toml:"id"`
	Match    []string `toml:"match"`
	Decision string   `toml:"decision"`
	Message  string   `toml:"message,omitempty"`
}

// UnsafeFileError reports a policy file or directory that someone other than root could
// have written.
type UnsafeFileError struct {
	Path   string
	Reason string
}

// Error names the file, why it is unsafe, and the rule.
func (e *UnsafeFileError) Error() string {
	return fmt.Sprintf("policy %s is unsafe: %s (it must be root-owned and not writable by group or others)", e.Path, e.Reason)
}

// Load reads and parses the policy at path after checking that the file and its directory
// are owned by uid 0 and not writable by group or others, and that the file is a regular
// file and not a symbolic link (sshd's StrictModes, for the same reason: a file another
// user could write would let them run commands as root). It fails with *UnsafeFileError,
// a parse error naming the line, or an error for a user or group that does not exist.
func Load(path string) (*Policy, error) {
	data, err := readSafe(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

func readSafe(path string) ([]byte, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("policy path %q is not absolute", path)
	}
	dir := filepath.Dir(path)
	dfi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("policy directory: %w", err)
	}
	if err := checkOwner(dir, dfi); err != nil {
		return nil, err
	}
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat policy: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &UnsafeFileError{Path: path, Reason: "not a regular file"}
	}
	if err := checkOwner(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPolicySize+1))
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	if len(data) > maxPolicySize {
		return nil, fmt.Errorf("policy %s is larger than %d bytes", path, maxPolicySize)
	}
	return data, nil
}

// Parse parses policy data; name is used in errors. Unknown keys are errors naming their
// line; so are bad durations, unknown users and groups, and a [safety] table this build
// cannot enforce.
func Parse(data []byte, name string) (*Policy, error) {
	var f file
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var sm *toml.StrictMissingError
		var de *toml.DecodeError
		switch {
		case errors.As(err, &sm):
			var parts []string
			for _, e := range sm.Errors {
				row, _ := e.Position()
				parts = append(parts, fmt.Sprintf("%s:%d: unknown key %q", name, row, strings.Join(e.Key(), ".")))
			}
			return nil, fmt.Errorf("policy: %s", strings.Join(parts, "; "))
		case errors.As(err, &de):
			row, col := de.Position()
			return nil, fmt.Errorf("policy: %s:%d:%d: %w", name, row, col, err)
		}
		return nil, fmt.Errorf("policy: %s: %w", name, err)
	}
	p := &Policy{MaxConcurrent: DefaultMaxConcurrent, SocketGroup: -1, Path: execrun.SafePath}
	var err error
	for _, u := range f.Allow.Users {
		uid, err := lookupID(u, "user")
		if err != nil {
			return nil, fmt.Errorf("policy: %s: [allow] users: %w", name, err)
		}
		p.UIDs = append(p.UIDs, uid)
	}
	for _, g := range f.Allow.Groups {
		gid, err := lookupID(g, "group")
		if err != nil {
			return nil, fmt.Errorf("policy: %s: [allow] groups: %w", name, err)
		}
		p.GIDs = append(p.GIDs, gid)
	}
	if f.Limits.MaxConcurrent != nil {
		if *f.Limits.MaxConcurrent < 1 || *f.Limits.MaxConcurrent > 4096 {
			return nil, fmt.Errorf("policy: %s: [limits] max_concurrent %d is not between 1 and 4096", name, *f.Limits.MaxConcurrent)
		}
		p.MaxConcurrent = *f.Limits.MaxConcurrent
	}
	durations := []struct {
		key string
		val string
		dst *time.Duration
		def time.Duration
	}{
		{"[limits] max_timeout", f.Limits.MaxTimeout, &p.MaxTimeout, DefaultMaxTimeout},
		{"[limits] default_timeout", f.Limits.DefaultTimeout, &p.DefaultTimeout, DefaultDefaultTimeout},
		{"[timeouts] kill_grace", f.Timeouts.KillGrace, &p.KillGrace, DefaultKillGrace},
		{"[timeouts] drain", f.Timeouts.Drain, &p.Drain, DefaultDrain},
	}
	for _, d := range durations {
		*d.dst = d.def
		if d.val == "" {
			continue
		}
		if *d.dst, err = time.ParseDuration(d.val); err != nil || *d.dst <= 0 {
			return nil, fmt.Errorf("policy: %s: %s %q is not a positive duration like \"30s\"", name, d.key, d.val)
		}
	}
	if p.DefaultTimeout > p.MaxTimeout {
		return nil, fmt.Errorf("policy: %s: [limits] default_timeout exceeds max_timeout", name)
	}
	if f.Exec.Path != "" {
		if err := execrun.ValidatePath(f.Exec.Path); err != nil {
			return nil, fmt.Errorf("policy: %s: [exec] path: %w", name, err)
		}
		p.Path = f.Exec.Path
	}
	if err := execrun.ValidateEnvAllow(f.Exec.EnvAllow); err != nil {
		return nil, fmt.Errorf("policy: %s: [exec] env_allow: %w", name, err)
	}
	p.EnvAllow = f.Exec.EnvAllow
	if f.Socket.Group != nil {
		gid, err := lookupID(f.Socket.Group, "group")
		if err != nil {
			return nil, fmt.Errorf("policy: %s: [socket] group: %w", name, err)
		}
		p.SocketGroup = int(gid)
	}
	if a := f.Approvals; a != nil {
		if a.Group == nil {
			return nil, fmt.Errorf("policy: %s: [approvals] needs group, the approvers group", name)
		}
		gid, err := lookupID(a.Group, "group")
		if err != nil {
			return nil, fmt.Errorf("policy: %s: [approvals] group: %w", name, err)
		}
		if len(a.Rules) == 0 {
			return nil, fmt.Errorf("policy: %s: [approvals] needs rules: the rule ids or classes (\"root.change\", \"network.*\", \"*\") that need an approver", name)
		}
		for _, r := range a.Rules {
			if r == "" || strings.ContainsAny(r, " \t") || strings.Contains(strings.TrimSuffix(r, ".*"), "*") && r != "*" {
				return nil, fmt.Errorf("policy: %s: [approvals] rules: %q is not a rule id, a class like \"network.*\", or \"*\"", name, r)
			}
		}
		p.Approvers = &Approvers{GID: gid, Group: fmt.Sprint(a.Group), Rules: a.Rules, Timeout: DefaultApprovalTimeout}
		if a.Timeout != "" {
			if p.Approvers.Timeout, err = time.ParseDuration(a.Timeout); err != nil || p.Approvers.Timeout <= 0 || p.Approvers.Timeout > 24*time.Hour {
				return nil, fmt.Errorf("policy: %s: [approvals] timeout %q is not a duration between 1s and 24h like \"10m\"", name, a.Timeout)
			}
		}
	}
	if f.Safety != nil {
		// The table is re-encoded on its own and parsed by ShellSafety, which checks ids,
		// decisions and match lists (unknown keys were refused above, with their line).
		b, err := toml.Marshal(f.Safety)
		if err != nil {
			return nil, fmt.Errorf("policy: %s: [safety]: %w", name, err)
		}
		if p.Safety, err = safety.ParsePolicy(b); err != nil {
			var pe *safety.PolicyError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("policy: %s: [safety]: %s", name, pe.Reason)
			}
			return nil, fmt.Errorf("policy: %s: [safety]: %w", name, err)
		}
	}
	return p, nil
}

// lookupID turns a user or group given by name or number into its id.
func lookupID(v any, kind string) (uint32, error) {
	switch x := v.(type) {
	case int64:
		if x < 0 || x > 1<<32-2 {
			return 0, fmt.Errorf("%s id %d out of range", kind, x)
		}
		return uint32(x), nil
	case string:
		if n, err := strconv.ParseUint(x, 10, 32); err == nil {
			return uint32(n), nil
		}
		var idStr string
		if kind == "user" {
			u, err := user.Lookup(x)
			if err != nil {
				return 0, fmt.Errorf("user %q: %w", x, err)
			}
			idStr = u.Uid
		} else {
			g, err := user.LookupGroup(x)
			if err != nil {
				return 0, fmt.Errorf("group %q: %w", x, err)
			}
			idStr = g.Gid
		}
		n, err := strconv.ParseUint(idStr, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%s %q has id %q: %w", kind, x, idStr, err)
		}
		return uint32(n), nil
	}
	return 0, fmt.Errorf("%s %v is neither a name nor a number", kind, v)
}

// Authorize returns nil when c's uid is in UIDs or c is in one of GIDs (its primary group,
// or a supplementary group the kernel reported), and an error naming the caller otherwise.
func (p *Policy) Authorize(c peercred.Creds) error {
	for _, u := range p.UIDs {
		if c.UID == u {
			return nil
		}
	}
	for _, g := range p.GIDs {
		if c.InGroup(g) {
			return nil
		}
	}
	if len(p.UIDs) == 0 && len(p.GIDs) == 0 {
		return fmt.Errorf("its policy admits nobody (the default): an admin must name uid %d or one of its groups in [allow] of the policy file", c.UID)
	}
	return fmt.Errorf("uid %d (gid %d) is not named in [allow] of its policy", c.UID, c.GID)
}

// Summary describes the policy in one line, for Status and logs.
func (p *Policy) Summary() string {
	return fmt.Sprintf("users=%v groups=%v max_concurrent=%d default_timeout=%v max_timeout=%v", p.UIDs, p.GIDs, p.MaxConcurrent, p.DefaultTimeout, p.MaxTimeout)
}
