package sandbox

import (
	"os"
	"path/filepath"
	"slices"
)

// Fixed directories of S-Code outside any home directory: the root helper's socket
// directory, its policy directory, its audit log (audit.RootDir) and its state.
var systemStateDirs = []string{"/run/s-code", "/etc/s-code", "/var/log/s-code", "/var/lib/s-code"}

// stateDirCandidates returns the directories that every sandboxed command must not reach,
// for the environment getenv and the home directory home: the user's runtime directory
// ($XDG_RUNTIME_DIR as a whole: the user helper's socket lives in its s-code directory, and
// its other sockets, the D-Bus session bus, the systemd user manager, container engines and
// agents, run programs outside the sandbox), the helper sockets named by S_CODE_USER_SOCKET
// and S_CODE_ROOT_SOCKET (see SocketHidePath), S-Code's state directories ($XDG_STATE_HOME/s-code
// or ~/.local/state/s-code: audit log, turn records) and configuration directories
// ($XDG_CONFIG_HOME/s-code or ~/.config/s-code), and systemStateDirs. Relative XDG values are
// ignored, as the XDG Base Directory Specification requires. Discover keeps those that exist.
func stateDirCandidates(getenv func(string) string, home string) []string {
	out := slices.Clone(systemStateDirs)
	if rt := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		out = append(out, rt)
	}
	state := filepath.Join(home, ".local", "state")
	if s := getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		out = append(out, filepath.Join(s, "s-code"))
	}
	out = append(out, filepath.Join(state, "s-code"))
	if c := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(c) {
		out = append(out, filepath.Join(c, "s-code"))
	}
	out = append(out, filepath.Join(home, ".config", "s-code"))
	// Helper sockets moved elsewhere (the variables the s-code client reads).
	for _, k := range []string{"S_CODE_USER_SOCKET", "S_CODE_ROOT_SOCKET"} {
		if h := SocketHidePath(getenv(k)); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// SocketHidePath returns what a profile hides so that commands cannot reach the Unix socket
// at sock: its directory, or the socket itself when that directory is the root or shared
// scratch space (/tmp, /var/tmp, /run, /dev/shm, the temporary directory); "" for a path
// that is not absolute.
func SocketHidePath(sock string) string {
	if !filepath.IsAbs(sock) {
		return ""
	}
	sock = filepath.Clean(sock)
	dir := filepath.Dir(sock)
	switch dir {
	case "/", "/tmp", "/var/tmp", "/run", "/dev/shm", filepath.Clean(os.TempDir()):
		return sock
	}
	return dir
}

// SystemStateDirs returns S-Code's fixed directories outside the home directory that every
// sandboxed command is denied and, with a mount namespace, does not see (a fresh copy).
func SystemStateDirs() []string { return slices.Clone(systemStateDirs) }

// hiddenPaths returns the state directories of h that a profile hides: each clean absolute
// path of h.StateDirs that contains no writable root (a directory holding the workspace or
// the cache namespace cannot be hidden without hiding them; such a layout is refused by the
// helper's workspace validation, not here).
func hiddenPaths(h Host, writable []string) []string {
	var out []string
	for _, d := range cleanSet(h.StateDirs) {
		if slices.ContainsFunc(writable, func(w string) bool { return within(d, w) }) {
			continue
		}
		out = append(out, d)
	}
	return out
}
