package peercred

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// xucredVersion is XUCRED_VERSION from <sys/ucred.h>.
const xucredVersion = 0

// get reads LOCAL_PEERCRED (an xucred: uid and up to 16 groups, the first being the
// effective gid) and LOCAL_PEERPID (unix(4)). The executable path is left empty: reading it
// needs libproc, and a pid alone cannot pin the process.
func get(raw rawConn) (*Creds, error) {
	var (
		xu      *unix.Xucred
		pid     int
		credErr error
		pidErr  error
	)
	err := raw.Control(func(fd uintptr) {
		xu, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if credErr != nil {
			return
		}
		pid, pidErr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	})
	if err != nil {
		return nil, fmt.Errorf("peercred: control: %w", err)
	}
	if credErr != nil {
		return nil, fmt.Errorf("getsockopt LOCAL_PEERCRED: %w", credErr)
	}
	if xu.Version != xucredVersion {
		return nil, fmt.Errorf("getsockopt LOCAL_PEERCRED: xucred version %d, want %d", xu.Version, xucredVersion)
	}
	if xu.Ngroups < 1 || int(xu.Ngroups) > len(xu.Groups) {
		return nil, fmt.Errorf("getsockopt LOCAL_PEERCRED: %d groups", xu.Ngroups)
	}
	c := &Creds{UID: xu.Uid, GID: xu.Groups[0], Groups: append([]uint32(nil), xu.Groups[1:xu.Ngroups]...), GroupsKnown: true}
	if pidErr != nil {
		return nil, fmt.Errorf("getsockopt LOCAL_PEERPID: %w", pidErr)
	}
	c.PID = int32(pid)
	return c, nil
}

// ReadsProcStatus reports whether this system fills Creds.Status (macOS: no; there is no
// /proc, and a pid alone cannot pin the process).
func ReadsProcStatus() bool { return false }
