package peercred_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/peercred"
)

func setNoNewPrivs() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }

// ownSeccompFilters reads this process's Seccomp_filters: from /proc/self/status.
func ownSeccompFilters(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp_filters:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatal("no Seccomp_filters: line")
	return 0
}

// hasPeerPidfd reports whether the kernel has SO_PEERPIDFD (Linux 6.5+).
func hasPeerPidfd(t *testing.T) bool {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	fd, err := unix.GetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	if err == nil {
		unix.Close(fd)
	}
	return err == nil
}

// TestGetStatus checks the confinement status read at accept time: a peer that set
// no_new_privs before it connected reads so, pinned by its pidfd; this process does not.
func TestGetStatus(t *testing.T) {
	if !peercred.ReadsProcStatus() {
		t.Fatal("Linux reads the peer's status")
	}
	for _, nnp := range []bool{false, true} {
		l, path := listen(t)
		if nnp {
			t.Setenv("PEERCRED_NNP", "1")
		} else {
			t.Setenv("PEERCRED_NNP", "")
		}
		cmd := dialChild(t, path, -1, true)
		srv := accept(t, l)
		srv.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := srv.Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		c, err := peercred.Get(srv)
		if err != nil {
			t.Fatal(err)
		}
		srv.Close()
		cmd.Wait()
		if !c.Status.Known || c.Status.NoNewPrivs != nnp || c.Status.SeccompFilters != ownSeccompFilters(t) {
			t.Errorf("nnp %v: status %+v", nnp, c.Status)
		}
		if hasPeerPidfd(t) && !c.Status.Pinned {
			t.Errorf("status not pinned on a kernel with SO_PEERPIDFD: %+v", c.Status)
		}
	}
}
