package listener

import (
	"errors"
	"fmt"
	"net"
	"os"
)

// Socket names that the shipped units and plists give the helpers' sockets: the
// FileDescriptorName= of the systemd .socket units and the key under Sockets in the launchd
// plists. Daemons pass the one for their role in Config.Names.
const (
	// UserSocketName names the user helper's socket (deploy/systemd/s-code-userhelper.socket,
	// deploy/launchd/dev.s-code.userhelper.plist).
	UserSocketName = "s-code-user"
	// RootSocketName names the root helper's socket (deploy/systemd/s-code-roothelper.socket,
	// deploy/launchd/dev.s-code.roothelper.plist).
	RootSocketName = "s-code-root"
)

// Source says where a listener came from.
type Source string

const (
	// SourceSystemd: a socket passed by systemd socket activation (sd_listen_fds(3)).
	SourceSystemd Source = "systemd"
	// SourceLaunchd: a socket passed by launchd (launch_activate_socket(3)).
	SourceLaunchd Source = "launchd"
	// SourcePath: a socket this process created at Config.Path.
	SourcePath Source = "path"
)

// Config says which listener a helper wants.
type Config struct {
	// Path is where to create the socket when no service manager passed one (the daemon's
	// --listen flag). Empty means: only accept an activated socket.
	Path string
	// Mode is the socket file's permission bits (0600 for the user helper, 0660 for the root
	// helper). Zero means 0600. Bits outside 0777 are refused. It applies only to sockets
	// created at Path: systemd and launchd set their own (SocketMode=, SockPathMode).
	Mode os.FileMode
	// GID is the group to give the socket file created at Path; -1 leaves the process's group.
	// Changing it to a group the process is not in needs root (chown(2)).
	GID int
	// Names are the activation socket names to accept (systemd FileDescriptorName=, the launchd
	// Sockets key). Empty means: exactly one systemd socket, whatever its name, or the launchd
	// socket named "Listeners".
	Names []string
}

// Errors that Listen wraps; test with errors.Is.
var (
	// ErrNoListener: neither systemd nor launchd passed a socket and Config.Path is empty.
	ErrNoListener = errors.New("no listener: not started by systemd or launchd, and no --listen PATH given")
	// ErrActivation: a service manager passed sockets, but not exactly one usable Unix stream
	// socket with an accepted name.
	ErrActivation = errors.New("unusable activation socket")
	// ErrPathTooLong: the socket path does not fit in sockaddr_un.sun_path (unix(7): 108 bytes
	// on Linux, 104 on macOS, including the terminating NUL).
	ErrPathTooLong = errors.New("socket path too long")
	// ErrUnsafeDir: the socket's directory is not a real directory owned by this user or root
	// and closed to writes by group and others.
	ErrUnsafeDir = errors.New("unsafe socket directory")
	// ErrInUse: a live process accepts connections on the socket path.
	ErrInUse = errors.New("socket in use")
	// ErrNotSocket: something other than a socket exists at the socket path; it is never removed.
	ErrNotSocket = errors.New("path exists and is not a socket")
	// ErrBadMode: Config.Mode has bits outside the permission bits 0777.
	ErrBadMode = errors.New("socket mode has bits outside 0777")
	// ErrNoCgo: launchd activation needs cgo (launch_activate_socket is a libSystem call), and
	// this binary was built without it.
	ErrNoCgo = errors.New("launchd socket activation needs a cgo build")
	// ErrUnsupported: this operating system has no implementation.
	ErrUnsupported = errors.New("listener: unsupported operating system")
)

// Listen returns the helper's listener and where it came from, trying in order: systemd
// socket activation (LISTEN_PID must be this process; the LISTEN_* variables are unset
// afterwards so children never see them), launchd (darwin), then a socket created at
// cfg.Path. Activated sockets must be Unix stream sockets, since peer credentials need one.
// When a service manager passed sockets but none is usable, Listen fails (ErrActivation)
// instead of falling back to cfg.Path. A socket created at cfg.Path is removed when the
// listener is closed. On any error nothing is left open.
//
// Creating the socket sets the process umask to 0777 for the duration of bind(2), so the
// socket is never reachable with more permissions than cfg.Mode; call Listen before starting
// goroutines that create files.
func Listen(cfg Config) (net.Listener, Source, error) {
	l, ok, err := systemdListener(cfg.Names)
	if err != nil {
		return nil, "", fmt.Errorf("systemd socket activation: %w", err)
	}
	if ok {
		return l, SourceSystemd, nil
	}
	l, ok, err = launchdListener(cfg.Names)
	switch {
	case errors.Is(err, ErrNoCgo) && cfg.Path != "":
		// Not able to ask launchd; the explicit path still works.
	case err != nil:
		return nil, "", fmt.Errorf("launchd socket activation: %w", err)
	case ok:
		return l, SourceLaunchd, nil
	}
	if cfg.Path == "" {
		if err != nil {
			return nil, "", errors.Join(ErrNoListener, err)
		}
		return nil, "", ErrNoListener
	}
	l, err = listenPath(cfg)
	if err != nil {
		return nil, "", err
	}
	return l, SourcePath, nil
}

// acceptsName reports whether an activation socket called name is one of names (any name
// when names is empty).
func acceptsName(names []string, name string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
