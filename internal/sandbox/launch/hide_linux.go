package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/sandbox"
)

// mountNamespaceID returns the calling thread's mount namespace ("mnt:[N]").
func mountNamespaceID() string {
	id, _ := os.Readlink("/proc/thread-self/ns/mnt")
	return id
}

// hidePaths hides p.HiddenPaths from the command (S-Code's runtime, state and configuration
// directories, the user's runtime directory, the helper's sockets): in the calling thread's
// private mount namespace it mounts an empty read-only tmpfs over each existing directory and
// /dev/null, read-only, over each other existing file (a socket), so that connect(2), which
// Landlock governs only from ABI 9, finds no socket there. hostNS is the mount namespace the
// launcher started in: when the thread is still in it (protectWithMounts did not get as far
// as unsharing), hidePaths unshares a private one itself. Paths beneath an already hidden
// one, paths that do not exist and paths this user cannot reach (EACCES: the command cannot
// either) are skipped. It returns the paths it hid; an error means the command must not run
// (a path that exists could not be hidden), except ErrNoMountNamespace (no CAP_SYS_ADMIN
// here: the Landlock denial and the helpers' refusal of sandboxed callers remain).
func hidePaths(p sandbox.Profile, hostNS string) ([]string, error) {
	if len(p.HiddenPaths) == 0 {
		return nil, nil
	}
	if ns := mountNamespaceID(); ns == "" || ns == hostNS {
		if !sandbox.HasSysAdmin() {
			return nil, fmt.Errorf("%w: no CAP_SYS_ADMIN", sandbox.ErrNoMountNamespace)
		}
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return nil, fmt.Errorf("%w: unshare CLONE_NEWNS: %w", sandbox.ErrNoMountNamespace, err)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return nil, fmt.Errorf("mount / MS_REC|MS_PRIVATE: %w", err)
		}
	}
	paths := slices.Clone(p.HiddenPaths)
	slices.Sort(paths)
	var hidden []string
	for _, path := range paths {
		if slices.ContainsFunc(hidden, func(h string) bool { return sandbox.Within(h, path) }) {
			continue
		}
		ok, err := hideOne(path)
		if err != nil {
			return nil, err
		}
		if ok {
			hidden = append(hidden, path)
		}
	}
	return hidden, nil
}

// hideOne hides path (see hidePaths) and reports whether it existed.
func hideOne(path string) (bool, error) {
	if !filepath.IsAbs(path) {
		return false, fmt.Errorf("hide %q: %w", path, sandbox.ErrRelativePath)
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("hide %s: open: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, fmt.Errorf("hide %s: fstat: %w", path, err)
	}
	const flags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := unix.Mount("s-code-hidden", procFD(fd), "tmpfs", flags, "mode=0555,size=4k,nr_inodes=1"); err != nil {
			return false, fmt.Errorf("hide %s: mount tmpfs: %w", path, err)
		}
		return true, nil
	}
	if err := unix.Mount("/dev/null", procFD(fd), "", unix.MS_BIND, ""); err != nil {
		return false, fmt.Errorf("hide %s: bind /dev/null: %w", path, err)
	}
	if err := unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|flags, ""); err != nil {
		return false, fmt.Errorf("hide %s: remount read-only: %w", path, err)
	}
	return true, nil
}
