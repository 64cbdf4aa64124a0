package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/daemon"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/rootpolicy"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/sandbox/launch"
	"github.com/s-code-dev/s-code/internal/testenv"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// TestMain lets the test binary run RunRoot in a child process (as another uid):
// DAEMON_TEST_RUNROOT=1 runs it with the remaining arguments and prints the error.
func TestMain(m *testing.M) {
	// The test binary is also the sandbox launcher the user helper starts for each command.
	if len(os.Args) > 1 && os.Args[1] == "--profile-json" {
		os.Exit(launch.Main(os.Args[1:], os.Stderr))
	}
	if len(os.Args) == 5 && os.Args[1] == sandboxedDialArg {
		os.Exit(sandboxedDial(os.Args[2], os.Args[3], os.Args[4]))
	}
	if len(os.Args) == 3 && os.Args[1] == rawDialArg {
		os.Exit(rawDialProbe(os.Args[2]))
	}
	if sock := os.Getenv(dialProbeEnv); sock != "" {
		os.Exit(dialProbe(sock))
	}
	if os.Getenv("DAEMON_TEST_RUNROOT") == "1" {
		err := daemon.RunRoot(context.Background(), os.Args[2:], os.Stdout, os.Stderr)
		fmt.Printf("err=%v notroot=%v\n", err, errors.Is(err, daemon.ErrNotRoot))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// syncBuffer is a bytes.Buffer safe for the daemon's logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitSocket(t *testing.T, sock string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("daemon exited early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no socket")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRunUserLifecycle starts the user helper, runs a command through it, stops it with a
// command still running (drain, then kill), and checks the audit log: every command
// recorded, the chain whole and sealed.
func TestRunUserLifecycle(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("S_CODE_TOOL_CACHE_DIR", t.TempDir())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "run", "user.sock")
	auditDir := filepath.Join(dir, "audit")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- daemon.RunUser(ctx, []string{"--listen", sock, "--audit-dir", auditDir, "--drain", "200ms", "--kill-grace", "200ms", "--sandbox-launcher", self}, &logs, &logs)
	}()
	waitSocket(t, sock, done)
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}

	c, err := helperclient.Dial(ctx, helperclient.User, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out bytes.Buffer
	// The workspace is a project directory of its own: one that holds the audit log or the
	// socket is refused (workspace.state).
	proj := t.TempDir()
	res, _, err := c.Run(ctx, helperclient.Operation{Command: "echo $HOME; echo $USER", Cwd: proj, Mode: permission.Manual}, approveAll, helperclient.Streams{Stdout: &out})
	if err != nil || res.Status() != 0 {
		t.Fatalf("exec: %v %+v", err, res)
	}
	home, _ := os.UserHomeDir()
	if !strings.HasPrefix(out.String(), home+"\n") {
		t.Errorf("HOME in the command: %q, want %q", out.String(), home)
	}
	st, err := c.API().Status(ctx, &helperv1.StatusRequest{})
	if err != nil || st.GetRole() != helperv1.Role_ROLE_USER || st.GetAuditHeadSeq() < 3 {
		t.Fatalf("status %+v %v", st, err)
	}
	hc, err := c.Health().Check(ctx, &healthpb.HealthCheckRequest{Service: helperv1.Helper_ServiceDesc.ServiceName})
	if err != nil || hc.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health %v %v", hc, err)
	}

	// A long command is still running when the helper is told to stop.
	long := make(chan *helperclient.Result, 1)
	go func() {
		r, _, _ := c.Run(context.Background(), helperclient.Operation{Command: "sleep 60", Cwd: proj, Mode: permission.Manual}, approveAll, helperclient.Streams{})
		long <- r
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, _ := c.API().Status(ctx, &helperv1.StatusRequest{})
		if st.GetRunning() == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	begin := time.Now()
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RunUser: %v\n%s", err, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the helper did not stop")
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("stopping took %v", d)
	}
	if r := <-long; r == nil || r.Exited == nil || r.Exited.GetSignal() == nil {
		t.Errorf("the running command was not killed by a signal: %+v", r)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
	for _, want := range []string{`"msg":"helper ready"`, `"msg":"stopping: draining running commands"`, `"msg":"stopped"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs.String())
		}
	}

	key, err := audit.ReadVerifyKey(filepath.Join(auditDir, audit.DefaultVerifyKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(auditDir, key)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Whole || !rep.SealsChecked {
		t.Fatalf("audit chain: %+v", rep)
	}
	kinds := map[audit.Kind]int{}
	var last audit.Kind
	audit.Read(auditDir, audit.Filter{}, func(r *audit.Record) error {
		kinds[r.Kind]++
		last = r.Kind
		return nil
	})
	if kinds[audit.KindStart] != 2 || kinds[audit.KindExit] != 2 || last != audit.KindSeal {
		t.Errorf("audit kinds %v, last %s; want 2 starts, 2 exits, sealed", kinds, last)
	}
}

func TestRunUserFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"unknown-flag", []string{"--no-such-flag"}},
		{"argument", []string{"extra"}},
		{"relative-path", []string{"--path", "bin:/usr/bin"}},
		{"log-level", []string{"--log-level", "loud"}},
		{"relative-sandbox-launcher", []string{"--sandbox-launcher", "bin/s-code-sandbox"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := daemon.RunUser(context.Background(), tc.args, &out, &out)
			if !errors.Is(err, daemon.ErrUsage) {
				t.Fatalf("RunUser(%v) = %v, want ErrUsage", tc.args, err)
			}
		})
	}
	var out bytes.Buffer
	if err := daemon.RunUser(context.Background(), []string{"--version"}, &out, &out); err != nil || !strings.HasPrefix(out.String(), "s-code-userhelper ") {
		t.Fatalf("--version: %v %q", err, out.String())
	}
	// No sandbox launcher: the user helper does not start (it never runs commands unconfined).
	t.Setenv("PATH", t.TempDir())
	if err := daemon.RunUser(context.Background(), []string{"--audit-dir", t.TempDir()}, &out, &out); !errors.Is(err, sandbox.ErrLauncherMissing) {
		t.Fatalf("RunUser without s-code-sandbox = %v, want ErrLauncherMissing", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// No socket activation and no --listen: a clear error, nothing served.
	t.Setenv("LISTEN_FDS", "")
	err = daemon.RunUser(context.Background(), []string{"--audit-dir", t.TempDir(), "--sandbox-launcher", self}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "--listen") {
		t.Fatalf("RunUser without a listener = %v", err)
	}
}

// TestRunRootRefuses: the root helper refuses to start as a non-root user, and with a
// policy file others could write.
func TestRunRootRefuses(t *testing.T) {
	testenv.RequireRoot(t)
	exe := testenv.PublicExecutable(t)
	cmd := exec.Command(exe, "-test.run=^$", "--listen", "/nonexistent/root.sock")
	cmd.Env = []string{"DAEMON_TEST_RUNROOT=1", "PATH=" + execrun.SafePath}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "notroot=true") {
		t.Fatalf("RunRoot as uid 65534: %v\n%s", err, out)
	}

	etc := filepath.Join(t.TempDir(), "etc")
	os.Mkdir(etc, 0o755)
	policy := filepath.Join(etc, "roothelper.toml")
	os.WriteFile(policy, []byte("[allow]\nusers = [0]\n"), 0o666)
	os.Chmod(policy, 0o666)
	var logs bytes.Buffer
	err = daemon.RunRoot(context.Background(), []string{"--policy", policy, "--listen", filepath.Join(t.TempDir(), "r.sock"), "--audit-dir", t.TempDir()}, &logs, &logs)
	var ue *rootpolicy.UnsafeFileError
	if !errors.As(err, &ue) {
		t.Fatalf("RunRoot with a world-writable policy = %v", err)
	}
}

// TestRunRootServes starts the root helper with a policy that names uid 0 and runs a command.
func TestRunRootServes(t *testing.T) {
	testenv.RequireRoot(t)
	etc := filepath.Join(t.TempDir(), "etc")
	os.Mkdir(etc, 0o755)
	policy := filepath.Join(etc, "roothelper.toml")
	os.WriteFile(policy, []byte("[allow]\nusers = [\"root\"]\n[timeouts]\ndrain = \"1s\"\n"), 0o644)
	sock := filepath.Join(t.TempDir(), "run", "root.sock")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- daemon.RunRoot(ctx, []string{"--policy", policy, "--listen", sock, "--audit-dir", filepath.Join(t.TempDir(), "audit")}, &logs, &logs)
	}()
	waitSocket(t, sock, done)
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o660 {
		t.Fatalf("root socket mode %v %v, want 0660", fi.Mode().Perm(), err)
	}
	c, err := helperclient.Dial(ctx, helperclient.Root, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out bytes.Buffer
	res, _, err := c.Run(ctx, helperclient.Operation{Command: "id -u", Cwd: "/", Mode: permission.Manual}, approveAll, helperclient.Streams{Stdout: &out})
	if err != nil || res.Status() != 0 || out.String() != "0\n" {
		t.Fatalf("exec: %v %+v %q\n%s", err, res, out.String(), logs.String())
	}
	st, err := c.API().Status(ctx, &helperv1.StatusRequest{})
	if err != nil || st.GetRole() != helperv1.Role_ROLE_ROOT || !strings.Contains(st.GetPolicySummary(), "users=[0]") {
		t.Fatalf("status %+v %v", st, err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestRunUserPolicy: the user helper judges with its own ShellSafety policy, and refuses a
// policy file others could write.
func TestRunUserPolicy(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("S_CODE_TOOL_CACHE_DIR", t.TempDir())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "policy.toml")
	os.WriteFile(policy, []byte("[[rule]]\nid = \"no-cowsay\"\nmatch = [\"cowsay\", \"*\"]\ndecision = \"deny\"\nmessage = \"No cows.\"\n"), 0o600)
	sock := filepath.Join(dir, "run", "user.sock")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- daemon.RunUser(ctx, []string{"--listen", sock, "--audit-dir", filepath.Join(dir, "audit"), "--policy", policy, "--sandbox-launcher", self}, &logs, &logs)
	}()
	waitSocket(t, sock, done)
	c, err := helperclient.Dial(ctx, helperclient.User, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, _, err := c.Run(ctx, helperclient.Operation{Command: "cowsay moo", Cwd: t.TempDir(), Mode: permission.Manual}, approveAll, helperclient.Streams{})
	if err != nil || res.Denied.GetRule() != "policy.no-cowsay" {
		t.Fatalf("exec: %v %+v", err, res)
	}
	stop()
	<-done

	os.Chmod(policy, 0o666)
	err = daemon.RunUser(context.Background(), []string{"--listen", filepath.Join(dir, "x.sock"), "--audit-dir", filepath.Join(dir, "audit2"), "--policy", policy, "--sandbox-launcher", self}, &logs, &logs)
	var ue *daemon.UnsafePolicyError
	if !errors.As(err, &ue) {
		t.Fatalf("a world-writable policy: %v", err)
	}
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
		says string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{fmt.Errorf("flags: %w", daemon.ErrUsage), 2, "prog: flags: usage\n"},
		{errors.New("listen: boom"), 1, "prog: listen: boom\n"},
	} {
		var stderr strings.Builder
		if got := daemon.ExitStatus("prog", tc.err, &stderr); got != tc.want || stderr.String() != tc.says {
			t.Errorf("ExitStatus(%v) = %d, %q; want %d, %q", tc.err, got, stderr.String(), tc.want, tc.says)
		}
	}
}

// approveAll approves every plan, as --yes does.
var approveAll = helperclient.ApproverFunc(func(context.Context, *helperclient.Planned) (permission.Channel, error) {
	return permission.ChannelFlag, nil
})
