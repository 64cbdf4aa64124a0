package launch

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

// errMountLayout is the error of a workspace whose protected paths cannot be kept read-only
// with mounts (a protected path or .git that is a symbolic link, a .git directory without
// its config); the launcher then uses the per-entry Landlock layout.
var errMountLayout = errors.New("protected paths cannot be mounted read-only")

// resolveInWorkspace is how protected paths are opened beneath the workspace: never through
// a symbolic link (openat2(2) RESOLVE_NO_SYMLINKS), never out of it (RESOLVE_BENEATH).
const resolveInWorkspace = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// protectWithMounts makes the calling thread's view of the existing protected paths of p
// read-only: it unshares a mount namespace (mount_namespaces(7); the thread needs
// CAP_SYS_ADMIN, as root or in the user namespace sandbox.Command starts it in), makes every
// mount in it private, so nothing propagates back to the host, and bind-mounts each protected
// path onto itself read-only (MS_BIND, then MS_BIND|MS_REMOUNT|MS_RDONLY with nosuid and
// nodev added and the mount's other flags kept, as a user namespace requires for its locked
// flags). The workspace's .git directory is bind-mounted onto itself too (read-write), so it
// is a mount point: rename(2) and rmdir(2) of a mount point fail with EBUSY, so .git can no
// more be moved aside than .git/hooks. A missing .git/hooks in a .git directory is created
// empty (as git init does) so it can be mounted, and so are the other placeholders of
// sandbox.MakeGitPlaceholder (sandbox.Command makes them before, so the post-run check's
// mark comes after them);
// other missing protected paths get no mount.
// It returns the protected paths it mounted. Paths are opened beneath the workspace without
// following any symbolic link; a protected path (or .git) that is one fails with
// errMountLayout.
func protectWithMounts(p sandbox.Profile) ([]string, error) {
	if !sandbox.HasSysAdmin() {
		return nil, fmt.Errorf("%w: no CAP_SYS_ADMIN (the launcher was not started in a user namespace)", sandbox.ErrNoMountNamespace)
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return nil, fmt.Errorf("%w: unshare CLONE_NEWNS: %w", sandbox.ErrNoMountNamespace, err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("mount / MS_REC|MS_PRIVATE: %w", err)
	}
	ws, err := unix.Open(p.Workspace, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", p.Workspace, err)
	}
	defer unix.Close(ws)

	// .git first: a mount on it would hide mounts made beneath it before.
	var rels []string
	for _, pp := range p.ProtectedPaths {
		if rel, err := filepath.Rel(p.Workspace, pp); err == nil && sandbox.Within(p.Workspace, pp) && rel != "." {
			rels = append(rels, rel)
		}
	}
	slices.Sort(rels)
	rels = slices.Insert(rels, 0, ".git")

	var mounted []string
	gitDir := false
	for _, rel := range rels {
		fd, err := openBeneath(ws, rel)
		if errors.Is(err, unix.ENOENT) && gitDir {
			if made, perr := sandbox.MakeGitPlaceholder(ws, rel); perr != nil {
				return nil, perr
			} else if made {
				fd, err = openBeneath(ws, rel)
			}
		}
		switch {
		case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR):
			if rel == ".git/config" && gitDir {
				return nil, fmt.Errorf("%w: .git has no config", errMountLayout)
			}
			continue // not there: nothing to mount (docs/sandbox.md says what guards it)
		case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV):
			return nil, fmt.Errorf("%w: %s passes through a symbolic link", errMountLayout, rel)
		case err != nil:
			return nil, fmt.Errorf("open %s: %w", rel, err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			err = fmt.Errorf("%w: %s is a symbolic link", errMountLayout, rel)
		}
		isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		if err == nil {
			err = bindOnto(fd, rel)
		}
		unix.Close(fd)
		if err != nil {
			return nil, err
		}
		if rel == ".git" && isDir {
			gitDir = true
			continue // a directory pinned read-write: only its protected entries are read-only
		}
		if err := remountReadOnly(ws, rel); err != nil {
			return nil, err
		}
		if rel != ".git" {
			mounted = append(mounted, filepath.Join(p.Workspace, rel))
		}
	}
	return mounted, nil
}

// openBeneath opens rel beneath the directory ws as an O_PATH descriptor, following no
// symbolic link (a trailing one is returned as itself).
func openBeneath(ws int, rel string) (int, error) {
	return unix.Openat2(ws, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: resolveInWorkspace,
	})
}

func procFD(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// bindOnto bind-mounts the file or directory open as fd onto itself (MS_BIND|MS_REC).
func bindOnto(fd int, rel string) error {
	if err := unix.Mount(procFD(fd), procFD(fd), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind mount %s: %w", rel, err)
	}
	return nil
}

// keptFlags are the mount flags a read-only remount keeps from the mount it remounts: in a
// user namespace the flags of the mounts copied from the parent namespace are locked
// (mount_namespaces(7)), and a remount that would clear one fails with EPERM.
var keptFlags = []struct{ st, ms uint64 }{
	{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
	{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
}

// remountReadOnly remounts the bind mount now on rel (opened again, so the walk enters the
// new mount) read-only, nosuid and nodev, and checks that it reads back as read-only.
func remountReadOnly(ws int, rel string) error {
	fd, err := openBeneath(ws, rel)
	if err != nil {
		return fmt.Errorf("open %s after bind mount: %w", rel, err)
	}
	defer unix.Close(fd)
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return fmt.Errorf("fstatfs %s: %w", rel, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV)
	for _, k := range keptFlags {
		if uint64(sfs.Flags)&k.st != 0 {
			flags |= uintptr(k.ms)
		}
	}
	if err := unix.Mount("", procFD(fd), "", flags, ""); err != nil {
		return fmt.Errorf("remount %s read-only: %w", rel, err)
	}
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return fmt.Errorf("fstatfs %s: %w", rel, err)
	}
	if uint64(sfs.Flags)&unix.ST_RDONLY == 0 {
		return fmt.Errorf("remount %s read-only: the mount is still writable", rel)
	}
	return nil
}

// mountOwnProc mounts a new proc file system on /proc in the launcher's mount namespace, so
// that /proc shows the processes of the command's PID namespace (pid_namespaces(7), "/proc
// and PID namespaces"), where /proc/PID of the command's own pid is its own; nosuid, nodev,
// noexec. It must run before the Landlock rules are built (they hold the new /proc). A
// kernel that refuses it (a /proc with locked overmounts, as in some containers) leaves the
// host's /proc: an error the launcher reports and goes on from.
func mountOwnProc() error {
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount proc on /proc: %w", err)
	}
	return nil
}
