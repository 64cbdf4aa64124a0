package peercred_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/peercred"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// TestMain lets the test binary act as a socket client in a child process: with
// PEERCRED_DIAL=path it connects, writes one byte and, with PEERCRED_HOLD=1, waits for the
// server to close the connection before it exits.
func TestMain(m *testing.M) {
	if path := os.Getenv("PEERCRED_DIAL"); path != "" {
		if os.Getenv("PEERCRED_NNP") == "1" {
			if err := setNoNewPrivs(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
		}
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		c.Write([]byte{1})
		if os.Getenv("PEERCRED_HOLD") == "1" {
			c.Read(make([]byte, 1))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func listen(t *testing.T) (*net.UnixListener, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

func accept(t *testing.T, l *net.UnixListener) *net.UnixConn {
	t.Helper()
	l.SetDeadline(time.Now().Add(10 * time.Second))
	c, err := l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestGetOwnProcess(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("peer credentials are implemented on Linux and macOS")
	}
	l, path := listen(t)
	cli, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	srv := accept(t, l)
	c, err := peercred.Get(srv)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if c.UID != uint32(os.Geteuid()) || c.GID != uint32(os.Getegid()) {
		t.Errorf("uid/gid = %d/%d, want %d/%d", c.UID, c.GID, os.Geteuid(), os.Getegid())
	}
	if c.PID != int32(os.Getpid()) {
		t.Errorf("pid = %d, want %d", c.PID, os.Getpid())
	}
	if !c.GroupsKnown {
		t.Errorf("groups unknown on a current kernel")
	}
	want, _ := os.Getgroups()
	for _, g := range want {
		if !c.InGroup(uint32(g)) {
			t.Errorf("InGroup(%d) = false; groups %v", g, c.Groups)
		}
	}
	if runtime.GOOS == "linux" {
		exe, _ := os.Executable()
		if c.Exe != exe {
			t.Errorf("exe = %q, want %q", c.Exe, exe)
		}
	}
	// The connection stays usable (Get must not switch it to blocking mode or dup it).
	if _, err := cli.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	srv.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := srv.Read(make([]byte, 1)); err != nil {
		t.Fatalf("read after Get: %v", err)
	}
}

func TestGetRefusesOtherConns(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := peercred.Get(a); !errors.Is(err, peercred.ErrNotUnixSocket) {
		t.Fatalf("Get(net.Pipe) = %v, want ErrNotUnixSocket", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	tc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if _, err := peercred.Get(tc); !errors.Is(err, peercred.ErrNotUnixSocket) {
		t.Fatalf("Get(tcp) = %v, want ErrNotUnixSocket", err)
	}
}

// dialChild starts the test binary as a socket client, as uid when uid >= 0.
func dialChild(t *testing.T, path string, uid int, hold bool) *exec.Cmd {
	t.Helper()
	exe := os.Args[0]
	if uid >= 0 {
		exe = testenv.PublicExecutable(t)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "PEERCRED_DIAL="+path)
	if hold {
		cmd.Env = append(cmd.Env, "PEERCRED_HOLD=1")
	}
	cmd.Stderr = os.Stderr
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{4242}}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func TestGetOtherUser(t *testing.T) {
	testenv.RequireRoot(t)
	path := filepath.Join(testenv.PublicDir(t), "s.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := dialChild(t, path, 65534, true)
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
	if c.UID != 65534 || c.GID != 65534 || int(c.PID) != cmd.Process.Pid {
		t.Errorf("creds = %+v, want uid/gid 65534 pid %d", c, cmd.Process.Pid)
	}
	if !c.InGroup(4242) || c.InGroup(0) {
		t.Errorf("groups = %v, want 4242 and not 0", c.Groups)
	}
}

// TestGetPeerGone checks that a peer that exited before the read still yields its uid (the
// kernel keeps the connect-time credentials) but no executable path, which could belong to
// another process by then.
func TestGetPeerGone(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pidfd is Linux-only")
	}
	l, path := listen(t)
	cmd := dialChild(t, path, -1, false)
	srv := accept(t, l)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	c, err := peercred.Get(srv)
	if err != nil {
		t.Fatal(err)
	}
	if c.UID != uint32(os.Geteuid()) {
		t.Errorf("uid = %d, want %d", c.UID, os.Geteuid())
	}
	if c.Exe != "" {
		t.Errorf("exe = %q for an exited peer, want empty", c.Exe)
	}
	if c.Status.Known {
		t.Errorf("status of an exited peer is known: %+v (it could be another process's)", c.Status)
	}
	if !c.GroupsKnown {
		t.Errorf("groups from SO_PEERGROUPS should survive the peer: %+v", c)
	}
}
