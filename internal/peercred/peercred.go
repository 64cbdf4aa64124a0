package peercred

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// Creds are a peer's credentials as the kernel recorded them when the peer connected
// (Linux: connect(2) time for SO_PEERCRED and SO_PEERGROUPS; macOS: LOCAL_PEERCRED).
// The uid is the identity; a pid only helps a person read the audit log, since pids are
// reused.
type Creds struct {
	// UID is the peer's effective user id.
	UID uint32
	// GID is the peer's effective (primary) group id.
	GID uint32
	// Groups are the peer's supplementary group ids; valid only when GroupsKnown.
	Groups []uint32
	// GroupsKnown reports whether Groups came from the kernel (SO_PEERGROUPS, xucred) or
	// from /proc read while a pidfd proved the process alive. When false, authorize by UID
	// and GID alone.
	GroupsKnown bool
	// PID is the peer's process id in the reader's pid namespace; 0 when unknown (a peer in
	// another pid namespace, or a system that does not report it).
	PID int32
	// Exe is the peer's executable path where it could be read reliably; "" otherwise.
	Exe string
	// Status is what the kernel said about the peer process when the connection was
	// accepted (Linux: /proc/PID/status); see ProcStatus.
	Status ProcStatus
}

// ProcStatus is the part of a peer process's state that tells whether it runs confined,
// read once when the connection is accepted (Linux: /proc/PID/status, proc(5)), so that a
// later check never reads a process that reused the pid.
type ProcStatus struct {
	// Known reports whether the fields below were read; false when the peer had gone, lives
	// in another pid namespace (PID 0), or the system has no such source (macOS).
	Known bool
	// Pinned reports whether a pidfd (SO_PEERPIDFD, Linux 6.5+) proved after the read that
	// the process read was the one that connected. Without one the read happens during the
	// handshake, right after accept, but a pid reused in between cannot be ruled out.
	Pinned bool
	// NoNewPrivs is the peer's no_new_privs flag (prctl(2) PR_SET_NO_NEW_PRIVS).
	NoNewPrivs bool
	// SeccompFilters is the number of seccomp filters the peer runs under.
	SeccompFilters int
}

// InGroup reports whether gid is the peer's primary group or, when GroupsKnown, one of its
// supplementary groups.
func (c *Creds) InGroup(gid uint32) bool {
	if c.GID == gid {
		return true
	}
	if !c.GroupsKnown {
		return false
	}
	for _, g := range c.Groups {
		if g == gid {
			return true
		}
	}
	return false
}

// String formats the credentials for logs: "uid=1000 gid=1000 pid=4242".
func (c *Creds) String() string {
	return fmt.Sprintf("uid=%d gid=%d pid=%d", c.UID, c.GID, c.PID)
}

// ErrUnsupported is returned on systems where this package cannot read peer credentials.
var ErrUnsupported = errors.New("peercred: peer credentials are not supported on this system")

// ErrNotUnixSocket is returned for a connection that is not a Unix-domain socket.
var ErrNotUnixSocket = errors.New("peercred: connection is not a Unix-domain socket")

// Get returns the peer credentials of c, which must be a Unix-domain socket connection
// (a *net.UnixConn). It reads them through SyscallConn().Control, never conn.File(), so c
// stays in non-blocking mode. It fails with ErrNotUnixSocket for other connections,
// ErrUnsupported on systems without an implementation, or the wrapped getsockopt error;
// it never returns partial credentials with a nil error.
func Get(c net.Conn) (*Creds, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, fmt.Errorf("%w (got %T)", ErrNotUnixSocket, c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("peercred: SyscallConn: %w", err)
	}
	return get(raw)
}

// rawConn is the part of syscall.RawConn that get uses.
type rawConn = syscall.RawConn
