package peercred

import (
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

// ReadsProcStatus reports whether this system fills Creds.Status (Linux: yes).
func ReadsProcStatus() bool { return true }

// get reads SO_PEERCRED (socket(7)), SO_PEERGROUPS (Linux 4.13+) and SO_PEERPIDFD
// (Linux 6.5+), then /proc/<pid>/exe and /proc/<pid>/status (Status; Groups when
// SO_PEERGROUPS is missing). The pidfd pins the peer's pid while /proc is read: after the
// reads, a signal-0 probe through the pidfd proves the process is still the one that
// connected, so what was read cannot belong to a process that reused the pid; a peer gone by
// then gets no Exe and an unknown Status. Without a pidfd (ENOPROTOOPT on older kernels)
// Exe is left empty and Status is read unpinned.
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
	if c.PID <= 0 || errors.Is(pidfdErr, unix.ESRCH) {
		return c, nil
	}
	st, stErr := readProcStatus(c.PID)
	if pidfdErr != nil {
		// No pidfd on this kernel: the status is read right after accept, unpinned.
		if stErr == nil {
			c.Status = ProcStatus{Known: true, NoNewPrivs: st.noNewPrivs, SeccompFilters: st.seccompFilters}
		}
		return c, nil
	}
	exe, exeErr := os.Readlink("/proc/" + strconv.Itoa(int(c.PID)) + "/exe")
	if unix.PidfdSendSignal(pidfd, 0, nil, 0) != nil {
		// The peer is gone: what /proc said may describe another process.
		return c, nil
	}
	if exeErr == nil {
		c.Exe = exe
	}
	if stErr == nil {
		c.Status = ProcStatus{Known: true, Pinned: true, NoNewPrivs: st.noNewPrivs, SeccompFilters: st.seccompFilters}
		if !c.GroupsKnown && st.groupsErr == nil {
			c.Groups, c.GroupsKnown = st.groups, true
		}
	}
	return c, nil
}

// procStatus is what readProcStatus parses from /proc/<pid>/status.
type procStatus struct {
	groups         []uint32
	groupsErr      error // why Groups: was not read
	noNewPrivs     bool
	seccompFilters int
}

// readProcStatus reads the Groups:, NoNewPrivs: and Seccomp_filters: lines of
// /proc/<pid>/status (proc(5)). A status without NoNewPrivs: (Linux before 4.10) or
// Seccomp_filters: (before 5.9) is an error: the helper cannot tell whether the peer is
// confined.
func readProcStatus(pid int32) (procStatus, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(int(pid)) + "/status")
	if err != nil {
		return procStatus{}, err
	}
	st := procStatus{groupsErr: fmt.Errorf("/proc/%d/status has no Groups: line", pid)}
	var haveNNP, haveFilters bool
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Groups":
			st.groups, st.groupsErr = parseGroups(v)
			if st.groupsErr != nil {
				st.groupsErr = fmt.Errorf("parse /proc/%d/status Groups: %w", pid, st.groupsErr)
			}
		case "NoNewPrivs":
			n, err := strconv.Atoi(v)
			if err != nil {
				return procStatus{}, fmt.Errorf("parse /proc/%d/status NoNewPrivs: %w", pid, err)
			}
			st.noNewPrivs, haveNNP = n != 0, true
		case "Seccomp_filters":
			n, err := strconv.Atoi(v)
			if err != nil {
				return procStatus{}, fmt.Errorf("parse /proc/%d/status Seccomp_filters: %w", pid, err)
			}
			st.seccompFilters, haveFilters = n, true
		}
	}
	if !haveNNP || !haveFilters {
		return procStatus{}, fmt.Errorf("/proc/%d/status lacks NoNewPrivs: or Seccomp_filters:", pid)
	}
	return st, nil
}

func parseGroups(v string) ([]uint32, error) {
	var gs []uint32
	for _, w := range strings.Fields(v) {
		g, err := strconv.ParseUint(w, 10, 32)
		if err != nil {
			return nil, err
		}
		gs = append(gs, uint32(g))
	}
	return gs, nil
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
	st, err := readProcStatus(pid)
	if err != nil {
		return nil, err
	}
	return st.groups, st.groupsErr
}
