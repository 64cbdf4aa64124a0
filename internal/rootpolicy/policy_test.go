package rootpolicy_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/rootpolicy"
	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/safety"
)

const good = `
[allow]
users = ["root", 1000]
groups = [4242, "0"]

[limits]
max_concurrent = 3
max_timeout = "20m"
default_timeout = "1m"

[timeouts]
kill_grace = "3s"
drain = "10s"

[exec]
path = "/usr/bin:/bin"
`

func TestParse(t *testing.T) {
	p, err := rootpolicy.Parse([]byte(good), "roothelper.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.UIDs, []uint32{0, 1000}) || !slices.Equal(p.GIDs, []uint32{4242, 0}) {
		t.Errorf("uids %v gids %v", p.UIDs, p.GIDs)
	}
	if p.MaxConcurrent != 3 || p.MaxTimeout != 20*time.Minute || p.DefaultTimeout != time.Minute || p.KillGrace != 3*time.Second || p.Drain != 10*time.Second || p.Path != "/usr/bin:/bin" {
		t.Errorf("policy %+v", p)
	}
	empty, err := rootpolicy.Parse(nil, "empty")
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.UIDs)+len(empty.GIDs) != 0 || empty.MaxConcurrent != rootpolicy.DefaultMaxConcurrent {
		t.Errorf("empty policy %+v", empty)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"unknown-key", "[allow]\nusers = [0]\nuid = [1]\n", "p.toml:3: unknown key \"allow.uid\""},
		{"unknown-table", "\n\n[allowed]\nusers = [0]\n", "p.toml:3"},
		{"syntax", "[allow\n", "p.toml:1"},
		{"bad-user", "[allow]\nusers = [\"no-such-user-s-code\"]\n", "no-such-user-s-code"},
		{"bad-group", "[allow]\ngroups = [\"no-such-group-s-code\"]\n", "no-such-group-s-code"},
		{"negative-uid", "[allow]\nusers = [-1]\n", "out of range"},
		{"bad-duration", "[limits]\nmax_timeout = \"soon\"\n", "max_timeout"},
		{"zero-duration", "[timeouts]\nkill_grace = \"0s\"\n", "kill_grace"},
		{"default-over-max", "[limits]\nmax_timeout = \"10s\"\ndefault_timeout = \"20s\"\n", "exceeds"},
		{"zero-concurrency", "[limits]\nmax_concurrent = 0\n", "max_concurrent"},
		{"relative-path", "[exec]\npath = \"bin:/usr/bin\"\n", "[exec] path"},
		{"safety-unknown-key", "[safety]\ndeny = [\"x\"]\n", "p.toml:2: unknown key \"safety.deny\""},
		{"safety-bad-decision", "[[safety.rule]]\nid = \"x\"\nmatch = [\"ls\"]\ndecision = \"maybe\"\n", "[safety]"},
		{"safety-star-not-last", "[[safety.rule]]\nid = \"x\"\nmatch = [\"*\", \"ls\"]\ndecision = \"deny\"\n", "[safety]"},
		{"safety-duplicate-id", "[[safety.rule]]\nid = \"x\"\nmatch = [\"ls\"]\ndecision = \"deny\"\n[[safety.rule]]\nid = \"x\"\nmatch = [\"ps\"]\ndecision = \"deny\"\n", "[safety]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rootpolicy.Parse([]byte(tc.data), "p.toml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestAuthorize(t *testing.T) {
	p, err := rootpolicy.Parse([]byte("[allow]\nusers = [1000]\ngroups = [4242]\n"), "p")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		c    peercred.Creds
		ok   bool
	}{
		{"uid", peercred.Creds{UID: 1000, GID: 1000}, true},
		{"primary-group", peercred.Creds{UID: 1001, GID: 4242}, true},
		{"supplementary-group", peercred.Creds{UID: 1001, GID: 1001, Groups: []uint32{4242}, GroupsKnown: true}, true},
		{"groups-unknown", peercred.Creds{UID: 1001, GID: 1001, Groups: []uint32{4242}}, false},
		{"root-not-named", peercred.Creds{UID: 0, GID: 0}, false},
		{"other", peercred.Creds{UID: 65534, GID: 65534, Groups: []uint32{100}, GroupsKnown: true}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := p.Authorize(tc.c); (err == nil) != tc.ok {
				t.Fatalf("Authorize = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestLoadFilePermissions(t *testing.T) {
	testenv.RequireRoot(t)
	cases := []struct {
		name    string
		setup   func(dir, file string) error
		wantErr bool
	}{
		{"safe", func(string, string) error { return nil }, false},
		{"group-writable-file", func(_, f string) error { return os.Chmod(f, 0o664) }, true},
		{"world-writable-file", func(_, f string) error { return os.Chmod(f, 0o646) }, true},
		{"file-not-root", func(_, f string) error { return os.Chown(f, 65534, 0) }, true},
		{"dir-world-writable", func(d, _ string) error { return os.Chmod(d, 0o777) }, true},
		{"dir-not-root", func(d, _ string) error { return os.Chown(d, 65534, 0) }, true},
		{"symlink", func(d, f string) error {
			os.Rename(f, f+".real")
			return os.Symlink(f+".real", f)
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "etc")
			os.Mkdir(dir, 0o755)
			file := filepath.Join(dir, "roothelper.toml")
			if err := os.WriteFile(file, []byte(good), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tc.setup(dir, file); err != nil {
				t.Fatal(err)
			}
			_, err := rootpolicy.Load(file)
			var ue *rootpolicy.UnsafeFileError
			if tc.wantErr != errors.As(err, &ue) {
				t.Fatalf("Load = %v, want unsafe=%v", err, tc.wantErr)
			}
		})
	}
}

// TestShippedDefault parses the policy make install puts in /etc/s-code: it must load and
// admit nobody.
func TestShippedDefault(t *testing.T) {
	data, err := os.ReadFile("../../deploy/roothelper.toml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := rootpolicy.Parse(data, "deploy/roothelper.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.UIDs)+len(p.GIDs) != 0 {
		t.Errorf("the default policy admits %v %v", p.UIDs, p.GIDs)
	}
	if err := p.Authorize(peercred.Creds{UID: 0, GID: 0}); err == nil {
		t.Error("the default policy admits root")
	}
}

// TestSafetyTable: the [safety] table becomes the root helper's ShellSafety policy.
func TestSafetyTable(t *testing.T) {
	p, err := rootpolicy.Parse([]byte(`
[allow]
users = [0]

[safety]
protected_paths = ["/srv/prod"]

[[safety.rule]]
id = "no-reboot"
match = ["reboot", "*"]
decision = "deny"
message = "Reboots are scheduled, not run by hand."
`), "p.toml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Safety == nil || len(p.Safety.Rules) != 1 || p.Safety.Rules[0].ID != "no-reboot" {
		t.Fatalf("safety policy %+v", p.Safety)
	}
	ctx := safety.Context{Role: safety.RoleRoot, Workspace: "/root", Cwd: "/root", Home: "/root", Policy: p.Safety}
	v := safety.Check("reboot now", ctx)
	if v.Decision != safety.Deny || v.Findings[len(v.Findings)-1].Rule != "policy.no-reboot" {
		t.Fatalf("reboot now: %+v", v)
	}
	if v := safety.Check("ls /srv", ctx); v.Decision == safety.Deny {
		t.Fatalf("ls /srv denied: %+v", v)
	}
}

// TestApprovals: the [approvals] table names the approvers group, the rules that need one
// (ids, classes, "*") and the timeout; bad tables are refused with the key.
func TestApprovals(t *testing.T) {
	p, err := rootpolicy.Parse([]byte("[approvals]\ngroup = 4242\nrules = [\"root.change\", \"network.*\"]\n"), "p.toml")
	if err != nil {
		t.Fatal(err)
	}
	a := p.Approvers
	if a == nil || a.GID != 4242 || a.Timeout != rootpolicy.DefaultApprovalTimeout {
		t.Fatalf("approvers = %+v", a)
	}
	for _, c := range []struct {
		rules []string
		want  bool
	}{
		{[]string{"root.change"}, true},
		{[]string{"write.tmp", "network.curl"}, true},
		{[]string{"network"}, false},
		{[]string{"networks.x"}, false},
		{[]string{"write.tmp"}, false},
		{nil, false},
	} {
		if got := a.Needs(c.rules); got != c.want {
			t.Errorf("Needs(%v) = %v, want %v", c.rules, got, c.want)
		}
	}
	if (*rootpolicy.Approvers)(nil).Needs([]string{"root.change"}) {
		t.Error("no [approvals] needs no approver")
	}
	if p, err := rootpolicy.Parse([]byte("[approvals]\ngroup = 1\nrules = [\"*\"]\ntimeout = \"30s\"\n"), "p.toml"); err != nil || !p.Approvers.Needs([]string{"x.y"}) || p.Approvers.Timeout != 30*time.Second {
		t.Fatalf("rules * and timeout: %+v %v", p, err)
	}
	for _, bad := range []struct{ src, want string }{
		{"[approvals]\nrules = [\"*\"]\n", "needs group"},
		{"[approvals]\ngroup = 1\n", "needs rules"},
		{"[approvals]\ngroup = 1\nrules = [\"net*\"]\n", "is not a rule id"},
		{"[approvals]\ngroup = 1\nrules = [\"*\"]\ntimeout = \"-1s\"\n", "timeout"},
		{"[approvals]\ngroup = 1\nrules = [\"*\"]\nwho = 3\n", "unknown key"},
		{"[approvals]\ngroup = \"no-such-group-s-code\"\nrules = [\"*\"]\n", "no-such-group-s-code"},
	} {
		if _, err := rootpolicy.Parse([]byte(bad.src), "p.toml"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("rootpolicy.Parse(%q) = %v, want %q", bad.src, err, bad.want)
		}
	}
}
