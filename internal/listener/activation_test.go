package listener

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// startHelper starts cmd (which ends by exec'ing this test binary in helper mode) and returns
// its stdout buffer and a wait function.
func startHelper(t *testing.T, cmd *exec.Cmd) (*syncBuffer, func() error) {
	t.Helper()
	out := &syncBuffer{}
	errOut := &syncBuffer{}
	cmd.Stdout = out
	cmd.Stderr = errOut
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("helper stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	})
	return out, func() error {
		select {
		case err := <-done:
			done <- err
			return err
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("helper did not exit; output so far: %s", out.String())
			return nil
		}
	}
}

// ask connects to path, sends "ping" and returns the answer line (empty on EOF).
func ask(t *testing.T, path string) string {
	t.Helper()
	var c net.Conn
	var err error
	for i := 0; i < 100; i++ { // systemd-socket-activate binds just after it starts
		if c, err = net.Dial("unix", path); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		t.Fatalf("write: %v", err)
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

func helperEnviron(extra ...string) []string {
	env := []string{helperEnv + "=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LISTEN_") && !strings.HasPrefix(kv, "S_CODE_LISTENER_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// TestSystemdSocketActivate runs the helper under the real systemd-socket-activate(1), which
// binds the socket, waits for a connection, then execs the helper with LISTEN_FDS=1,
// LISTEN_PID and LISTEN_FDNAMES set.
func TestSystemdSocketActivate(t *testing.T) {
	ssa := testenv.RequireTool(t, "systemd-socket-activate")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, fdname, names string
		wantStatus          string // the helper's first stdout line
		wantAnswer          string
	}{
		{"named", UserSocketName, UserSocketName, "source=systemd listen_env=", "systemd ping"},
		{"one of several names", RootSocketName, UserSocketName + "," + RootSocketName, "source=systemd listen_env=", "systemd ping"},
		{"any name when none asked", "whatever", "", "source=systemd listen_env=", "systemd ping"},
		{"wrong name refused, no fallback to the path", "other", UserSocketName, "error=activation", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "act.sock")
			// systemd-socket-activate passes only TERM, PATH, USER, HOME and -E variables on.
			// The path is given too: an activated socket must win over it, and a bad one must
			// not fall back to it.
			cmd := exec.Command(ssa, "-l", path, "--fdname="+tc.fdname,
				"-E", helperEnv+"=1",
				"-E", "S_CODE_LISTENER_NAMES="+tc.names,
				"-E", "S_CODE_LISTENER_PATH="+filepath.Join(dir, "own.sock"),
				self, "-test.run=^$")
			cmd.Env = helperEnviron()
			out, wait := startHelper(t, cmd)
			got := ask(t, path)
			wait()
			status, _, _ := strings.Cut(out.String(), "\n")
			if !strings.HasPrefix(status, tc.wantStatus) {
				t.Errorf("helper status = %q, want prefix %q", status, tc.wantStatus)
			}
			if got != tc.wantAnswer {
				t.Errorf("answer = %q, want %q", got, tc.wantAnswer)
			}
			if _, err := os.Lstat(filepath.Join(dir, "own.sock")); err == nil {
				t.Errorf("helper created its own socket although systemd passed one")
			}
		})
	}
}

// TestActivationProtocol passes descriptors by hand (sh exports LISTEN_PID=$$ and execs the
// helper, so the pid matches) to cover what systemd-socket-activate cannot produce.
func TestActivationProtocol(t *testing.T) {
	sh := testenv.RequireTool(t, "sh")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unixFile := func(t *testing.T, path string) *os.File {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		f, err := l.File()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	for _, tc := range []struct {
		name string
		// fds returns the descriptors to pass as 3, 4, … and the LISTEN_FDNAMES value.
		fds        func(t *testing.T, dir string) ([]*os.File, string)
		pid        string // LISTEN_PID: "self" for the helper's own pid
		names      string
		path       bool   // also give S_CODE_LISTENER_PATH=dir/own.sock
		wantStatus string // prefix of the helper's first line
		dial       string // socket (in dir) to ask, "" for none
		wantAnswer string
	}{
		{
			name: "unix socket taken",
			fds: func(t *testing.T, dir string) ([]*os.File, string) {
				return []*os.File{unixFile(t, filepath.Join(dir, "a.sock"))}, UserSocketName
			},
			pid: "self", names: UserSocketName,
			wantStatus: "source=systemd listen_env=", dial: "a.sock", wantAnswer: "systemd ping",
		},
		{
			name: "tcp socket refused",
			fds: func(t *testing.T, dir string) ([]*os.File, string) {
				l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				f, err := l.File()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				return []*os.File{f}, UserSocketName
			},
			pid: "self", names: UserSocketName, path: true,
			wantStatus: "error=activation",
		},
		{
			name: "bound but not listening refused",
			fds: func(t *testing.T, dir string) ([]*os.File, string) {
				fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := unix.Bind(fd, &unix.SockaddrUnix{Name: filepath.Join(dir, "a.sock")}); err != nil {
					t.Fatal(err)
				}
				f := os.NewFile(uintptr(fd), "unlistened")
				t.Cleanup(func() { f.Close() })
				return []*os.File{f}, UserSocketName
			},
			pid: "self", names: UserSocketName, path: true,
			wantStatus: "error=activation",
		},
		{
			name: "two sockets without names refused",
			fds: func(t *testing.T, dir string) ([]*os.File, string) {
				return []*os.File{unixFile(t, filepath.Join(dir, "a.sock")), unixFile(t, filepath.Join(dir, "b.sock"))}, "x:y"
			},
			pid: "self", wantStatus: "error=activation",
		},
		{
			name: "two sockets, the named one chosen",
			fds: func(t *testing.T, dir string) ([]*os.File, string) {
				return []*os.File{unixFile(t, filepath.Join(dir, "a.sock")), unixFile(t, filepath.Join(dir, "b.sock"))}, "other:" + RootSocketName
			},
			pid: "self", names: RootSocketName,
			wantStatus: "source=systemd listen_env=", dial: "b.sock", wantAnswer: "systemd ping",
		},
		{
			name: "LISTEN_PID of another process ignored and unset",
			fds: func(t *testing.T, dir string) ([]*os.File, string) {
				return []*os.File{unixFile(t, filepath.Join(dir, "a.sock"))}, UserSocketName
			},
			pid: "1", names: UserSocketName, path: true,
			wantStatus: "source=path listen_env=", dial: "own.sock", wantAnswer: "path ping",
		},
		{
			name: "no activation and no path",
			fds:  func(t *testing.T, dir string) ([]*os.File, string) { return nil, "" },
			pid:  "", wantStatus: "error=no-listener",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files, fdnames := tc.fds(t, dir)
			env := []string{"S_CODE_LISTENER_NAMES=" + tc.names}
			if tc.path {
				env = append(env, "S_CODE_LISTENER_PATH="+filepath.Join(dir, "own.sock"))
			}
			script := `exec "$0" -test.run='^$'`
			if len(files) > 0 {
				env = append(env, "LISTEN_FDS="+strconv.Itoa(len(files)), "LISTEN_FDNAMES="+fdnames)
				if tc.pid == "self" {
					script = `LISTEN_PID=$$; export LISTEN_PID; ` + script
				} else {
					env = append(env, "LISTEN_PID="+tc.pid)
				}
			}
			cmd := exec.Command(sh, "-c", script, self)
			cmd.Env = helperEnviron(env...)
			cmd.ExtraFiles = files
			out, wait := startHelper(t, cmd)
			var got string
			if tc.dial != "" {
				got = ask(t, filepath.Join(dir, tc.dial))
			}
			wait()
			status, _, _ := strings.Cut(out.String(), "\n")
			if !strings.HasPrefix(status, tc.wantStatus) {
				t.Errorf("helper status = %q, want prefix %q", status, tc.wantStatus)
			}
			if got != tc.wantAnswer {
				t.Errorf("answer = %q, want %q", got, tc.wantAnswer)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for exec.Cmd's copying goroutine and the test.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
