package execrun

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A commandCgroup is the cgroup v2 of one command (cgroups(7)): a new child of the helper's
// own cgroup that the command's first process is cloned into (clone3 CLONE_INTO_CGROUP), so
// that every process it starts is in it, whatever it does with sessions and process groups,
// and that writing "1" to its cgroup.kill ends them all at once.
type commandCgroup struct {
	dir string
	fd  int // the directory, open, for SysProcAttr.CgroupFD
}

var (
	cgroupOnce sync.Once
	// cgroupParent is the helper's own cgroup directory where commands get theirs, or ""
	// when the helper cannot make cgroups there (set once, by cgroupUsable).
	cgroupParent string
	cgroupSeq    atomic.Uint64
)

// cgroupUsable returns the directory of the helper's own cgroup v2 when the helper can give
// each command a cgroup of its own there: a cgroup2 file system is mounted, the helper may
// make a directory in its cgroup, and a child cloned into it (a probe whose execve of a
// path that does not exist must be its only failure) is accepted, and the kernel has
// cgroup.kill (5.14). As an ordinary user
// without a delegated cgroup, or on cgroup v1 only, it returns "". It probes once per
// process.
func cgroupUsable() string {
	cgroupOnce.Do(func() {
		parent, err := ownCgroupDir()
		if err != nil {
			return
		}
		cg, err := makeCgroup(parent)
		if err != nil {
			return
		}
		defer cg.remove()
		if _, err := os.Stat(filepath.Join(cg.dir, "cgroup.kill")); err != nil {
			return // a kernel before 5.14: no cgroup.kill
		}
		attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: cg.fd}}
		_, err = syscall.ForkExec("/proc/self/fd/-1/s-code-cgroup-probe", []string{"s-code-cgroup-probe"}, attr)
		if errors.Is(err, syscall.ENOENT) {
			cgroupParent = parent
			sweepCgroups(parent)
		}
	})
	return cgroupParent
}

// sweepCgroups ends the commands left by helpers that were killed outright (their cgroups
// s-code-cmd-PID-N beneath parent, where no process PID is alive): each is killed as a whole
// and removed. Under systemd the unit's KillMode=control-group ends them at once instead.
func sweepCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "s-code-cmd-")
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		c := &commandCgroup{dir: filepath.Join(parent, e.Name()), fd: -1}
		if c.kill(time.Second) {
			os.Remove(c.dir)
		}
	}
}

// CommandCgroups reports whether Start puts each command in a cgroup of its own here (see
// cgroupUsable): cgroup v2 with cgroup.kill, and a cgroup where this process may make one.
func CommandCgroups() bool { return cgroupUsable() != "" }

// cgroup2Mount returns the mount point of the cgroup2 file system (proc(5) mountinfo).
func cgroup2Mount() (string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(g) >= 1 && g[0] == "cgroup2" && f[3] == "/" {
			return f[4], nil
		}
	}
	return "", errors.New("no cgroup2 file system is mounted")
}

// ownCgroupDir returns the directory of this process's cgroup v2 (proc(5) /proc/self/cgroup,
// the "0::PATH" line).
func ownCgroupDir() (string, error) {
	mnt, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && filepath.IsAbs(p) {
			return filepath.Join(mnt, p), nil
		}
	}
	return "", errors.New("this process has no cgroup v2")
}

// makeCgroup makes a new cgroup for one command beneath parent and opens it.
func makeCgroup(parent string) (*commandCgroup, error) {
	dir := filepath.Join(parent, "s-code-cmd-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(cgroupSeq.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("execrun: make cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("execrun: open cgroup: %w", err)
	}
	return &commandCgroup{dir: dir, fd: fd}, nil
}

// newCommandCgroup returns a cgroup for one command when the helper can make one (see
// cgroupUsable), else nil.
func newCommandCgroup() *commandCgroup {
	parent := cgroupUsable()
	if parent == "" {
		return nil
	}
	cg, err := makeCgroup(parent)
	if err != nil {
		return nil
	}
	return cg
}

// apply makes the command's first process start in the cgroup.
func (c *commandCgroup) apply(a *syscall.SysProcAttr) {
	if c == nil {
		return
	}
	a.UseCgroupFD = true
	a.CgroupFD = c.fd
}

// kill ends every process in the cgroup (cgroup.kill) and waits up to d until none is left
// (cgroup.events "populated 0"); it reports whether the cgroup is empty.
func (c *commandCgroup) kill(d time.Duration) bool {
	if c == nil {
		return true
	}
	os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	deadline := time.Now().Add(d)
	for {
		b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
		if err != nil || bytes.Contains(b, []byte("populated 0")) {
			return err == nil
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// remove closes and removes the (empty) cgroup.
func (c *commandCgroup) remove() {
	if c == nil {
		return
	}
	if c.fd >= 0 {
		unix.Close(c.fd)
	}
	os.Remove(c.dir)
}
