package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/daemon"
	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// dialProbeEnv makes the test binary dial the helper socket it names, ask for Status and
// print "ok" or "refused" (see TestMain): it runs inside the sandbox.
const dialProbeEnv = "DAEMON_TEST_DIAL"

func dialProbe(sock string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := helperclient.Dial(ctx, helperclient.User, sock)
	if err == nil {
		defer c.Close()
		_, err = c.API().Status(ctx, &helperv1.StatusRequest{})
	}
	if err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// TestRunUserSandbox checks that the user helper runs every command in the sandbox of its
// workspace, with network only when the request carries approval for network, and that a
// command inside a sandbox cannot use the helper.
func TestRunUserSandbox(t *testing.T) {
	if f := sandbox.ProbeFeatures(); !f.Confines() {
		testenv.Skip(t, "this kernel cannot confine commands: "+f.Problem)
	}
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("S_CODE_TOOL_CACHE_DIR", filepath.Join(base, "cache"))
	for name, body := range map[string]string{"write.sh": "echo x > \"$1\"\n", "dial.sh": "exec 3<>/dev/tcp/127.0.0.1/$1\n", "plant.sh": "mkdir -p lib && echo 'gitdir: /tmp/evil' > lib/.git\n"} {
		if err := os.WriteFile(filepath.Join(ws, "src", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(base, "run", "user.sock")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var logs syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- daemon.RunUser(ctx, []string{"--listen", sock, "--audit-dir", filepath.Join(base, "audit"), "--sandbox-launcher", self}, &logs, &logs)
	}()
	waitSocket(t, sock, done)
	c, err := helperclient.Dial(ctx, helperclient.User, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	tests := []struct {
		name    string
		command string
		network bool
		ok      bool
		stdout  string
	}{
		{"write in the workspace", `echo ok > src/f && cat src/f`, false, true, "ok\n"},
		{"private caches", `echo "$GOMODCACHE"`, false, true, filepath.Join(base, "cache")},
		// ShellSafety cannot see into a workspace script (its verdict is ask, approved
		// here): the sandbox is what stops it.
		{"write /etc", `bash src/write.sh /etc/s-code-helper-test`, false, false, ""},
		{"write the helper's audit directory", `bash src/write.sh ` + filepath.Join(base, "audit", "x"), false, false, ""},
		{"tcp without approved network", fmt.Sprintf(`bash src/dial.sh %d`, port), false, false, ""},
		{"tcp with approved network", fmt.Sprintf(`bash src/dial.sh %d`, port), true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			res, _, err := c.Run(ctx, helperclient.Operation{Command: tt.command, Workspace: ws, Cwd: ws, Network: tt.network, Mode: permission.Manual}, approveAll, helperclient.Streams{Stdout: &out, Stderr: &errb})
			if err != nil {
				t.Fatalf("exec: %v", err)
			}
			if res.Status() == 126 {
				t.Fatalf("refused before it ran (126): the sandbox was not tested; stderr %q", errb.String())
			}
			if got := res.Status() == 0; got != tt.ok {
				t.Fatalf("status %d, want ok=%v; stdout %q stderr %q", res.Status(), tt.ok, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), tt.stdout) {
				t.Fatalf("stdout %q lacks %q", out.String(), tt.stdout)
			}
		})
	}

	// The post-run check: a gitdir: pointer the command planted is moved aside once the
	// command has ended, the client is told on stderr, and the exit record names it.
	t.Run("post-run quarantine", func(t *testing.T) {
		var errb bytes.Buffer
		// ShellSafety cannot see into the script (ask, approved): the sandbox acts.
		command := `bash src/plant.sh`
		res, _, err := c.Run(ctx, helperclient.Operation{Command: command, Workspace: ws, Cwd: ws, Mode: permission.Manual}, approveAll, helperclient.Streams{Stderr: &errb})
		if err != nil || res.Status() != 0 {
			t.Fatalf("exec: %v %+v: %s", err, res, errb.String())
		}
		if _, err := os.Lstat(filepath.Join(ws, "lib", ".git")); !os.IsNotExist(err) {
			t.Errorf("lib/.git is still there: %v", err)
		}
		if !strings.Contains(errb.String(), "moved aside") || !strings.Contains(errb.String(), "lib/.git") {
			t.Errorf("stderr does not say what was moved aside: %q", errb.String())
		}
		var got []string
		err = audit.Read(filepath.Join(base, "audit"), audit.Filter{Kinds: []audit.Kind{audit.KindExit}}, func(r *audit.Record) error {
			if r.Command == command {
				got = r.Quarantined
			}
			return nil
		})
		if err != nil || !slices.Equal(got, []string{"lib/.git"}) {
			t.Fatalf("exit record quarantined %v (%v), want [lib/.git]", got, err)
		}
	})

	// A program running inside a sandbox (a copy of this test binary in the workspace, started
	// through the launcher) reaches the helper's socket but is refused.
	probe := filepath.Join(ws, "src", "probe")
	testenv.CopyExecutable(t, self, probe)
	p, err := sandbox.ForWorkspace(os.Getenv, ws, false)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := sandbox.Command(ctx, self, p, []string{probe}, []string{"PATH=/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), dialProbeEnv + "=" + sock})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := cmd.CombinedOutput()
	if !strings.HasPrefix(string(out), "refused") || !strings.Contains(string(out), "sandbox") {
		t.Fatalf("a sandboxed client was not refused: %s", out)
	}
	// The same probe outside the sandbox is served (the refusal is the sandbox's).
	cmd2 := exec.CommandContext(ctx, probe)
	cmd2.Env = []string{dialProbeEnv + "=" + sock}
	if out, err := cmd2.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "ok") {
		t.Fatalf("an unconfined client was refused: %v: %s", err, out)
	}
}
