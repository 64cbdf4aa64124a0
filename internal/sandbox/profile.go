package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/s-code-dev/s-code/internal/workspace"
	"github.com/s-code-dev/s-code/safety"
)

// Profile is the sandbox profile a command runs under. Every path is absolute and clean;
// NewProfile resolves symbolic links in the workspace and cache paths, so that one workspace
// reached through two paths gets one profile.
//
// The launcher turns it into kernel rules: on Linux each path becomes Landlock rules (an
// allow-list, so a denied path inside a granted root is carved out by granting the root's
// other entries one by one), and the protected paths become read-only bind mounts in the
// command's own mount namespace, or, where there is none, holes carved out like the denied
// ones (see Protection and docs/sandbox.md); on macOS it becomes a Seatbelt profile (see
// Seatbelt).
type Profile struct {
	// Workspace is the canonical workspace root (symbolic links resolved).
	Workspace string `json:"workspace"`
	// WritableRoots may be read and written: the workspace, the private temporary directory
	// and the workspace's dependency cache namespace.
	WritableRoots []string `json:"writable_roots"`
	// ReadOnlyRoots may be read and executed but not written: system directories, toolchains
	// and version-scoped runtime roots.
	ReadOnlyRoots []string `json:"read_only_roots"`
	// Devices are device files and directories that may be read, written and controlled
	// (ioctl), such as /dev/null and the terminal.
	Devices []string `json:"devices"`
	// DeniedPaths may be neither read nor written even where they lie inside a granted root:
	// credential stores such as ~/.ssh and ~/.aws.
	DeniedPaths []string `json:"denied_paths"`
	// HiddenPaths are S-Code's runtime, state and configuration directories and the user's
	// runtime directory (see Host.StateDirs): they are denied paths too, and with
	// ProtectionMountNamespace the launcher also mounts an empty read-only file system over
	// each (a file: /dev/null), so no socket in them can be reached by connect(2), which
	// Landlock does not govern before ABI 9.
	HiddenPaths []string `json:"hidden_paths,omitempty"`
	// ProtectedPaths lie inside a writable root but stay read-only: Git hooks and
	// configuration, and agent and IDE control files, which run code outside the sandbox.
	ProtectedPaths []string `json:"protected_paths"`
	// Network reports whether the command may use Internet sockets. It is true only when a
	// person approved network for this one command.
	Network bool `json:"network"`
	// TempDir is the private temporary directory; TMPDIR points at it.
	TempDir string `json:"temp_dir"`
	// CacheNamespace is the workspace's private dependency cache directory.
	CacheNamespace string `json:"cache_namespace"`
	// Caches lists the private dependency caches and the variables that point at them.
	Caches []Cache `json:"caches"`
	// Env is the environment changes the profile makes.
	Env EnvChanges `json:"env"`
	// Protection is how the launcher keeps ProtectedPaths read-only on Linux:
	// ProtectionMountNamespace (read-only bind mounts in a private mount namespace, the
	// workspace tree writable as a whole; the launcher falls back to ProtectionLandlockEntries
	// when the kernel refuses the namespace) or ProtectionLandlockEntries (the workspace root
	// read-only and its other entries granted one by one). Empty means
	// ProtectionLandlockEntries. Seatbelt (macOS) ignores it: it can subtract rules.
	Protection string `json:"protection,omitempty"`
	// AllowUnconfined reports whether a person approved running the command although the
	// kernel cannot confine its file access (no Landlock). Without it the launcher refuses.
	AllowUnconfined bool `json:"allow_unconfined,omitempty"`
	// PIDNamespace reports whether the launcher runs as the init (pid 1) of a new PID
	// namespace (pid_namespaces(7)), so that no process of the command outlives it: when the
	// command's first process ends, the launcher kills the rest, and when the launcher ends
	// (or is killed), the kernel kills every process left in the namespace. Command starts
	// the launcher so (see LauncherSysProcAttr); a launcher asked for it that is not pid 1
	// refuses to run the command.
	PIDNamespace bool `json:"pid_namespace,omitempty"`
}

// The values of Profile.Protection.
const (
	// ProtectionMountNamespace keeps the protected paths read-only with bind mounts in a
	// private mount namespace; Landlock grants the workspace tree as a whole.
	ProtectionMountNamespace = "mount-namespace"
	// ProtectionLandlockEntries keeps the protected paths read-only with Landlock alone: the
	// workspace root (and .git) is read-only and each other entry is granted on its own, so
	// no entry can be created, removed or renamed at the top level or directly in .git.
	ProtectionLandlockEntries = "landlock-entries"
)

// Cache is one private dependency cache of a workspace.
type Cache struct {
	// Tool is the tool the cache serves: "cargo", "go" or "npm".
	Tool string `json:"tool"`
	// Var is the environment variable that points the tool at Path.
	Var string `json:"var"`
	// Path is the cache directory inside the workspace's cache namespace.
	Path string `json:"path"`
}

// EnvChanges is what the profile changes in a command's environment.
type EnvChanges struct {
	// Set lists the variables set, in the order they are applied.
	Set []EnvVar `json:"set"`
	// Unset lists the variables removed (before Set is applied).
	Unset []string `json:"unset"`
}

// EnvVar is one environment variable.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Host is what NewProfile needs to know about the machine; Discover fills it from the real
// environment, tests fill it by hand. NewProfile itself does no I/O.
type Host struct {
	// Home is the user's home directory (absolute).
	Home string
	// Workspace is the canonical workspace root (absolute, symbolic links resolved).
	Workspace string
	// CacheRoot is the canonical tool-dependencies directory (see CacheRoot).
	CacheRoot string
	// SystemRoots are the read-only system directories that exist on this machine.
	SystemRoots []string
	// ToolRoots are further read-only roots: the Go root, PATH directories outside the home
	// directory, the Git directories of a linked worktree.
	ToolRoots []string
	// RuntimeRoots are the version-scoped runtime roots under the home directory that exist
	// (see runtimeRootCandidates).
	RuntimeRoots []string
	// HomeConfigFiles are configuration files under the home directory that tools fail
	// without and that hold no credentials (~/.gitconfig, ~/.config/git).
	HomeConfigFiles []string
	// Devices are the device paths to grant (see DefaultDevices).
	Devices []string
	// SystemDenied are secrets inside system roots (see systemDeniedPaths).
	SystemDenied []string
	// StateDirs are S-Code's runtime, state and configuration directories, the user's
	// runtime directory and the helper's own socket and audit directories, those that exist
	// (see stateDirCandidates): a command may neither read them nor reach a socket in them.
	StateDirs []string
	// MountNamespace reports whether the launcher can get a private mount namespace here
	// (see MountNamespaceUsable); it picks the profile's Protection.
	MountNamespace bool
	// PIDNamespace reports whether the launcher can be started as the init of a new PID
	// namespace here (see PIDNamespaceUsable); it sets the profile's PIDNamespace.
	PIDNamespace bool
}

// Errors returned by NewProfile and CacheRoot; match them with errors.Is.
var (
	// ErrRelativePath means a path that must be absolute was not.
	ErrRelativePath = errors.New("path is not absolute")
	// ErrCacheInWorkspace means the tool cache directory lies inside the workspace, where
	// the command could poison another workspace's cache.
	ErrCacheInWorkspace = errors.New("tool cache directory lies inside the workspace")
	// ErrBadWorkspace means the workspace cannot be sandboxed as given: the file system
	// root, the home directory itself, or a directory above it.
	ErrBadWorkspace = errors.New("workspace cannot be sandboxed")
)

// deniedHomePaths are the credential stores under the home directory that a sandboxed
// command may never read, relative to the home directory. A trailing "*" matches any suffix
// of the last element (Cargo writes credentials and credentials.toml).
var deniedHomePaths = []string{
	".ssh", ".aws", ".gnupg", ".netrc", ".config/gh", ".kube", ".docker/config.json",
	".cargo/credentials", ".cargo/credentials.toml", ".npmrc", ".git-credentials",
	".config/gcloud", ".azure", ".pypirc",
}

// systemDeniedPaths are secrets inside read-only system roots (password hashes, sudo rules,
// SSH host keys, TLS private keys) that a command running as root could otherwise read.
var systemDeniedPaths = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private",
	"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
	"/etc/ssh/ssh_host_dsa_key",
}

// gitProtectedNames returns the paths in the workspace's Git directory, relative to the
// workspace root, that stay read-only: every entry of gitControlNames (config, hooks, info,
// commondir, alternates, …) and the directories where submodules and linked worktrees keep
// their own (gitNestedDirs).
func gitProtectedNames() []string {
	var out []string
	for _, n := range append(slices.Clone(gitControlNames), gitNestedDirs...) {
		out = append(out, ".git/"+n)
	}
	return out
}

// protectedNames returns the paths, relative to the workspace root, that stay read-only
// inside the writable workspace: gitProtectedNames and the agent, editor and tool control
// files of safety.ControlFileNames (.claude, .vscode, .mcp.json, .envrc, …), each of which
// makes a tool outside the sandbox run code or trust a server. ShellSafety, the file tools
// and the sandbox so protect the same names. It returns a new slice on every call.
func protectedNames() []string {
	return append(gitProtectedNames(), safety.ControlFileNames()...)
}

// runtimeRootCandidates are the version-scoped runtime roots, relative to the home
// directory, that stay readable when present: NVM, pyenv, Conda, asdf, mise, Volta, and the
// Rust toolchains of rustup (with Cargo's installed binaries, not its credentials), plus the
// version-selecting shims of pyenv, asdf, mise and Volta.
var runtimeRootCandidates = []string{
	".nvm/versions", ".pyenv/versions", "miniconda3", "anaconda3", ".conda",
	".asdf/installs", ".local/share/mise/installs", ".volta/tools", ".rustup", ".cargo/bin",
	// The shims on PATH that pick a version, and the code they run: without them a shim
	// such as ~/.pyenv/shims/python3 cannot start.
	".pyenv/shims", ".pyenv/bin", ".pyenv/libexec", ".pyenv/plugins", ".pyenv/version",
	".asdf/shims", ".asdf/bin", ".asdf/lib", ".local/share/mise/shims", ".volta/bin",
}

// NewProfile returns the sandbox profile for h with network on or off. It does no I/O. It
// fails with ErrRelativePath when a path of h is relative, with ErrBadWorkspace when the
// workspace is the file system root, the home directory itself or lies above it (the home
// directory holds login files such as .bashrc, .profile and .ssh that run code or grant
// access, and a writable root cannot exclude them), and with
// ErrCacheInWorkspace when the cache root lies inside the workspace.
func NewProfile(h Host, network bool) (Profile, error) {
	for _, p := range []struct{ name, path string }{{"home directory", h.Home}, {"workspace", h.Workspace}, {"tool cache directory", h.CacheRoot}} {
		if !filepath.IsAbs(p.path) {
			return Profile{}, fmt.Errorf("%s %q: %w", p.name, p.path, ErrRelativePath)
		}
	}
	ws := filepath.Clean(h.Workspace)
	home := filepath.Clean(h.Home)
	if ws == "/" || within(ws, home) {
		return Profile{}, fmt.Errorf("%w: %s is or contains the home directory %s, whose login files (.bashrc, .profile, .ssh) would become writable; pick a project directory below it", ErrBadWorkspace, ws, home)
	}
	cacheRoot := filepath.Clean(h.CacheRoot)
	if within(ws, cacheRoot) {
		return Profile{}, fmt.Errorf("%w: %s is inside %s; set S_CODE_TOOL_CACHE_DIR to an absolute directory outside the workspace", ErrCacheInWorkspace, cacheRoot, ws)
	}
	ns := filepath.Join(cacheRoot, Namespace(ws))
	tmp := filepath.Join(ns, "tmp")
	p := Profile{
		Workspace:      ws,
		Network:        network,
		TempDir:        tmp,
		CacheNamespace: ns,
		Caches:         Caches(ns),
	}
	p.WritableRoots = []string{ws, ns}
	var ro []string
	ro = append(ro, h.SystemRoots...)
	ro = append(ro, h.ToolRoots...)
	ro = append(ro, h.RuntimeRoots...)
	ro = append(ro, h.HomeConfigFiles...)
	p.ReadOnlyRoots = cleanSet(ro)
	var denied []string
	for _, d := range deniedHomePaths {
		denied = append(denied, filepath.Join(home, d))
	}
	denied = append(denied, h.SystemDenied...)
	p.HiddenPaths = hiddenPaths(h, p.WritableRoots)
	denied = append(denied, p.HiddenPaths...)
	p.DeniedPaths = cleanSet(denied)
	// A read-only root inside a writable root would make that part of the workspace
	// read-only, and one inside a denied path would open it: drop both.
	p.ReadOnlyRoots = slices.DeleteFunc(p.ReadOnlyRoots, func(r string) bool {
		return anyWithin(p.WritableRoots, r) || anyWithin(p.DeniedPaths, r)
	})
	// A read-only root inside another adds nothing and would split the outer one.
	p.ReadOnlyRoots = slices.DeleteFunc(p.ReadOnlyRoots, func(r string) bool {
		for _, o := range p.ReadOnlyRoots {
			if o != r && within(o, r) {
				return true
			}
		}
		return false
	})
	p.Devices = cleanSet(h.Devices)
	var prot []string
	for _, n := range protectedNames() {
		prot = append(prot, filepath.Join(ws, n))
	}
	p.ProtectedPaths = prot
	p.Protection = ProtectionLandlockEntries
	if h.MountNamespace {
		p.Protection = ProtectionMountNamespace
	}
	p.PIDNamespace = h.PIDNamespace
	p.Env = envChanges(p)
	return p, nil
}

// Caches returns the private dependency caches inside the cache namespace ns.
func Caches(ns string) []Cache {
	return []Cache{
		{Tool: "cargo", Var: "CARGO_HOME", Path: filepath.Join(ns, "cargo")},
		{Tool: "go", Var: "GOPATH", Path: filepath.Join(ns, "go")},
		{Tool: "go", Var: "GOMODCACHE", Path: filepath.Join(ns, "go", "pkg", "mod")},
		{Tool: "go", Var: "GOCACHE", Path: filepath.Join(ns, "go-build")},
		{Tool: "npm", Var: "npm_config_cache", Path: filepath.Join(ns, "npm")},
	}
}

// EmptyNpmrcs returns the paths of the two empty npm configuration files inside the cache
// namespace ns, user and global; npm reads them instead of the host's ~/.npmrc and global
// npmrc (npm refuses one file in both roles).
func EmptyNpmrcs(ns string) (user, global string) {
	return filepath.Join(ns, "npmrc"), filepath.Join(ns, "npmrc-global")
}

// unsetVars are removed from every sandboxed command's environment: the SSH and GPG agent
// sockets (a Unix socket reaches the keys that ~/.ssh denial hides) and upper-case npm
// variables that would override the private npm configuration.
var unsetVars = []string{
	"SSH_AUTH_SOCK", "GPG_AGENT_INFO",
	"NPM_CONFIG_CACHE", "NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG",
}

func envChanges(p Profile) EnvChanges {
	var set []EnvVar
	set = append(set, EnvVar{"TMPDIR", p.TempDir})
	for _, c := range p.Caches {
		set = append(set, EnvVar{c.Var, c.Path})
	}
	user, global := EmptyNpmrcs(p.CacheNamespace)
	set = append(set, EnvVar{"npm_config_userconfig", user}, EnvVar{"npm_config_globalconfig", global})
	return EnvChanges{Set: set, Unset: slices.Clone(unsetVars)}
}

// ApplyEnv returns env (KEY=VALUE entries) with the changes of c applied: unset and
// overridden variables removed, set variables appended in order. env is not modified.
func (c EnvChanges) ApplyEnv(env []string) []string {
	drop := map[string]bool{}
	for _, u := range c.Unset {
		drop[u] = true
	}
	for _, s := range c.Set {
		drop[s.Name] = true
	}
	out := make([]string, 0, len(env)+len(c.Set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			out = append(out, kv)
		}
	}
	for _, s := range c.Set {
		out = append(out, s.Name+"="+s.Value)
	}
	return out
}

// Marshal returns the profile as JSON, the form the launcher reads.
func (p Profile) Marshal() ([]byte, error) { return json.Marshal(p) }

// ParseProfile decodes a profile written by Marshal. Unknown fields are refused, and so is a
// profile whose paths are not absolute or that has no workspace, so that a damaged profile
// never runs a command with less confinement than meant.
func ParseProfile(b []byte) (Profile, error) {
	var p Profile
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("decode sandbox profile: %w", err)
	}
	if p.Workspace == "" {
		return Profile{}, errors.New("decode sandbox profile: no workspace")
	}
	switch p.Protection {
	case "", ProtectionLandlockEntries, ProtectionMountNamespace:
	default:
		return Profile{}, fmt.Errorf("decode sandbox profile: unknown protection %q", p.Protection)
	}
	for _, group := range [][]string{{p.Workspace, p.TempDir}, p.WritableRoots, p.ReadOnlyRoots, p.Devices, p.DeniedPaths, p.ProtectedPaths, p.HiddenPaths} {
		for _, path := range group {
			if !filepath.IsAbs(path) || filepath.Clean(path) != path {
				return Profile{}, fmt.Errorf("decode sandbox profile: path %q: %w", path, ErrRelativePath)
			}
		}
	}
	return p, nil
}

// within is workspace.Within, the one containment test.
func within(dir, path string) bool { return workspace.Within(dir, path) }

// anyWithin reports whether path is one of dirs or lies beneath one of them.
func anyWithin(dirs []string, path string) bool {
	for _, d := range dirs {
		if within(d, path) {
			return true
		}
	}
	return false
}

// Within is workspace.Within (kept for the launcher's callers).
func Within(dir, path string) bool { return workspace.Within(dir, path) }

func cleanSet(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		out = append(out, filepath.Clean(p))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DeniedHomePaths returns the credential stores under the home directory that a sandboxed
// command may never read, relative to the home directory (a fresh copy).
func DeniedHomePaths() []string { return slices.Clone(deniedHomePaths) }

// SystemDeniedPaths returns the secrets inside read-only system roots (a fresh copy).
func SystemDeniedPaths() []string { return slices.Clone(systemDeniedPaths) }

// ProtectedNames returns the paths, relative to the workspace root, that stay read-only
// inside the writable workspace (a fresh copy).
func ProtectedNames() []string { return protectedNames() }

// RuntimeRootCandidates returns the runtime roots, relative to the home directory, that stay
// readable when present (a fresh copy).
func RuntimeRootCandidates() []string { return slices.Clone(runtimeRootCandidates) }

// UnsetVars returns the variables removed from every sandboxed command's environment (a
// fresh copy).
func UnsetVars() []string { return slices.Clone(unsetVars) }
