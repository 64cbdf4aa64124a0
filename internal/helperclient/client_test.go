package helperclient_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// TestMain lets the test binary serve a socket in a child process (as another uid):
// HELPERCLIENT_TEST_LISTEN=path listens there, prints "ready" and accepts until killed.
func TestMain(m *testing.M) {
	if path := os.Getenv("HELPERCLIENT_TEST_LISTEN"); path != "" {
		l, err := net.Listen("unix", path)
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		os.Chmod(path, 0o777)
		fmt.Println("ready")
		for {
			c, err := l.Accept()
			if err != nil {
				os.Exit(0)
			}
			c.Close()
		}
	}
	os.Exit(m.Run())
}

func TestDefaultSocket(t *testing.T) {
	cases := []struct {
		name          string
		role          helperclient.Role
		user, root, x string
		want          string
		wantErr       bool
	}{
		{"user-xdg", helperclient.User, "", "", "/run/user/1000", "/run/user/1000/s-code/user.sock", false},
		{"user-env", helperclient.User, "/tmp/u.sock", "", "/run/user/1000", "/tmp/u.sock", false},
		{"user-no-xdg", helperclient.User, "", "", "", "", true},
		{"user-relative-xdg", helperclient.User, "", "", "run", "", true},
		{"root-default", helperclient.Root, "/tmp/u.sock", "", "/run/user/1000", "/run/s-code/root.sock", false},
		{"root-env", helperclient.Root, "", "/tmp/r.sock", "", "/tmp/r.sock", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(helperclient.UserSocketEnv, tc.user)
			t.Setenv(helperclient.RootSocketEnv, tc.root)
			t.Setenv("XDG_RUNTIME_DIR", tc.x)
			got, err := helperclient.DefaultSocket(tc.role)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("DefaultSocket = %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestDialNoHelper(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	for name, sock := range map[string]string{"missing": filepath.Join(dir, "none.sock"), "stale": stale} {
		t.Run(name, func(t *testing.T) {
			_, err := helperclient.Dial(context.Background(), helperclient.User, sock)
			var nh *helperclient.NoHelperError
			if !errors.As(err, &nh) || !strings.Contains(err.Error(), "s-code-userhelper --listen "+sock) {
				t.Fatalf("Dial = %v, want a NoHelperError saying how to start one", err)
			}
		})
	}
	_, err = helperclient.Dial(context.Background(), helperclient.Root, filepath.Join(dir, "none.sock"))
	if err == nil || !strings.Contains(err.Error(), "s-code-roothelper") || !strings.Contains(err.Error(), "roothelper.toml") {
		t.Fatalf("Dial root = %v", err)
	}
}

// TestNoHelperPermission: a socket the caller may not open (EACCES) is not reported as
// "no helper is listening", and the hint says who may open it.
func TestNoHelperPermission(t *testing.T) {
	for _, tc := range []struct {
		name string
		role helperclient.Role
		want string
	}{
		{"user", helperclient.User, "belongs to another user"},
		{"root", helperclient.Root, "group s-code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := (&helperclient.NoHelperError{Role: tc.role, Socket: "/run/x.sock", Err: syscall.EACCES}).Error()
			if strings.Contains(msg, "no "+tc.role.String()+" helper is listening") || !strings.Contains(msg, "cannot open") || !strings.Contains(msg, tc.want) {
				t.Fatalf("Error() = %q, want \"cannot open\" and %q", msg, tc.want)
			}
		})
	}
}

// TestDialImpostor: a socket served by another uid is refused, for both roles.
func TestDialImpostor(t *testing.T) {
	testenv.RequireRoot(t)
	exe := testenv.PublicExecutable(t)
	dir := testenv.PublicDir(t)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "h.sock")
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = []string{"HELPERCLIENT_TEST_LISTEN=" + sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("child: %q %v", buf, err)
	}
	for _, role := range []helperclient.Role{helperclient.User, helperclient.Root} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := helperclient.Dial(ctx, role, sock)
		cancel()
		var ie *helperclient.ImpostorError
		if !errors.As(err, &ie) || ie.UID != 65534 || ie.WantUID != 0 {
			t.Errorf("Dial(%v) = %v, want an ImpostorError for uid 65534", role, err)
		}
	}
}

func TestForwardedEnv(t *testing.T) {
	got := helperclient.ForwardedEnv([]string{
		"LANG=en_US.UTF-8", "LC_ALL=C.UTF-8", "LC_TIME=/tmp/evil", "TERM=xterm-256color", "TERM_PROGRAM=x",
		"TZ=Europe/Berlin", "COLORTERM=truecolor", "LD_PRELOAD=/tmp/x.so", "HOME=/root", "PATH=/tmp", "GIT_DIR=/x",
		"TZ2=x", "NO_COLOR=1", "LC_BAD NAME=x", "LANGUAGE=de:en",
	})
	want := map[string]string{"LANG": "en_US.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color", "TZ": "Europe/Berlin", "COLORTERM": "truecolor", "NO_COLOR": "1", "LANGUAGE": "de:en"}
	if len(got) != len(want) {
		t.Fatalf("ForwardedEnv = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// TestDialNoAnswer: a socket whose server accepts connections (as the caller's uid) but never
// speaks gRPC is a NoAnswerError from Dial, whether it closes each connection at once (a
// socket unit whose service fails to start) or keeps it open in silence (a hung helper).
func TestDialNoAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		close bool
		want  string
	}{
		{"closes", true, "closed the connection without a gRPC handshake"},
		{"silent", false, "context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "deaf.sock")
			l, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			var held []net.Conn
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					if tc.close {
						c.Close()
					} else {
						held = append(held, c)
					}
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err = helperclient.Dial(ctx, helperclient.User, sock)
			var na *helperclient.NoAnswerError
			if !errors.As(err, &na) || !strings.Contains(err.Error(), "never answered") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Dial = %v, want a NoAnswerError with %q", err, tc.want)
			}
			l.Close()
			<-done
			for _, c := range held {
				c.Close()
			}
		})
	}
}
