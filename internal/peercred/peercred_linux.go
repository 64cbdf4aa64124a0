package peercred

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxGroups bounds SO_PEERGROUPS (the kernel's NGROUPS_MAX is 65536).
const maxGroups = 65536

// get reads SO_PEERCRED (socket(7)), SO_PEERGROUPS (Linux 4.13+) and SO_PEERPIDFD
// (Linux 6.5+). The pidfd pins the peer's pid while /proc/<pid>/exe is read: after the
// read, a signal-0 probe through the pidfd proves the process is still the one that
// connected, so the path cannot belong to a process that reused the pid. Without a pidfd
// (ENOPROTOOPT on older kernels) Exe is left empty.
func get(raw rawConn) (*Creds, error) {
	var (
		ucred     *unix.Ucred
		groups    []uint32
		groupsErr error
		pidfd     = -1
		pidfdErr  error
		credErr   error
	)
	err := raw.Control(func(fd uintptr) {
		ucred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if credErr != nil {
			return
		}
		groups, groupsErr = peerGroups(int(fd))
		pidfd, pidfdErr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	})
	if err != nil {
		return nil, fmt.Errorf("peercred: control: %w", err)
	}
	if credErr != nil {
		return nil, fmt.Errorf("getsockopt SO_PEERCRED: %w", credErr)
	}
	if pidfdErr == nil {
		defer unix.Close(pidfd)
	} else if !errors.Is(pidfdErr, unix.ENOPROTOOPT) && !errors.Is(pidfdErr, unix.ESRCH) {
		// ESRCH: the peer has exited already (or lives in an unrelated pid namespace).
		return nil, fmt.Errorf("getsockopt SO_PEERPIDFD: %w", pidfdErr)
	}
	c := &Creds{UID: ucred.Uid, GID: ucred.Gid, PID: ucred.Pid}
	switch {
	case groupsErr == nil:
		c.Groups, c.GroupsKnown = groups, true
	case errors.Is(groupsErr, unix.ENOPROTOOPT):
		// Kernel before 4.13: fall back to /proc, trusted only when the pidfd proves
		// the process is still alive after the read.
	default:
		return nil, fmt.Errorf("getsockopt SO_PEERGROUPS: %w", groupsErr)
	}
	if pidfdErr != nil || c.PID <= 0 {
		return c, nil
	}
	exe, exeErr := os.Readlink("/proc/" + strconv.Itoa(int(c.PID)) + "/exe")
	var procGroups []uint32
	var procErr error = errors.New("not read")
	if !c.GroupsKnown {
		procGroups, procErr = procStatusGroups(c.PID)
	}
	if unix.PidfdSendSignal(pidfd, 0, nil, 0) != nil {
		// The peer is gone: what /proc said may describe another process.
		return c, nil
	}
	if exeErr == nil {
		c.Exe = exe
	}
	if procErr == nil {
		c.Groups, c.GroupsKnown = procGroups, true
	}
	return c, nil
}

// peerGroups reads SO_PEERGROUPS: the peer's supplementary groups at connect time.
func peerGroups(fd int) ([]uint32, error) {
	n := 64
	for {
		buf := make([]uint32, n)
		size := uint32(n * 4)
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_PEERGROUPS,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0)
		switch {
		case e == 0:
			return buf[:size/4], nil
		case e == unix.ERANGE && int(size/4) > n && int(size/4) <= maxGroups:
			n = int(size / 4)
		default:
			return nil, e
		}
	}
}

// procStatusGroups reads the Groups: line of /proc/<pid>/status (proc(5)).
func procStatusGroups(pid int32) ([]uint32, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(int(pid)) + "/status")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Groups:")
		if !ok {
			continue
		}
		var gs []uint32
		for _, w := range strings.Fields(rest) {
			g, err := strconv.ParseUint(w, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("parse /proc/%d/status Groups: %w", pid, err)
			}
			gs = append(gs, uint32(g))
		}
		return gs, nil
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /proc/%d/status: %w", pid, err)
	}
	return nil, fmt.Errorf("/proc/%d/status has no Groups: line", pid)
}
