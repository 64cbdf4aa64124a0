//go:build linux || darwin

package listener

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// staleDialTimeout bounds the probe that tells a live socket from a stale one.
const staleDialTimeout = time.Second

// listenPath creates the socket at cfg.Path (see Listen).
func listenPath(cfg Config) (net.Listener, error) {
	path, err := filepath.Abs(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("socket path %q: %w", cfg.Path, err)
	}
	if n := len(path) + 1; n > sunPathMax {
		return nil, fmt.Errorf("%w: %s is %d bytes with its NUL, the limit is %d (sun_path, unix(7))", ErrPathTooLong, path, n, sunPathMax)
	}
	mode := cfg.Mode
	if mode == 0 {
		mode = 0o600
	}
	if mode&^0o777 != 0 {
		return nil, fmt.Errorf("%w: %#o", ErrBadMode, uint32(cfg.Mode))
	}
	if err := ensureDir(filepath.Dir(path), dirModeFor(mode)); err != nil {
		return nil, err
	}
	l, err := replaceAndBind(path)
	if err != nil {
		return nil, err
	}
	// Owner first, then mode: until chmod the socket has mode 0000 and only root can connect.
	if cfg.GID >= 0 {
		if err := os.Lchown(path, -1, cfg.GID); err != nil {
			l.Close()
			return nil, fmt.Errorf("chown socket %s to gid %d: %w", path, cfg.GID, err)
		}
	}
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return nil, fmt.Errorf("chmod socket %s: %w", path, err)
	}
	return l, nil
}

// dirModeFor returns the mode for a socket directory Listen creates: 0700 when only the owner
// may use the socket, else 0755, so that the group the socket is shared with can reach it
// (the root helper's /run/s-code, as systemd's DirectoryMode=0755 makes it).
func dirModeFor(mode os.FileMode) os.FileMode {
	if mode&0o077 == 0 {
		return 0o700
	}
	return 0o755
}

// ensureDir creates dir with mode when it is absent, then checks that it is a directory (not
// a symlink), owned by this effective user or root, and not writable by group or others: in
// such a directory nobody else can plant or swap the socket.
func ensureDir(dir string, mode os.FileMode) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, mode); err != nil {
			return fmt.Errorf("create socket directory: %w", err)
		}
		// MkdirAll's mode is reduced by the umask; set the one asked for.
		if err := os.Chmod(dir, mode); err != nil {
			return fmt.Errorf("chmod socket directory: %w", err)
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory (%s)", ErrUnsafeDir, dir, fi.Mode().Type())
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%w: %s: no owner information", ErrUnsafeDir, dir)
	}
	if uid := int(st.Uid); uid != os.Geteuid() && uid != 0 {
		return fmt.Errorf("%w: %s is owned by uid %d, not by uid %d or root", ErrUnsafeDir, dir, uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%w: %s has mode %#o, writable by group or others", ErrUnsafeDir, dir, uint32(perm))
	}
	return nil
}

// removeStale removes a socket at path that nothing listens on (connect(2) gets ECONNREFUSED).
// A live socket is ErrInUse; a file that is not a socket is ErrNotSocket and stays; a socket
// whose state cannot be told (say, EACCES) stays too.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket path: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%w: %s (%s); not removing it", ErrNotSocket, path, typeName(fi.Mode()))
	}
	c, err := net.DialTimeout("unix", path, staleDialTimeout)
	switch {
	case err == nil:
		c.Close()
		return fmt.Errorf("another helper is listening on %s: %w", path, ErrInUse)
	case errors.Is(err, syscall.ECONNREFUSED):
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale socket: %w", err)
		}
		return nil
	case errors.Is(err, syscall.ENOENT):
		return nil // removed meanwhile
	default:
		return fmt.Errorf("probe existing socket %s (left in place): %w", path, err)
	}
}

// typeName names a file type for an error message.
func typeName(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "regular file"
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symlink"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeDevice != 0:
		return "device"
	default:
		return t.String()
	}
}

// replaceAndBind removes a stale socket at path and binds a new one while holding an
// exclusive flock(2) on the socket's directory, so that two helpers starting at once cannot
// both judge the old socket stale and the later one unlink the earlier one's live socket.
func replaceAndBind(path string) (*net.UnixListener, error) {
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("open socket directory: %w", err)
	}
	defer dir.Close() // releases the lock
	if err := flock(dir); err != nil {
		return nil, fmt.Errorf("flock socket directory: %w", err)
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	return bindRestricted(path)
}

// flock takes an exclusive lock on f, retrying when a signal interrupts the wait.
func flock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// umaskMu guards the process umask while bindRestricted changes it: the umask is one value
// for the whole process, so two Listen calls at once would otherwise restore each other's
// temporary value.
var umaskMu sync.Mutex

// bindRestricted binds and listens on path with the umask at 0777, so the socket file is
// created with mode 0000, then restores the umask. The listener unlinks path when closed.
func bindRestricted(path string) (*net.UnixListener, error) {
	umaskMu.Lock()
	old := unix.Umask(0o777)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	unix.Umask(old)
	umaskMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	return l, nil
}
