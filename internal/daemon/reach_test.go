package daemon_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/daemon"
	"github.com/s-code-dev/s-code/internal/helperclient"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// rawDialArg makes the test binary (run as "probe rawDialArg TARGET,…", inside a sandbox)
// connect to each Unix socket TARGET ("@name": abstract) with a raw connect(2), then ask the
// helper there for Status over gRPC, and print one line per target: "TARGET unreachable: …",
// "TARGET refused: …" or "TARGET served". Arguments, not the environment, carry the targets:
// a helper request may not add arbitrary variables.
const rawDialArg = "--s-code-test-rawdial"

// sandboxedDialArg makes the test binary (run as "bin sandboxedDialArg PROFILE PROBE TARGETS")
// start PROBE rawDialArg TARGETS through sandbox.Command under PROFILE (JSON), as a helper
// of the calling user would, and pass its output and status on.
const sandboxedDialArg = "--s-code-test-sandboxed-dial"

func sandboxedDial(profile, probe, targets string) int {
	p, err := sandbox.ParseProfile([]byte(profile))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	cmd, err := sandbox.Command(context.Background(), self, p, []string{probe, rawDialArg, targets}, os.Environ())
	if err != nil {
		fmt.Println(err)
		return 1
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

func rawDialProbe(targets string) int {
	for _, target := range strings.Split(targets, ",") {
		conn, err := net.DialTimeout("unix", target, 5*time.Second)
		if err != nil {
			fmt.Printf("%s unreachable: %v\n", target, err)
			continue
		}
		conn.Close()
		if strings.HasPrefix(target, "@") {
			fmt.Printf("%s served\n", target)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		role := helperclient.User
		if strings.HasSuffix(target, "root.sock") {
			role = helperclient.Root
		}
		c, err := helperclient.Dial(ctx, role, target)
		if err == nil {
			_, err = c.API().Status(ctx, &helperv1.StatusRequest{})
			c.Close()
		}
		cancel()
		if err != nil {
			fmt.Printf("%s refused: %s\n", target, strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		fmt.Printf("%s served\n", target)
	}
	return 0
}

// probeLines parses rawDialProbe's output into target → "unreachable", "refused" or
// "served", with the rest of each line.
func probeLines(t *testing.T, out string) map[string][2]string {
	t.Helper()
	m := map[string][2]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		target, rest, _ := strings.Cut(line, " ")
		verdict, detail, _ := strings.Cut(rest, " ")
		m[target] = [2]string{strings.TrimSuffix(verdict, ":"), detail}
	}
	return m
}

// reachFixture runs both helpers (user and root) in this process, each on its own socket,
// and an abstract Unix socket, for sandboxed probes to try.
type reachFixture struct {
	base, ws, probe        string
	userSock, rootSock     string
	userAudit, rootAudit   string
	abstract               string
	userClient, rootClient *helperclient.Client
}

func newReachFixture(t *testing.T, rootPolicy string) *reachFixture {
	t.Helper()
	base := testenv.PublicDir(t) // uid 65534 runs probes from it
	f := &reachFixture{base: base, ws: filepath.Join(base, "ws"),
		userSock: filepath.Join(base, "urun", "user.sock"), rootSock: filepath.Join(base, "rrun", "root.sock"),
		userAudit: filepath.Join(base, "uaudit"), rootAudit: filepath.Join(base, "raudit")}
	if err := os.MkdirAll(filepath.Join(f.ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("S_CODE_TOOL_CACHE_DIR", filepath.Join(base, "cache"))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f.probe = filepath.Join(f.ws, "src", "probe")
	testenv.CopyExecutable(t, self, f.probe)

	ctx, stop := context.WithCancel(context.Background())
	var logs syncBuffer
	userDone, rootDone := make(chan error, 1), make(chan error, 1)
	go func() {
		userDone <- daemon.RunUser(ctx, []string{"--listen", f.userSock, "--audit-dir", f.userAudit, "--sandbox-launcher", self}, &logs, &logs)
	}()
	etc := filepath.Join(base, "etc")
	os.Mkdir(etc, 0o755)
	policy := filepath.Join(etc, "roothelper.toml")
	if err := os.WriteFile(policy, []byte(rootPolicy+"[timeouts]\ndrain = \"1s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		rootDone <- daemon.RunRoot(ctx, []string{"--policy", policy, "--listen", f.rootSock, "--audit-dir", f.rootAudit}, &logs, &logs)
	}()
	t.Cleanup(func() {
		stop()
		for _, d := range []chan error{userDone, rootDone} {
			if err := <-d; err != nil {
				t.Errorf("helper: %v\n%s", err, logs.String())
			}
		}
	})
	waitSocket(t, f.userSock, userDone)
	waitSocket(t, f.rootSock, rootDone)
	for _, d := range []string{filepath.Dir(f.userSock), filepath.Dir(f.rootSock)} {
		os.Chmod(d, 0o755)
	}
	if f.userClient, err = helperclient.Dial(ctx, helperclient.User, f.userSock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.userClient.Close() })

	var b [8]byte
	rand.Read(b[:])
	f.abstract = "@s-code-test-" + hex.EncodeToString(b[:])
	ln, err := net.Listen("unix", f.abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return f
}

// targets returns the sockets a probe tries: both helpers' sockets by their paths and
// through this process's /proc/PID/root (the helpers run in it), and the abstract socket.
func (f *reachFixture) targets() []string {
	root := "/proc/" + strconv.Itoa(os.Getpid()) + "/root"
	return []string{f.userSock, f.rootSock, root + f.userSock, root + f.rootSock, f.abstract}
}

// checkUnreachable fails unless every target of out is unreachable (the abstract socket only
// where Landlock scopes abstract sockets, ABI 6).
func (f *reachFixture) checkUnreachable(t *testing.T, out string) {
	t.Helper()
	got := probeLines(t, out)
	for _, target := range f.targets() {
		if target == f.abstract && sandbox.ProbeFeatures().LandlockABI < 6 {
			continue
		}
		if got[target][0] != "unreachable" {
			t.Errorf("%s: %v, want unreachable\n%s", target, got[target], out)
		}
	}
}

// TestHelpersUnreachableFromSandbox runs a real sandboxed command through the user helper
// (the launcher hides S-Code's directories and the helpers' socket directories in its mount
// namespace, Landlock denies them and scopes abstract sockets): a raw connect to either
// helper's socket, by its path or through /proc/PID/root, and to an abstract socket of
// another domain, all fail.
func TestHelpersUnreachableFromSandbox(t *testing.T) {
	testenv.RequireRoot(t) // the root helper runs as root
	if f := sandbox.ProbeFeatures(); !f.Confines() {
		testenv.Skip(t, "this kernel cannot confine commands: "+f.Problem)
	}
	if err := sandbox.MountNamespaceUsable(); err != nil {
		testenv.Skip(t, "no mount namespace for the launcher: "+err.Error())
	}
	f := newReachFixture(t, "[allow]\nusers = [\"root\"]\n")
	// The user helper hides the root helper's socket it is told of (in production
	// /run/s-code, which it always hides).
	t.Setenv("S_CODE_ROOT_SOCKET", f.rootSock)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Outside the sandbox the same probe reaches both helpers (so the refusals below are
	// the sandbox's).
	out, err := exec.CommandContext(ctx, f.probe, rawDialArg, strings.Join(f.targets(), ",")).CombinedOutput()
	if got := probeLines(t, string(out)); err != nil || got[f.userSock][0] != "served" || got[f.rootSock][0] != "served" || got[f.abstract][0] != "served" {
		t.Fatalf("unconfined probe: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	res, _, err := f.userClient.Run(ctx, helperclient.Operation{Command: "src/probe " + rawDialArg + " " + strings.Join(f.targets(), ","), Workspace: f.ws, Cwd: f.ws, Mode: permission.Manual}, approveAll,
		helperclient.Streams{Stdout: &stdout, Stderr: &stderr})
	if err != nil || res.Status() != 0 {
		t.Fatalf("exec: %v %+v\n%s%s", err, res, stdout.String(), stderr.String())
	}
	f.checkUnreachable(t, stdout.String())
	// The state directories are gone from the command's view too: the audit directories of
	// both helpers cannot even be listed.
	stdout.Reset()
	res, _, err = f.userClient.Run(ctx, helperclient.Operation{Command: "ls " + f.userAudit + " " + f.rootAudit + " " + filepath.Dir(f.userSock) + " 2>&1; echo done", Workspace: f.ws, Cwd: f.ws, Mode: permission.Manual}, approveAll,
		helperclient.Streams{Stdout: &stdout, Stderr: &stderr})
	if err != nil || strings.Contains(stdout.String(), ".jsonl") || strings.Contains(stdout.String(), "user.sock") || !strings.Contains(stdout.String(), "done") {
		t.Fatalf("the command listed the helpers' directories: %v\n%s", err, stdout.String())
	}

	// As an ordinary user the launcher mounts in its own user namespace: the root helper's
	// socket, which uid 65534 may use (its group), is hidden there too.
	t.Run("uid 65534", func(t *testing.T) {
		self := testenv.PublicExecutable(t)
		h, err := sandbox.Discover(os.Getenv, f.ws)
		if err != nil {
			t.Fatal(err)
		}
		h.StateDirs = append(h.StateDirs, filepath.Dir(f.userSock), filepath.Dir(f.rootSock))
		p, err := sandbox.NewProfile(h, false)
		if err != nil {
			t.Fatal(err)
		}
		if p.Protection != sandbox.ProtectionMountNamespace {
			t.Fatalf("protection %q", p.Protection)
		}
		if err := sandbox.Prepare(p); err != nil {
			t.Fatal(err)
		}
		for _, root := range []string{f.ws, filepath.Join(f.base, "cache")} {
			filepath.Walk(root, func(path string, _ os.FileInfo, _ error) error { return os.Lchown(path, 65534, 65534) })
		}
		if err := os.Chown(f.rootSock, 0, 65534); err != nil {
			t.Fatal(err)
		}
		cred := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		plain := exec.CommandContext(ctx, f.probe, rawDialArg, f.rootSock)
		plain.SysProcAttr = cred
		if out, err := plain.CombinedOutput(); probeLines(t, string(out))[f.rootSock][0] != "refused" {
			// The root helper's policy does not name uid 65534: reached, then refused.
			t.Fatalf("unconfined probe as uid 65534 did not reach the root helper: %v\n%s", err, out)
		}
		// The driver runs as uid 65534 and starts the launcher through sandbox.Command, as a
		// user helper of that user does.
		pj, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, self, sandboxedDialArg, string(pj), f.probe, strings.Join(f.targets(), ","))
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + f.base}
		cmd.SysProcAttr = cred
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("probe: %v\n%s", err, out.String())
		}
		f.checkUnreachable(t, out.String())
		t.Logf("probe as uid 65534:\n%s", out.String())
	})
}

// TestHelpersRefuseSandboxedPeers runs a sandboxed probe whose profile does not hide the
// helpers' sockets (the per-entry Landlock layout, as on a machine without a mount namespace,
// and a profile that knows neither socket): it connects, and both helpers refuse its calls
// with peer.sandboxed, as root and as an ordinary user (uid 65534, whom the root helper's
// policy admits), while the same probe unconfined is served.
func TestHelpersRefuseSandboxedPeers(t *testing.T) {
	testenv.RequireRoot(t)
	if f := sandbox.ProbeFeatures(); !f.Confines() {
		testenv.Skip(t, "this kernel cannot confine commands: "+f.Problem)
	}
	f := newReachFixture(t, "[allow]\nusers = [\"root\", 65534]\n[socket]\ngroup = 65534\n")
	self := testenv.PublicExecutable(t)
	for _, asUser := range []bool{false, true} {
		name := "root"
		if asUser {
			name = "uid 65534"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := sandbox.ForWorkspace(os.Getenv, f.ws, false)
			if err != nil {
				t.Fatal(err)
			}
			p.Protection = sandbox.ProtectionLandlockEntries
			if slices.Contains(p.HiddenPaths, filepath.Dir(f.rootSock)) || slices.Contains(p.HiddenPaths, filepath.Dir(f.userSock)) {
				t.Fatal("the profile hides the sockets: the peer check would not be tested")
			}
			targets := f.rootSock
			if !asUser {
				targets += "," + f.userSock
			}
			var cred *syscall.Credential
			if asUser {
				cred = &syscall.Credential{Uid: 65534, Gid: 65534}
				// The cache namespace and the workspace must be the user's.
				if err := sandbox.Prepare(p); err != nil {
					t.Fatal(err)
				}
				for _, root := range []string{f.ws, filepath.Join(f.base, "cache")} {
					filepath.Walk(root, func(path string, _ os.FileInfo, _ error) error { return os.Lchown(path, 65534, 65534) })
				}
			}
			cmd, err := sandbox.Command(ctx, self, p, []string{f.probe, rawDialArg, targets}, []string{"PATH=/usr/bin:/bin", "HOME=" + f.base})
			if err != nil {
				t.Fatal(err)
			}
			if cred != nil {
				// Keep Command's attributes (the PID namespace the profile asks for, made
				// here by root) and start the launcher as the user.
				if cmd.SysProcAttr == nil {
					cmd.SysProcAttr = &syscall.SysProcAttr{}
				}
				cmd.SysProcAttr.Credential = cred
			}
			out, err := cmd.CombinedOutput()
			got := probeLines(t, string(out))
			for _, target := range strings.Split(targets, ",") {
				if got[target][0] != "refused" || !strings.Contains(got[target][1], "sandbox") {
					t.Errorf("sandboxed probe at %s: %v, want refused as sandboxed (%v)\n%s", target, got[target], err, out)
				}
			}
			// Unconfined, the same user is served by the root helper.
			plain := exec.CommandContext(ctx, f.probe, rawDialArg, f.rootSock)
			if cred != nil {
				plain.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
			}
			out, err = plain.CombinedOutput()
			if got := probeLines(t, string(out)); got[f.rootSock][0] != "served" {
				t.Fatalf("unconfined probe: %v\n%s", err, out)
			}
		})
	}
	// Both helpers wrote a refused record naming the rule.
	for _, dir := range []string{f.userAudit, f.rootAudit} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		var all []byte
		for _, file := range files {
			b, _ := os.ReadFile(file)
			all = append(all, b...)
		}
		if !bytes.Contains(all, []byte(`"refused"`)) || !bytes.Contains(all, []byte("peer.sandboxed")) {
			t.Errorf("no refused peer.sandboxed record in %s", dir)
		}
	}
}
