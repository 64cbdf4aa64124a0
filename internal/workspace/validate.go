package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Rule ids of Validate's refusals.
const (
	RuleRoot        = "workspace.root"         // the file system root
	RuleHome        = "workspace.home"         // the home directory or a directory above it
	RuleGitDir      = "workspace.git-dir"      // inside or equal to a repository's Git directory
	RuleState       = "workspace.state"        // holds or lies inside S-Code's own state
	RuleOtherOwner  = "workspace.other-owner"  // owned by another user
	RuleConfigTree  = "workspace.config-tree"  // one of the user's configuration or autostart trees
	RuleNotResolved = "workspace.not-resolved" // not absolute, not clean, or missing
)

// Error is a refused workspace (or cwd, or extra writable path): the rule id that refused it
// and one line saying why, for a person or a model.
type Error struct {
	Rule   string
	Path   string
	Reason string
}

// Error returns "RULE: PATH: REASON".
func (e *Error) Error() string { return e.Rule + ": " + e.Path + ": " + e.Reason }

// ConfigTree is one of the user's configuration or autostart trees that may never be a
// workspace: a command with write access there changes what runs at login, on PATH, or what
// other tools trust.
type ConfigTree struct {
	// Rel is the tree's path relative to the home directory.
	Rel string
	// Reason says what writing there would change.
	Reason string
}

// ConfigTrees is the one table of configuration and autostart trees below the home
// directory that Validate refuses (the directory itself and everything inside it).
var ConfigTrees = []ConfigTree{
	{".config", "the XDG configuration tree: autostart entries, systemd user units, shell, Git and editor configuration"},
	{".local/bin", "programs on PATH: a file there shadows a command the user runs"},
	{".local/share", "XDG data: desktop entries, systemd user units, keyrings, editor plugins"},
	{".local/state", "XDG state, including S-Code's audit log and turn records"},
	{".ssh", "SSH keys, authorized_keys and client configuration (ProxyCommand runs programs)"},
	{".gnupg", "GnuPG keys and agent configuration"},
	{".aws", "cloud credentials"},
	{".kube", "cluster credentials"},
	{".docker", "registry credentials and CLI plugins"},
	{".cargo", "Cargo credentials and installed binaries on PATH"},
	{".npm-global", "globally installed npm binaries on PATH"},
	{".vscode", "editor extensions, which run code"},
	{".password-store", "pass(1) secrets"},
	{".mozilla", "browser profiles: cookies, saved passwords, extensions"},
	{"Library", "macOS: LaunchAgents, preferences, keychains"},
	{"bin", "programs on PATH in many login profiles"},
	{".local/lib", "Python's user site-packages: a .pth file there runs code at every Python start"},
	{".pyenv", "pyenv's shims and versions, on PATH"},
	{".nvm", "nvm's script, sourced by login shells, and Node versions on PATH"},
	{".rustup", "the Rust toolchains whose programs Cargo's proxies on PATH run"},
	{"go/bin", "programs go install puts on PATH"},
	{".ipython", "IPython startup scripts, run at every start"},
	{".vim", "Vim plugins, which run code"},
	{".emacs.d", "Emacs init files and packages, which run code"},
	{".gradle", "Gradle init scripts, run by every build"},
	{".oh-my-zsh", "zsh startup code, sourced by login shells"},
}

// Validation is what Validate needs to know besides the directory.
type Validation struct {
	// Home is the user's home directory (absolute, symbolic links resolved); empty skips
	// the home and configuration-tree rules.
	Home string
	// UID is the uid that must own the directory; negative skips the owner rule (the root
	// helper, whose admins work in root-owned directories).
	UID int
	// State lists S-Code's own state directories (audit log, runtime dir, turn records,
	// caches, configuration): see StateDirs.
	State []string
	// AllowRoot skips the file-system-root and home rules and the rule against holding
	// S-Code's state (the root helper's admin work in / or /var, whose commands are not
	// sandboxed); lying inside S-Code's state stays refused.
	AllowRoot bool
}

// Validate reports whether dir may be a workspace (or the cwd of a command, or an extra
// writable path): it returns nil, or a *Error naming the first rule that refuses it:
//   - workspace.not-resolved: dir is not absolute and clean, or does not exist;
//   - workspace.root: dir is "/";
//   - workspace.home: dir is the home directory or lies above it;
//   - workspace.config-tree: dir is or lies inside one of ConfigTrees;
//   - workspace.git-dir: dir is or lies inside a Git directory (a .git directory, a bare
//     repository, or a directory named by a gitdir: line: any directory holding HEAD,
//     objects and refs, git's own test in setup.c is_git_directory);
//   - workspace.state: dir holds or lies inside one of v.State;
//   - workspace.other-owner: dir is owned by a uid other than v.UID.
//
// dir should come from Resolve (symbolic links resolved); Validate resolves it again so a
// link swapped in between cannot pass.
func Validate(dir string, v Validation) error {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return &Error{RuleNotResolved, dir, "not an absolute, clean path"}
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return &Error{RuleNotResolved, dir, "does not exist: " + errText(err)}
	}
	dir = r
	if !v.AllowRoot {
		if dir == "/" {
			return &Error{RuleRoot, dir, "the file system root cannot be a workspace; pick a project directory"}
		}
		if v.Home != "" && Within(dir, v.Home) {
			return &Error{RuleHome, dir, fmt.Sprintf("is or contains the home directory %s, whose login files (.bashrc, .profile, .ssh) would become writable; pick a project directory below it (or pass --workspace)", v.Home)}
		}
	}
	if v.Home != "" {
		if t := inConfigTree(dir, v.Home); t != nil {
			return &Error{RuleConfigTree, dir, fmt.Sprintf("lies in ~/%s (%s)", t.Rel, t.Reason)}
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Base(d) == ".git" || isGitDir(d) {
			return &Error{RuleGitDir, dir, fmt.Sprintf("lies in the Git directory %s, whose hooks and config run programs; use the repository's work tree", d)}
		}
		if d == "/" {
			break
		}
	}
	for _, s := range v.State {
		if s == "" {
			continue
		}
		s = filepath.Clean(s)
		if rs, err := filepath.EvalSymlinks(s); err == nil {
			s = rs
		}
		if Within(s, dir) {
			return &Error{RuleState, dir, fmt.Sprintf("lies in S-Code's own state %s (audit log, runtime, turn records, caches or configuration)", s)}
		}
		if Within(dir, s) && !v.AllowRoot {
			return &Error{RuleState, dir, fmt.Sprintf("holds S-Code's own state %s (audit log, runtime, turn records, caches or configuration)", s)}
		}
	}
	if v.UID >= 0 {
		var st syscall.Stat_t
		if err := syscall.Stat(dir, &st); err != nil {
			return &Error{RuleNotResolved, dir, "stat: " + errText(err)}
		}
		if int64(st.Uid) != int64(v.UID) {
			return &Error{RuleOtherOwner, dir, fmt.Sprintf("is owned by uid %d, not by uid %d", st.Uid, v.UID)}
		}
	}
	return nil
}

// inConfigTree returns the configuration tree (ConfigTrees, below home) that dir (resolved)
// is or lies in, or nil. It compares paths, and also files: dir or a directory above it
// that is the same directory as a tree (os.SameFile: device and inode) is in that tree, so
// a tree reached under another name is refused as well: the target of a tree that is a
// symbolic link (dotfile managers such as GNU Stow link ~/.config into a repository), a
// bind mount of a tree, another letter case on a volume that folds case.
func inConfigTree(dir, home string) *ConfigTree {
	type tree struct {
		t  *ConfigTree
		fi os.FileInfo
	}
	var trees []tree
	for i := range ConfigTrees {
		t := &ConfigTrees[i]
		p := filepath.Join(home, t.Rel)
		if Within(p, dir) {
			return t
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			trees = append(trees, tree{t, fi})
		}
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			for _, t := range trees {
				if os.SameFile(fi, t.fi) {
					return t.t
				}
			}
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

// isGitDir reports whether d looks like a Git directory: HEAD, objects and refs inside it
// (git's is_git_directory).
func isGitDir(d string) bool {
	if fi, err := os.Lstat(filepath.Join(d, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	for _, n := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(d, n)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// StateDirs returns S-Code's own state directories for a user whose home is home, reading
// the XDG variables through getenv (os.Getenv): $XDG_STATE_HOME/s-code (else
// ~/.local/state/s-code: audit log, turn records), $XDG_RUNTIME_DIR/s-code (sockets),
// $XDG_CACHE_HOME/s-code (else ~/.cache/s-code: tool caches), $S_CODE_TOOL_CACHE_DIR,
// $XDG_CONFIG_HOME/s-code (else ~/.config/s-code), and the root helper's /var/log/s-code,
// /run/s-code and /etc/s-code. Relative values are ignored (XDG Base Directory
// Specification).
func StateDirs(getenv func(string) string, home string) []string {
	abs := func(name string) string {
		if v := getenv(name); filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return ""
	}
	xdg := func(name, def string) string {
		if v := abs(name); v != "" {
			return filepath.Join(v, "s-code")
		}
		if home == "" {
			return ""
		}
		return filepath.Join(home, def, "s-code")
	}
	out := []string{
		xdg("XDG_STATE_HOME", ".local/state"),
		xdg("XDG_CACHE_HOME", ".cache"),
		xdg("XDG_CONFIG_HOME", ".config"),
		"/var/log/s-code", "/run/s-code", "/etc/s-code",
	}
	if rt := abs("XDG_RUNTIME_DIR"); rt != "" {
		out = append(out, filepath.Join(rt, "s-code"))
	}
	if c := abs("S_CODE_TOOL_CACHE_DIR"); c != "" {
		out = append(out, c)
	}
	var clean []string
	for _, d := range out {
		if d != "" {
			clean = append(clean, d)
		}
	}
	return clean
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
