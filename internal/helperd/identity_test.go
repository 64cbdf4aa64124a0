package helperd_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/credentials/local"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/rootpolicy"
	"github.com/s-code-dev/s-code/internal/testenv"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// TestMain lets the test binary act as a raw gRPC client in a child process (started as
// another uid): with HELPERD_TEST_CALL=socket it calls Status and Exec and prints the gRPC
// status codes.
func TestMain(m *testing.M) {
	if sock := os.Getenv("HELPERD_TEST_FLOOD"); sock != "" {
		os.Exit(flood(sock))
	}
	if sock := os.Getenv("HELPERD_TEST_CALL"); sock != "" {
		conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(local.NewCredentials()))
		if err != nil {
			fmt.Println("dial", err)
			os.Exit(3)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c := helperv1.NewHelperClient(conn)
		_, err = c.Status(ctx, &helperv1.StatusRequest{})
		fmt.Printf("status=%s\n", status.Code(err))
		st, err := c.Exec(ctx)
		if err == nil {
			st.Send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_Start{Start: &helperv1.ExecStart{Command: "echo ran", Cwd: "/tmp", Mode: helperv1.Mode_MODE_MANUAL}}})
			for {
				ev, err2 := st.Recv()
				if err2 != nil {
					if err2 != io.EOF {
						err = err2
					}
					break
				}
				if x := ev.GetExited(); x != nil {
					fmt.Printf("exited=%d\n", x.GetExitCode())
				}
			}
		}
		fmt.Printf("exec=%s\n", status.Code(err))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// callAs runs the test binary as uid (gid uid, supplementary groups) against sock and
// returns its output.
func callAs(t *testing.T, exe, sock string, uid uint32, groups []uint32) string {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = []string{"HELPERD_TEST_CALL=" + sock, "PATH=" + execrun.SafePath}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: groups}}
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client as uid %d: %v\n%s", uid, err, out)
	}
	return string(out)
}

// publicServer serves cfg on a socket every user may connect to.
func publicServer(t *testing.T, cfg helperd.Config) (string, *memAuditor) {
	t.Helper()
	aud := &memAuditor{fail: map[audit.Kind]bool{}}
	cfg.Auditor = aud
	cfg.Runner = execrun.Plain{}
	cfg.Path = execrun.SafePath
	cfg.Home, cfg.User = "/root", "root"
	srv, err := helperd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(testenv.PublicDir(t), "h.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(sock, 0o777)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(time.Second) })
	return sock, aud
}

func TestOtherUIDRefused(t *testing.T) {
	testenv.RequireRoot(t)
	exe := testenv.PublicExecutable(t)
	cases := []struct {
		name      string
		role      safety.Role
		authorize helperd.Authorizer
		groups    []uint32
		accepted  bool
	}{
		{"user-helper", safety.RoleUser, helperd.SameUID(0), nil, false},
		{"root-helper-not-in-policy", safety.RoleRoot, policy(t, "[allow]\nusers = [1000, 0]\ngroups = [27]\n"), []uint32{4242}, false},
		{"root-helper-default-policy", safety.RoleRoot, policy(t, ""), []uint32{0}, false},
		{"root-helper-uid-in-policy", safety.RoleRoot, policy(t, "[allow]\nusers = [65534]\n"), nil, true},
		{"root-helper-group-in-policy", safety.RoleRoot, policy(t, "[allow]\ngroups = [4242]\n"), []uint32{4242}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sock, aud := publicServer(t, helperd.Config{Role: tc.role, Authorize: tc.authorize})
			out := callAs(t, exe, sock, 65534, tc.groups)
			if !tc.accepted {
				if !strings.Contains(out, "status=PermissionDenied\nexec=PermissionDenied\n") {
					t.Fatalf("client output %q", out)
				}
				r, ok := aud.find(audit.KindRefused, "")
				if !ok || r.Peer == nil || r.Peer.UID != 65534 || r.Peer.PID == 0 || !strings.Contains(r.Reason, "Status") ||
					audit.Decision(&r) != "deny" || audit.Rules(&r)[0] != helperd.RulePeerNotAdmitted {
					t.Fatalf("refused record %+v", r)
				}
				if _, ran := aud.find(audit.KindRequest, ""); ran {
					t.Fatal("a refused caller's request was handled")
				}
				return
			}
			if !strings.Contains(out, "status=OK\nexited=0\nexec=OK\n") {
				t.Fatalf("client output %q", out)
			}
			if r, ok := aud.find(audit.KindStart, ""); !ok || r.Peer.UID != 65534 {
				t.Fatalf("start record %+v", r)
			}
		})
	}
}

// policy returns the Authorize method of a root helper policy parsed from data.
func policy(t *testing.T, data string) helperd.Authorizer {
	t.Helper()
	p, err := rootpolicy.Parse([]byte(data), "test.toml")
	if err != nil {
		t.Fatal(err)
	}
	return p.Authorize
}

// TestUnreadableCredsRefusedAndAudited serves the helper over TCP, where the kernel reports
// no peer credentials: every call fails and the refusal is audited.
func TestUnreadableCredsRefusedAndAudited(t *testing.T) {
	aud := &memAuditor{fail: map[audit.Kind]bool{}}
	srv, err := helperd.New(helperd.Config{Role: safety.RoleUser, Auditor: aud, Authorize: helperd.SameUID(uint32(os.Geteuid())),
		Runner: execrun.Plain{}, Path: execrun.SafePath, Home: t.TempDir(), User: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(time.Second)
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := helperv1.NewHelperClient(conn).Status(c, &helperv1.StatusRequest{}); err == nil {
		t.Fatal("a call without peer credentials succeeded")
	}
	r, ok := aud.find(audit.KindRefused, "")
	if !ok || r.Peer != nil || !strings.Contains(r.Reason, "peer credentials") || audit.Decision(&r) != "deny" || audit.Rules(&r)[0] != helperd.RulePeerUnknown {
		t.Fatalf("refused record %+v (found %v)", r, ok)
	}
	if _, ran := aud.find(audit.KindRequest, ""); ran {
		t.Fatal("a request was handled")
	}
}
