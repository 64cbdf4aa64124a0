package hostproc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Containment names how a host process and its children are held together.
const (
	ContainCgroup  = "cgroup"  // a cgroup v2 of its own (cgroup.kill ends every member)
	ContainSession = "session" // its own session and process group only (children that call setsid escape)
)

// cgroupRoot returns the directory of the calling process's own cgroup v2: the cgroup2
// mount (proc(5) mountinfo) joined with the 0:: line of /proc/self/cgroup.
func cgroupRoot() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	own := ""
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			own = p
		}
	}
	if own == "" {
		return "", errors.New("cgroup: this process is in no cgroup v2")
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		fields := strings.Fields(sc.Text())
		for i, fl := range fields {
			if fl == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				root, mnt := fields[3], fields[4]
				rel, ok := strings.CutPrefix(own, root)
				if !ok {
					continue
				}
				return filepath.Join(mnt, rel), nil
			}
		}
	}
	return "", errors.New("cgroup: no cgroup2 mount holds this process's cgroup")
}

// newCgroup makes the cgroup dir (mode 0755) and opens it for clone3's CLONE_INTO_CGROUP.
func newCgroup(dir string) (int, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return -1, fmt.Errorf("cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return -1, fmt.Errorf("cgroup: open %s: %w", dir, err)
	}
	return fd, nil
}

// sysProcAttr starts the process as the leader of a new session (and so of a new process
// group), with a controlling terminal when tty, in the cgroup cgFD when cgFD >= 0, and, unless
// detached, with SIGKILL as its parent-death signal (prctl(2) PR_SET_PDEATHSIG).
func sysProcAttr(tty bool, cgFD int, detached bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true, Setctty: tty}
	if cgFD >= 0 {
		a.UseCgroupFD, a.CgroupFD = true, cgFD
	}
	if !detached {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}

// members returns the live processes of a host process: those in its cgroup (when dir is
// set), those in its session sid (proc(5) stat field 6), sid itself included, and every
// descendant of those (a child that called setsid(2) while its parent lives).
func members(sid int, dir string) []int {
	seen := map[int]bool{}
	var out []int
	add := func(pid int) {
		if pid > 0 && !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	if dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
			for _, f := range strings.Fields(string(b)) {
				n, _ := strconv.Atoi(f)
				add(n)
			}
		}
	}
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// comm may hold spaces and parentheses: the fields start after the last ")".
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp session ...
		if len(f) < 4 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
		if n, _ := strconv.Atoi(f[3]); n == sid {
			add(pid)
		}
	}
	for i := 0; i < len(out); i++ {
		for _, c := range children[out[i]] {
			add(c)
		}
	}
	return out
}

// signalAll sends sig to the process group sid and to every member.
func signalAll(sid int, dir string, sig syscall.Signal) {
	_ = syscall.Kill(-sid, sig)
	for _, pid := range members(sid, dir) {
		_ = syscall.Kill(pid, sig)
	}
}

// killAll ends every member at once: cgroup.kill (Linux 5.14) for the cgroup, SIGKILL for
// the session's processes.
func killAll(sid int, dir string) {
	if dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	}
	signalAll(sid, dir, syscall.SIGKILL)
}

// removeCgroup removes an emptied cgroup and closes its descriptor.
func removeCgroup(dir string, fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
	if dir != "" {
		_ = os.Remove(dir)
	}
}
