package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/safety"
)

func testHost() Host {
	return Host{
		Home:            "/home/ada",
		Workspace:       "/home/ada/src/proj",
		CacheRoot:       "/home/ada/.cache/s-code/tool-dependencies",
		SystemRoots:     []string{"/usr", "/etc", "/usr/lib", "/proc"},
		ToolRoots:       []string{"/usr/local/go", "/home/ada/src/proj/bin"},
		RuntimeRoots:    []string{"/home/ada/.nvm/versions"},
		HomeConfigFiles: []string{"/home/ada/.gitconfig"},
		Devices:         []string{"/dev/null", "/dev/tty"},
		SystemDenied:    []string{"/etc/shadow"},
	}
}

func TestNewProfile(t *testing.T) {
	p, err := NewProfile(testHost(), false)
	if err != nil {
		t.Fatal(err)
	}
	ns := "/home/ada/.cache/s-code/tool-dependencies/" + Namespace("/home/ada/src/proj")
	checks := []struct {
		name string
		ok   bool
	}{
		{"workspace is writable", slices.Contains(p.WritableRoots, "/home/ada/src/proj")},
		{"cache namespace is writable", slices.Contains(p.WritableRoots, ns) && p.CacheNamespace == ns},
		{"only the workspace and the namespace are writable", len(p.WritableRoots) == 2},
		{"temp dir is inside the namespace", p.TempDir == ns+"/tmp"},
		{"nested read-only root is folded into its parent", !slices.Contains(p.ReadOnlyRoots, "/usr/lib") && slices.Contains(p.ReadOnlyRoots, "/usr")},
		{"read-only root inside the workspace is dropped", !slices.Contains(p.ReadOnlyRoots, "/home/ada/src/proj/bin")},
		{"runtime root is read-only", slices.Contains(p.ReadOnlyRoots, "/home/ada/.nvm/versions")},
		{"home directory is not granted", !slices.Contains(p.ReadOnlyRoots, "/home/ada") && !slices.Contains(p.WritableRoots, "/home/ada")},
		{"ssh is denied", slices.Contains(p.DeniedPaths, "/home/ada/.ssh")},
		{"host npmrc is denied", slices.Contains(p.DeniedPaths, "/home/ada/.npmrc")},
		{"shadow is denied", slices.Contains(p.DeniedPaths, "/etc/shadow")},
		{"git hooks are protected", slices.Contains(p.ProtectedPaths, "/home/ada/src/proj/.git/hooks")},
		{"git config is protected", slices.Contains(p.ProtectedPaths, "/home/ada/src/proj/.git/config")},
		{"mcp.json is protected", slices.Contains(p.ProtectedPaths, "/home/ada/src/proj/.mcp.json")},
		{"network is off", !p.Network},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: profile %+v", c.name, p)
		}
	}
}

func TestNewProfileRefuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Host)
		want   error
	}{
		{"relative workspace", func(h *Host) { h.Workspace = "proj" }, ErrRelativePath},
		{"relative cache root", func(h *Host) { h.CacheRoot = "cache" }, ErrRelativePath},
		{"relative home", func(h *Host) { h.Home = "ada" }, ErrRelativePath},
		{"file system root", func(h *Host) { h.Workspace = "/" }, ErrBadWorkspace},
		{"above the home directory", func(h *Host) { h.Workspace = "/home" }, ErrBadWorkspace},
		// The home directory itself: its .bashrc and .ssh would be writable roots.
		{"the home directory", func(h *Host) { h.Workspace = h.Home }, ErrBadWorkspace},
		{"cache inside the workspace", func(h *Host) { h.CacheRoot = "/home/ada/src/proj/.cache" }, ErrCacheInWorkspace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := testHost()
			tt.change(&h)
			if _, err := NewProfile(h, false); !errors.Is(err, tt.want) {
				t.Fatalf("NewProfile = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCacheRoot(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
		err  error
	}{
		{"override", map[string]string{CacheDirEnv: "/srv/cache/", "HOME": "/home/ada"}, "/srv/cache", nil},
		{"relative override is refused", map[string]string{CacheDirEnv: "cache", "HOME": "/home/ada"}, "", ErrRelativePath},
		{"xdg", map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/home/ada"}, "/x/s-code/tool-dependencies", nil},
		{"relative xdg is ignored", map[string]string{"XDG_CACHE_HOME": "x", "HOME": "/home/ada"}, "/home/ada/.cache/s-code/tool-dependencies", nil},
		{"home fallback", map[string]string{"HOME": "/home/ada"}, "/home/ada/.cache/s-code/tool-dependencies", nil},
		{"no home", map[string]string{}, "", ErrRelativePath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CacheRoot(func(k string) string { return tt.env[k] })
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Fatalf("CacheRoot = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

// TestNamespaces checks that two workspaces get two namespaces and a symlinked path to a
// workspace gets the same one, through Discover as production uses it.
func TestNamespaces(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	a, b := filepath.Join(base, "a", "proj"), filepath.Join(base, "b", "proj")
	for _, d := range []string{home, a, b} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	ns := func(dir string) string {
		p, err := ForWorkspace(getenv, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		return p.CacheNamespace
	}
	if ns(a) == ns(b) {
		t.Errorf("two workspaces share the namespace %s", ns(a))
	}
	if ns(link) != ns(a) {
		t.Errorf("symlinked path got %s, the workspace %s", ns(link), ns(a))
	}
	if !strings.HasPrefix(filepath.Base(ns(a)), "proj-") {
		t.Errorf("namespace %s does not start with the workspace's base name", ns(a))
	}
	env[CacheDirEnv] = "relative/cache"
	if _, err := ForWorkspace(getenv, a, false); !errors.Is(err, ErrRelativePath) {
		t.Errorf("relative %s: err = %v, want ErrRelativePath", CacheDirEnv, err)
	}
	env[CacheDirEnv] = filepath.Join(link, "cache") // inside the workspace through a link
	if _, err := ForWorkspace(getenv, a, false); !errors.Is(err, ErrCacheInWorkspace) {
		t.Errorf("cache inside the workspace through a symlink: err = %v, want ErrCacheInWorkspace", err)
	}
}

func TestApplyEnv(t *testing.T) {
	p, err := NewProfile(testHost(), false)
	if err != nil {
		t.Fatal(err)
	}
	env := p.Env.ApplyEnv([]string{"PATH=/usr/bin", "GOPATH=/home/ada/go", "SSH_AUTH_SOCK=/tmp/agent", "NPM_CONFIG_USERCONFIG=/home/ada/.npmrc", "KEEP=1"})
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("variable %s set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{
		"PATH": "/usr/bin", "KEEP": "1", "GOPATH": p.CacheNamespace + "/go", "TMPDIR": p.TempDir,
		"npm_config_userconfig": p.CacheNamespace + "/npmrc", "npm_config_globalconfig": p.CacheNamespace + "/npmrc-global",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"SSH_AUTH_SOCK", "NPM_CONFIG_USERCONFIG"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s was not removed", k)
		}
	}
}

func TestParseProfile(t *testing.T) {
	p, err := NewProfile(testHost(), true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseProfile(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := back.Marshal()
	if string(b) != string(b2) {
		t.Fatalf("round trip changed the profile:\n%s\n%s", b, b2)
	}
	bad := []struct{ name, json string }{
		{"unknown field", `{"workspace":"/w","temp_dir":"/t","writable_roots":["/w"],"extra":1}`},
		{"relative root", `{"workspace":"/w","temp_dir":"/t","writable_roots":["w"]}`},
		{"unclean root", `{"workspace":"/w","temp_dir":"/t","read_only_roots":["/usr/../etc"]}`},
		{"no workspace", `{"temp_dir":"/t"}`},
		{"unknown protection", `{"workspace":"/w","temp_dir":"/t","protection":"none"}`},
		{"not json", `{`},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseProfile([]byte(tt.json)); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestGateVerdict(t *testing.T) {
	allow := safety.Verdict{Decision: safety.Allow}
	confined := Features{OS: "linux", LandlockABI: 7, Seccomp: true}
	if got := GateVerdict(allow, "ls", confined); got.Decision != safety.Allow || len(got.Findings) != 0 {
		t.Errorf("confined machine changed the verdict: %+v", got)
	}
	bare := Features{OS: "linux", Seccomp: true}
	bare.Problem = bare.problem()
	got := GateVerdict(allow, "ls", bare)
	if got.Decision != safety.Ask || len(got.Findings) != 1 || got.Findings[0].Rule != RuleUnconfined {
		t.Errorf("kernel without Landlock: verdict %+v, want ask with %s", got, RuleUnconfined)
	}
	deny := safety.Verdict{Decision: safety.Deny}
	if got := GateVerdict(deny, "rm -rf /", bare); got.Decision != safety.Deny {
		t.Errorf("deny weakened to %v", got.Decision)
	}
}

func TestCard(t *testing.T) {
	p, err := NewProfile(testHost(), false)
	if err != nil {
		t.Fatal(err)
	}
	bare := Features{OS: "linux", Seccomp: true}
	bare.Problem = bare.problem()
	var b strings.Builder
	if err := NewCard(p, bare, []string{"go", "build", "./..."}).Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"writable roots:", "/home/ada/src/proj", "denied paths", "/home/ada/.ssh", "protected paths", "network: off", "GOMODCACHE=", "set   TMPDIR=", "unset SSH_AUTH_SOCK", "kernel features: no Landlock, seccomp", "confinement: NO: the kernel has no Landlock", "command: go build ./...", "network request: none"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("card lacks %q:\n%s", want, b.String())
		}
	}
	if !strings.Contains(b.String(), "protection: landlock-entries") || !strings.Contains(b.String(), "git add and commit fail") {
		t.Errorf("card of a host without a mount namespace lacks the landlock-entries protection and its limits:\n%s", b.String())
	}
	h := testHost()
	h.MountNamespace = true
	pm, err := NewProfile(h, false)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := NewCard(pm, Features{OS: "linux", LandlockABI: 7, Seccomp: true}, nil).Write(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "protection: mount-namespace") || strings.Contains(b.String(), "git add and commit fail") || !strings.Contains(b.String(), "only ShellSafety verdicts guard it") {
		t.Errorf("card of a host with a mount namespace:\n%s", b.String())
	}
	js, err := json.Marshal(NewCard(pm, Features{OS: "linux", LandlockABI: 7, Seccomp: true}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"confined":true`) || !strings.Contains(string(js), `"landlock_abi":7`) || !strings.Contains(string(js), `"protection":"mount-namespace"`) {
		t.Errorf("card JSON: %s", js)
	}
}

// TestGateVerdictZero: a zero verdict stays deny through the gate, on a machine that
// confines and on one that does not.
func TestGateVerdictZero(t *testing.T) {
	for _, f := range []Features{{OS: "linux", LandlockABI: 7}, {OS: "linux", Problem: "no Landlock"}} {
		if got := GateVerdict(safety.Verdict{}, "ls", f); got.Decision != safety.Deny {
			t.Errorf("GateVerdict(zero, %+v) = %v, want deny", f, got.Decision)
		}
	}
}
