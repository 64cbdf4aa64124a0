package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

// Exec confines the calling process to p and execs argv with env; it returns only on
// failure. The steps, all on one locked OS thread that then calls execve(2), so that no
// other thread of the Go runtime matters:
//
//  1. find argv[0] on the PATH of env;
//  2. when p asks for sandbox.ProtectionMountNamespace: unshare a private mount namespace
//     and bind-mount the existing protected paths read-only (see protectWithMounts); when
//     that fails, say so on stderr and fall back to sandbox.ProtectionLandlockEntries,
//     never to a workspace without protected paths;
//  3. when p asks for sandbox.ProtectionMountNamespace: hide p.HiddenPaths (S-Code's
//     runtime, state and configuration directories, the helpers' sockets) under empty
//     read-only mounts (see hidePaths), so no helper socket can be reached;
//  4. build the Landlock ruleset from the profile (before any restriction, so the walk of
//     the granted roots can read them): with the mounts, the workspace tree is granted as a
//     whole; without, it is split around the protected paths (see plan);
//  5. drop every capability: the bounding set (when the launcher may), then the ambient,
//     inheritable, permitted and effective sets, so that neither root nor the owner of the
//     launcher's user namespace gets a capability at execve (capabilities(7)), and the
//     command cannot undo the mounts;
//  6. set no_new_privs (prctl(2) PR_SET_NO_NEW_PRIVS);
//  7. enforce Landlock (landlock_restrict_self(2));
//  8. load the seccomp filters (seccomp(2)), see seccompFilters; they refuse mount,
//     umount2, the new mount API and new user namespaces to the command;
//  9. execve(2); or, when the launcher is pid 1 of its own PID namespace (sandbox.Command
//     starts it so when p.PIDNamespace), fork and exec the command and stay its init (see
//     runAsInit), so that no process of the command outlives it. A launcher asked for a PID
//     namespace that is not pid 1 refuses (ErrNoPIDNamespace), before it changes anything.
//
// A kernel without Landlock or seccomp fails with ErrUnconfined unless p.AllowUnconfined;
// then the command runs with whatever of the two exists.
func Exec(p sandbox.Profile, argv, env []string) error {
	return execConfined(p, argv, env, os.Stderr)
}

func execConfined(p sandbox.Profile, argv, env []string, stderr io.Writer) error {
	path, err := lookPath(argv[0], env)
	if err != nil {
		return &ExitError{ExitNotFound, err}
	}
	asInit := os.Getpid() == 1
	if p.PIDNamespace && !asInit {
		return &ExitError{ExitCannotRun, fmt.Errorf("%w: the profile asks for one, and the launcher is pid %d, not 1 (start it through sandbox.Command)", sandbox.ErrNoPIDNamespace, os.Getpid())}
	}
	f := sandbox.ProbeFeatures()
	if !f.Confines() && !p.AllowUnconfined {
		return &ExitError{ExitCannotRun, fmt.Errorf("%w: %s", ErrUnconfined, f.Problem)}
	}

	runtime.LockOSThread() // never unlocked: this thread execs or the process exits
	hostNS := mountNamespaceID()

	layout := p
	// Per-entry Landlock rules cannot keep a path read-only without splitting every
	// directory above it: .git/objects/info/alternates would make .git/objects read_dir
	// only, and no new object directory could be made. In that layout the entries below
	// .git/objects are left to the post-run check (sandbox.QuarantineGit).
	layout.ProtectedPaths = slices.DeleteFunc(slices.Clone(p.ProtectedPaths), func(pp string) bool {
		return sandbox.Within(filepath.Join(p.Workspace, ".git", "objects"), pp)
	})
	if p.Protection == sandbox.ProtectionMountNamespace {
		if _, err := protectWithMounts(p); err != nil {
			fmt.Fprintf(stderr, "%s: protected paths kept read-only by per-entry Landlock rules (%s): %v\n", sandbox.LauncherName, sandbox.ProtectionLandlockEntries, err)
		} else {
			if asInit {
				if err := mountOwnProc(); err != nil {
					fmt.Fprintf(stderr, "%s: /proc stays the host's: %v\n", sandbox.LauncherName, err)
				}
			}
			// The mounts keep the protected paths in the workspace read-only: Landlock
			// need not split the workspace around them. Any protected path outside the
			// workspace (NewProfile makes none) stays a Landlock hole.
			layout.ProtectedPaths = slices.DeleteFunc(slices.Clone(p.ProtectedPaths), func(pp string) bool {
				return sandbox.Within(p.Workspace, pp)
			})
		}
	}
	if p.Protection == sandbox.ProtectionMountNamespace {
		hidden, err := hidePaths(p, hostNS)
		switch {
		case errors.Is(err, sandbox.ErrNoMountNamespace):
			fmt.Fprintf(stderr, "%s: S-Code's directories are only denied by Landlock, not hidden: %v\n", sandbox.LauncherName, err)
		case err != nil:
			return &ExitError{ExitCannotRun, err}
		default:
			// A hidden path inside a writable root (and what lies beneath it) is empty and
			// read-only now: Landlock need not split the root around it.
			layout.DeniedPaths = slices.DeleteFunc(slices.Clone(layout.DeniedPaths), func(d string) bool {
				return slices.ContainsFunc(hidden, func(h string) bool { return sandbox.Within(h, d) }) &&
					slices.ContainsFunc(p.WritableRoots, func(w string) bool { return sandbox.Within(w, d) })
			})
		}
	}
	rulesetFD := -1
	if f.LandlockABI > 0 {
		rulesetFD, err = buildRuleset(layout, f.LandlockABI)
		if err != nil {
			return &ExitError{ExitCannotRun, err}
		}
	}
	if err := dropCapabilities(); err != nil {
		return &ExitError{ExitCannotRun, err}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return &ExitError{ExitCannotRun, fmt.Errorf("prctl PR_SET_NO_NEW_PRIVS: %w", err)}
	}
	if rulesetFD >= 0 {
		err := ll.LandlockRestrictSelf(rulesetFD, 0)
		unix.Close(rulesetFD)
		if err != nil {
			return &ExitError{ExitCannotRun, fmt.Errorf("landlock_restrict_self: %w", err)}
		}
	}
	if f.Seccomp {
		if err := loadSeccomp(p.Network); err != nil {
			return &ExitError{ExitCannotRun, err}
		}
	}
	if asInit {
		return runAsInit(path, argv, env)
	}
	err = syscall.Exec(path, argv, env)
	code := ExitCannotRun
	if errors.Is(err, syscall.ENOENT) {
		code = ExitNotFound
	}
	return &ExitError{code, fmt.Errorf("execve %s: %w", path, err)}
}

// runAsInit starts the command as the only child of the launcher, which is pid 1 of the
// command's PID namespace and already confined (the child inherits the Landlock domain and
// the seccomp filters of this locked thread, and no capability), and stays its init: it
// reaps every process reparented to it, forwards SIGTERM and SIGHUP to the command (s-code
// sandbox forwards those to the launcher alone; signals sent to the process group, by the
// terminal or the helper, reach the command directly), and when the command's process ends
// it kills every other process of the namespace (kill(2) pid -1 from init) and returns an
// ErrCommandExited with the command's status: its exit status, or 128+N when signal N ended
// it (an init cannot die of a signal it sent itself). When the launcher ends, the kernel
// kills whatever is left in the namespace (pid_namespaces(7)), also when the helper kills
// the launcher outright.
func runAsInit(path string, argv, env []string) error {
	// No other process may read or write this one's memory (proc(5) /proc/PID/mem).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return &ExitError{ExitCannotRun, fmt.Errorf("prctl PR_SET_DUMPABLE: %w", err)}
	}
	// Every signal is caught, not ignored (an ignored signal would stay ignored in the
	// command across execve): a signal sent to the process group (the terminal's SIGINT, the
	// helper's SIGTERM) reaches the command directly and must not end the launcher (Go's
	// default for SIGINT is to exit), which would end the command's namespace with it.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	// syscall.ForkExec clones this goroutine's locked, confined thread.
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		code := ExitCannotRun
		if errors.Is(err, syscall.ENOENT) {
			code = ExitNotFound
		}
		return &ExitError{code, fmt.Errorf("execve %s: %w", path, err)}
	}
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM || s == syscall.SIGHUP {
				syscall.Kill(pid, s.(syscall.Signal))
			}
		}
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			syscall.Kill(-1, syscall.SIGKILL)
			return &ExitError{ExitCannotRun, fmt.Errorf("wait4: %w", err)}
		}
		if got != pid {
			continue // an orphan of the command, reaped
		}
		syscall.Kill(-1, syscall.SIGKILL)
		code := ws.ExitStatus()
		if ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return &ExitError{code, ErrCommandExited}
	}
}

// lookPath finds file on the PATH of env (not of the launcher's own environment, which is
// the same when started by sandbox.Command, but need not be).
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", file, osexec.ErrNotFound)
}

// landlockPresets are go-landlock's configurations for ABI 1, 2, …; index ABI-1.
var landlockPresets = []landlock.Config{
	landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// Landlock access rights used by the rules (landlock(7)).
const (
	rightsRead     = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	rightsFileOnly = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	rightsWriteDir = rightsRead | ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate
	rightsDevice   = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSReadDir | ll.AccessFSIoctlDev
	rightsSplitDir = ll.AccessFSReadDir
	maxWalkEntries = 20000
)

// handledFor returns the configuration for the kernel's ABI, network handled only when
// network is off: with no TCP (and, from ABI 10, UDP) port rules, every bind and connect is
// refused.
func handledFor(abi int, network bool) ll.RulesetAttr {
	if abi > len(landlockPresets) {
		abi = len(landlockPresets)
	}
	c := landlockPresets[abi-1]
	attr := ll.RulesetAttr{HandledAccessFS: uint64(c.HandledAccessFS), Scoped: uint64(c.Scoped)}
	if !network {
		attr.HandledAccessNet = uint64(c.HandledAccessNet)
	}
	return attr
}

// buildRuleset creates the Landlock ruleset for p and returns its file descriptor.
func buildRuleset(p sandbox.Profile, abi int) (int, error) {
	attr := handledFor(abi, p.Network)
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	w := walker{ruleset: fd, handled: attr.HandledAccessFS}
	for _, e := range plan(p) {
		if e.access == accessNone {
			continue
		}
		if err := w.addRoot(e); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// walker adds the rules of one plan entry: the entry's path when nothing of another entry
// lies beneath it, else read_dir on it and, one by one, each of its children that is not a
// hole, recursively. Children are opened relative to their parent with O_NOFOLLOW and
// symbolic links are skipped, so a link planted in the workspace never extends a grant to
// its target, and no path is resolved twice.
type walker struct {
	ruleset int
	handled uint64
	entries int
}

func (w *walker) addRoot(e entry) error {
	var fd int
	var err error
	if e.protected {
		// A protected path lies in the writable workspace, where the command may have
		// planted a link (.vscode -> ~/.ssh): follow none, in no component.
		fd, err = unix.Openat2(unix.AT_FDCWD, e.path, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
		if errors.Is(err, unix.ELOOP) {
			return nil // a link in the path: grant nothing
		}
	} else {
		fd, err = unix.Open(e.path, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) {
			return nil // a root that does not exist, or that this user cannot reach, grants nothing
		}
		return fmt.Errorf("open %s: %w", e.path, err)
	}
	defer unix.Close(fd)
	return w.walk(fd, e.path, e)
}

func (w *walker) walk(fd int, path string, e entry) error {
	w.entries++
	if w.entries > maxWalkEntries {
		return fmt.Errorf("sandbox rules: more than %d entries to grant around the protected and denied paths under %s", maxWalkEntries, e.path)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("fstat %s: %w", path, err)
	}
	mode := st.Mode & unix.S_IFMT
	if mode == unix.S_IFLNK {
		return nil
	}
	isDir := mode == unix.S_IFDIR
	if !isDir || !holeBeneath(e.holes, path) {
		return w.rule(fd, path, rightsFor(e.access, isDir, holeBeneath(e.holes, path)))
	}
	if err := w.rule(fd, path, rightsSplitDir); err != nil {
		return err
	}
	dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	dir := os.NewFile(uintptr(dfd), path)
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return fmt.Errorf("read directory %s: %w", path, err)
	}
	for _, name := range names {
		child := filepath.Join(path, name)
		if holeAt(e.holes, child) {
			continue
		}
		cfd, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // removed since the listing
			}
			return fmt.Errorf("open %s: %w", child, err)
		}
		err = w.walk(cfd, child, e)
		unix.Close(cfd)
		if err != nil {
			return err
		}
	}
	return nil
}

// rightsFor returns the Landlock rights for an entry of access a on a directory or a file.
// A non-directory that should have been split (a hole beneath a file) stays read-only.
func rightsFor(a access, isDir, split bool) uint64 {
	var r uint64
	switch a {
	case accessRead:
		r = rightsRead
	case accessDevice:
		r = rightsDevice
	case accessWrite:
		r = rightsWriteDir
		if split {
			r = rightsRead
		}
	}
	if !isDir {
		r &= rightsFileOnly
	}
	return r
}

func (w *walker) rule(fd int, path string, rights uint64) error {
	rights &= w.handled
	if rights == 0 {
		return nil
	}
	attr := ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: rights}
	if err := ll.LandlockAddPathBeneathRule(w.ruleset, &attr, 0); err != nil {
		return fmt.Errorf("landlock_add_rule %s: %w", path, err)
	}
	return nil
}

// dropCapabilities clears the ambient set, the bounding set when the process may
// (CAP_SETPCAP, as root), and then the inheritable, permitted and effective sets, so that
// execve(2) grants no capability even to uid 0, and a launcher started in its own user
// namespace (with CAP_SYS_ADMIN there) keeps none (capabilities(7), "Transformation of
// capabilities during execve()").
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("prctl PR_CAP_AMBIENT_CLEAR_ALL: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		for c := 0; c < 64; c++ {
			in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability this kernel knows
			}
			if err != nil {
				return fmt.Errorf("prctl PR_CAPBSET_READ %d: %w", c, err)
			}
			if in == 1 {
				if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
					return fmt.Errorf("prctl PR_CAPBSET_DROP %d: %w", c, err)
				}
			}
		}
	}
	// The launcher needs no capability past this point (no_new_privs, Landlock and seccomp
	// need none once no_new_privs is set): empty every set.
	data = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
