package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// The test binary is its own launcher and its own probe: with asLauncherEnv set it runs the
// launcher (Run), with probeEnv set it runs one probe and prints its result. So the tests
// start real processes through the real launcher code, and the probes run inside the
// sandbox as ordinary executables.
const (
	asLauncherEnv = "S_CODE_TEST_AS_LAUNCHER"
	probeEnv      = "S_CODE_TEST_PROBE"
)

func TestMain(m *testing.M) {
	if os.Getenv(asLauncherEnv) == "1" && len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "--profile") {
		err := Run(os.Args[1:], os.Stderr)
		fmt.Fprintf(os.Stderr, "s-code-sandbox: %v\n", err)
		var ee *ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.Code)
		}
		os.Exit(ExitCannotRun)
	}
	if p := os.Getenv(probeEnv); p != "" {
		os.Exit(probe(p, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// probe runs one operation inside the sandbox and prints "ok" or "errno NAME".
func probe(name string, args []string) int {
	var err error
	switch name {
	case "tcp":
		var c net.Conn
		c, err = net.DialTimeout("tcp", args[0], 2*time.Second)
		if err == nil {
			c.Close()
		}
	case "udp":
		var c net.Conn
		c, err = net.Dial("udp", args[0])
		if err == nil {
			_, err = c.Write([]byte("ping"))
			c.Close()
		}
	case "socket-inet-high-bits":
		// The kernel truncates the domain to 32 bits; the filter must too.
		var fd uintptr
		var errno syscall.Errno
		fd, _, errno = unix.RawSyscall(unix.SYS_SOCKET, uintptr(1<<32|unix.AF_INET), unix.SOCK_STREAM, 0)
		if errno != 0 {
			err = errno
		} else {
			unix.Close(int(fd))
		}
	case "socket-raw":
		var fd int
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
		if err == nil {
			unix.Close(fd)
		}
	case "socket-packet":
		var fd int
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM, 0)
		if err == nil {
			unix.Close(fd)
		}
	case "socket-unix":
		var fd int
		fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
	case "ptrace":
		_, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0, 0, 0, 0)
		if errno != 0 {
			err = errno
		}
	case "unshare-user":
		err = unix.Unshare(unix.CLONE_NEWUSER)
	case "io-uring":
		var p [120]byte
		_, _, errno := unix.RawSyscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&p[0])), 0)
		if errno != 0 {
			err = errno
		}
	case "tiocsti":
		c := byte('x')
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		if errno != 0 {
			err = errno
		}
	case "kill":
		pid, _ := strconv.Atoi(args[0])
		err = unix.Kill(pid, 0)
	default:
		fmt.Printf("unknown probe %s\n", name)
		return 2
	}
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			fmt.Printf("errno %s\n", unix.ErrnoName(errno))
		} else {
			fmt.Printf("error %v\n", err)
		}
		return 1
	}
	fmt.Println("ok")
	return 0
}

// fixture is a fake home directory (with a fake SSH key, a hostile ~/.npmrc and a fake NVM
// tree), a Git workspace and a tool cache root, all under t.TempDir, and the profile for them.
type fixture struct {
	home, ws, cacheRoot string
	profile             sandbox.Profile
	env                 []string
}

func newFixture(t testing.TB, network bool) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{home: filepath.Join(base, "home"), ws: filepath.Join(base, "ws"), cacheRoot: filepath.Join(base, "cache")}
	write(t, filepath.Join(f.home, ".ssh", "id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n")
	write(t, filepath.Join(f.home, ".npmrc"), "registry=https://registry.evil.example/\n//registry.evil.example/:_authToken=npm_SECRET\n")
	write(t, filepath.Join(f.home, ".nvm", "versions", "node", "v20.0.0", "bin", "node"), "#!/bin/sh\necho fake node\n")
	write(t, filepath.Join(f.ws, "README"), "hello\n")
	write(t, filepath.Join(f.ws, "src", "main.txt"), "code\n")
	write(t, filepath.Join(f.ws, ".git", "config"), "[core]\n\tbare = false\n")
	write(t, filepath.Join(f.ws, ".git", "hooks", "pre-commit.sample"), "#!/bin/sh\n")
	write(t, filepath.Join(f.ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(f.ws, ".git", "modules", "sub", "config"), "[core]\n")
	if err := os.MkdirAll(filepath.Join(f.ws, ".git", "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return f.home
		case sandbox.CacheDirEnv:
			return f.cacheRoot
		case "PATH":
			return os.Getenv("PATH")
		}
		return ""
	}
	h, err := sandbox.Discover(getenv, f.ws)
	if err != nil {
		t.Fatal(err)
	}
	// The probes are this test binary: its directory is a read-only tool root.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h.ToolRoots = append(h.ToolRoots, filepath.Dir(exe))
	if f.profile, err = sandbox.NewProfile(h, network); err != nil {
		t.Fatal(err)
	}
	f.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home, asLauncherEnv + "=1"}
	return f
}

func write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// command returns the exec.Cmd running argv through the launcher under f's profile.
func (f *fixture) command(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd, err := sandbox.Command(ctx, exe, f.profile, argv, f.env)
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// sh runs script with sh -c in the sandbox and returns its combined output and error.
func (f *fixture) sh(t *testing.T, script string) (string, error) {
	t.Helper()
	out, err := f.command(t, "sh", "-c", script).CombinedOutput()
	return string(out), err
}

// probe runs the named probe (this test binary) in the sandbox and returns its output line.
func (f *fixture) probe(t *testing.T, name string, args ...string) string {
	t.Helper()
	exe, _ := os.Executable()
	cmd := f.command(t, append([]string{exe}, args...)...)
	cmd.Env = append(cmd.Env, probeEnv+"="+name)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if line == "" {
		return "no output; stderr: " + stderr.String()
	}
	return line
}

func requireLandlock(t testing.TB) {
	t.Helper()
	if runtime := sandbox.ProbeFeatures(); !runtime.Confines() {
		testenv.Skip(t, "this kernel cannot confine commands: "+runtime.Problem)
	}
}

// TestFilesystem runs shell commands through the launcher and checks what they may touch.
// The test runs as root, which owns /etc and the fake home: every refusal below comes from
// Landlock (root's CAP_DAC_OVERRIDE does not bypass it, and its capabilities are dropped).
func TestFilesystem(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t, false)
	outside := filepath.Join(filepath.Dir(f.ws), "outside-tmp")
	tests := []struct {
		name   string
		script string
		ok     bool
	}{
		{"write a workspace file", `echo changed > README && cat README`, true},
		{"create a file in a workspace directory", `echo new > src/new.txt && cat src/new.txt`, true},
		{"make a directory in a workspace directory", `mkdir -p src/a/b && rmdir src/a/b`, true},
		{"write the private temporary directory", `echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`, true},
		{"read a system file", `head -c1 /etc/passwd >/dev/null`, true},
		{"write /dev/null", `echo x > /dev/null`, true},
		{"read a runtime root", `cat "$HOME/.nvm/versions/node/v20.0.0/bin/node"`, true},
		{"write a runtime root", `echo x > "$HOME/.nvm/versions/node/v20.0.0/bin/node"`, false},
		{"create a file at the workspace top level", `echo x > newfile`, false},
		{"write the home directory", `echo x > "$HOME/x"`, false},
		{"write /etc", `echo x > /etc/s-code-sandbox-test`, false},
		{"write a temporary path outside the private one", `echo x > ` + outside, false},
		{"write /tmp", `echo x > /tmp/s-code-sandbox-test-$$`, false},
		{"write .git/hooks", `echo x > .git/hooks/pre-commit`, false},
		{"write .git/config", `echo x >> .git/config`, false},
		{"write a submodule's config", `echo x >> .git/modules/sub/config`, false},
		{"create a submodule hook", `mkdir -p .git/modules/sub/hooks`, false},
		{"write git objects", `mkdir -p .git/objects/ab && echo x > .git/objects/ab/cd`, true},
		{"create .vscode", `mkdir .vscode`, false},
		{"read an SSH key", `cat "$HOME/.ssh/id_ed25519"`, false},
		{"read the host npmrc", `cat "$HOME/.npmrc"`, false},
		{"read /etc/shadow", `test ! -e /etc/shadow || cat /etc/shadow`, false},
		{"list the home directory", `ls "$HOME"`, false},
		{"read another process's environment", `cat /proc/1/environ`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := f.sh(t, tt.script)
			if tt.ok && err != nil {
				t.Fatalf("want success, got %v: %s", err, out)
			}
			if !tt.ok && err == nil {
				t.Fatalf("want failure, got success: %s", out)
			}
		})
	}
	// The refusals above are the sandbox's: outside it the same things work.
	if b, err := os.ReadFile(filepath.Join(f.home, ".ssh", "id_ed25519")); err != nil || len(b) == 0 {
		t.Fatalf("the fake key must be readable outside the sandbox: %v", err)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s was written: %v", outside, err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, ".git", "hooks", "pre-commit")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf(".git/hooks/pre-commit was written: %v", err)
	}
}

// TestSymlinkPlantedInWorkspace checks that a symbolic link at the workspace top level,
// which the launcher walks to carve out protected paths, does not extend the grant to its
// target.
func TestSymlinkPlantedInWorkspace(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t, false)
	if err := os.Symlink(filepath.Join(f.home, ".ssh"), filepath.Join(f.ws, "keys")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.home, filepath.Join(f.ws, "home")); err != nil {
		t.Fatal(err)
	}
	for _, script := range []string{`cat keys/id_ed25519`, `echo x > home/planted`} {
		if out, err := f.sh(t, script); err == nil {
			t.Errorf("%s: want failure, got success: %s", script, out)
		}
	}
}

func TestNetwork(t *testing.T) {
	requireLandlock(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	received := func() bool {
		buf := make([]byte, 16)
		pc.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, _, err := pc.ReadFrom(buf)
		return err == nil && string(buf[:n]) == "ping"
	}
	off, on := newFixture(t, false), newFixture(t, true)
	tests := []struct {
		name       string
		f          *fixture
		probe      string
		args       []string
		want       string
		wantPacket bool
	}{
		{"tcp connect, network off", off, "tcp", []string{ln.Addr().String()}, "errno EPERM", false},
		{"tcp connect, network on", on, "tcp", []string{ln.Addr().String()}, "ok", false},
		{"udp send, network off", off, "udp", []string{pc.LocalAddr().String()}, "errno EPERM", false},
		{"udp send, network on", on, "udp", []string{pc.LocalAddr().String()}, "ok", true},
		{"inet socket with high bits in the domain, network off", off, "socket-inet-high-bits", nil, "errno EPERM", false},
		{"raw socket, network on", on, "socket-raw", nil, "errno EPERM", false},
		{"packet socket, network on", on, "socket-packet", nil, "errno EPERM", false},
		{"unix socket, network off", off, "socket-unix", nil, "ok", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.probe(t, tt.probe, tt.args...); got != tt.want {
				t.Fatalf("probe %s = %q, want %q", tt.probe, got, tt.want)
			}
			if tt.wantPacket && !received() {
				t.Fatal("the UDP listener received no datagram")
			}
		})
	}
}

func TestEscapeProneCalls(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t, true)
	tests := []struct {
		probe string
		args  []string
		want  string
	}{
		{"ptrace", nil, "errno EPERM"},
		{"unshare-user", nil, "errno EPERM"},
		{"io-uring", nil, "errno ENOSYS"},
		{"tiocsti", nil, "errno EPERM"},
		// Landlock ABI 6 scoping: no signals to processes outside the sandbox.
		{"kill", []string{strconv.Itoa(os.Getpid())}, "errno EPERM"},
	}
	for _, tt := range tests {
		t.Run(tt.probe, func(t *testing.T) {
			if tt.probe == "kill" && sandbox.ProbeFeatures().LandlockABI < 6 {
				t.Skip("signal scoping needs Landlock ABI 6")
			}
			if got := f.probe(t, tt.probe, tt.args...); got != tt.want {
				t.Fatalf("probe %s = %q, want %q", tt.probe, got, tt.want)
			}
		})
	}
}

// TestCaches checks that the cache variables point into the workspace's namespace and that
// it persists across two commands.
func TestCaches(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t, false)
	out, err := f.sh(t, `echo "$CARGO_HOME|$GOPATH|$GOMODCACHE|$GOCACHE|$npm_config_cache|$TMPDIR" && echo kept > "$CARGO_HOME/marker"`)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, v := range strings.Split(strings.TrimSpace(out), "|") {
		if !sandbox.Within(f.profile.CacheNamespace, v) || !strings.HasPrefix(f.profile.CacheNamespace, f.cacheRoot) {
			t.Errorf("cache variable %q is not inside the namespace %s", v, f.profile.CacheNamespace)
		}
	}
	out, err = f.sh(t, `cat "$CARGO_HOME/marker"`)
	if err != nil || strings.TrimSpace(out) != "kept" {
		t.Fatalf("the namespace did not persist: %v: %q", err, out)
	}
}

// TestGoBuild builds a small module with a replace'd local dependency inside the sandbox
// and checks that it used the private module cache and build cache.
func TestGoBuild(t *testing.T) {
	requireLandlock(t)
	testenv.RequireTool(t, "go")
	if testing.Short() {
		t.Skip("builds Go's standard library into a fresh cache")
	}
	f := newFixture(t, false)
	write(t, filepath.Join(f.ws, "app", "go.mod"), "module example.com/app\n\ngo 1.22\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ../dep\n")
	write(t, filepath.Join(f.ws, "app", "main.go"), "package main\n\nimport \"example.com/dep\"\n\nfunc main() { println(dep.Hello()) }\n")
	write(t, filepath.Join(f.ws, "dep", "go.mod"), "module example.com/dep\n\ngo 1.22\n")
	write(t, filepath.Join(f.ws, "dep", "dep.go"), "package dep\n\nfunc Hello() string { return \"hello from dep\" }\n")
	out, err := f.sh(t, `cd app && GOFLAGS=-buildvcs=false GOTOOLCHAIN=local go build -o hello . && ./hello && go env GOMODCACHE GOCACHE`)
	if err != nil {
		t.Fatalf("go build in the sandbox: %v\n%s", err, out)
	}
	if !strings.Contains(out, "hello from dep") {
		t.Fatalf("unexpected output: %s", out)
	}
	want := []string{filepath.Join(f.profile.CacheNamespace, "go", "pkg", "mod"), filepath.Join(f.profile.CacheNamespace, "go-build")}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("go env does not show %s:\n%s", w, out)
		}
	}
	entries, err := os.ReadDir(want[1])
	if err != nil || len(entries) < 3 {
		t.Errorf("the private GOCACHE %s was not used: %v (%d entries)", want[1], err, len(entries))
	}
}

// TestNpm checks that npm uses the private cache and does not read a hostile host ~/.npmrc.
func TestNpm(t *testing.T) {
	requireLandlock(t)
	testenv.RequireTool(t, "npm")
	f := newFixture(t, false)
	out, err := f.sh(t, `npm config get cache && npm config get registry`)
	if err != nil {
		t.Fatalf("npm in the sandbox: %v\n%s", err, out)
	}
	lines := strings.Fields(out)
	if len(lines) < 2 || lines[0] != filepath.Join(f.profile.CacheNamespace, "npm") {
		t.Errorf("npm cache = %q, want %s", out, filepath.Join(f.profile.CacheNamespace, "npm"))
	}
	if strings.Contains(out, "evil") || !strings.Contains(out, "https://registry.npmjs.org/") {
		t.Errorf("npm registry = %q, want the default (the host ~/.npmrc must not be read)", out)
	}
}

// TestNoLandlock checks that a kernel without Landlock (simulated) makes the launcher refuse
// unless a person approved running unconfined.
func TestNoLandlock(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t, false)
	f.env = append(f.env, sandbox.PretendNoLandlockEnv+"=1")
	out, err := f.sh(t, `echo ran`)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitCannotRun || !strings.Contains(out, "no person approved") {
		t.Fatalf("want exit %d refusing to run unconfined, got %v: %s", ExitCannotRun, err, out)
	}
	f.profile.AllowUnconfined = true
	if out, err := f.sh(t, `echo ran`); err != nil || strings.TrimSpace(out) != "ran" {
		t.Fatalf("approved unconfined run: %v: %s", err, out)
	}
}

// TestOrdinaryUser runs key checks as uid 65534 with a workspace and home it owns: the
// refusals must come from the sandbox, since file permissions allow them.
func TestOrdinaryUser(t *testing.T) {
	testenv.RequireRoot(t)
	requireLandlock(t)
	f := newFixture(t, false)
	// Let uid 65534 reach the test binary and own the fixture.
	exe, _ := os.Executable()
	bin := filepath.Join(t.TempDir(), "launch.test")
	copyFile(t, exe, bin)
	for d := filepath.Dir(bin); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	for d := filepath.Dir(f.ws); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	if err := sandbox.Prepare(f.profile); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{f.ws, f.home, f.cacheRoot} {
		filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
	}
	tests := []struct {
		script string
		ok     bool
	}{
		{`echo x > README`, true},
		{`echo x > "$TMPDIR/x"`, true},
		{`echo x > "$HOME/x"`, false},
		{`cat "$HOME/.ssh/id_ed25519"`, false},
		{`echo x > .git/hooks/pre-commit`, false},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd, err := sandbox.Command(ctx, bin, f.profile, []string{"sh", "-c", tt.script}, f.env)
			if err != nil {
				t.Fatal(err)
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			out, err := cmd.CombinedOutput()
			if tt.ok != (err == nil) {
				t.Fatalf("want ok=%v, got %v: %s", tt.ok, err, out)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestProcessConfined checks the peer test a helper uses to refuse requests from inside a
// sandbox: a command started through the launcher reads as confined, this test does not.
func TestProcessConfined(t *testing.T) {
	requireLandlock(t)
	if got, err := sandbox.ProcessConfined(os.Getpid()); err != nil || got {
		t.Fatalf("ProcessConfined(test) = %v, %v; want false", got, err)
	}
	f := newFixture(t, false)
	cmd := f.command(t, "sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := sandbox.ProcessConfined(cmd.Process.Pid)
		if err == nil && got {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ProcessConfined(sandboxed sleep) = %v, %v; want true", got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRunner checks the helper's hook: Runner.Command computes the profile of the command's
// workspace from the command's environment and runs it confined in its directory.
func TestRunner(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t, false)
	exe, _ := os.Executable()
	r := sandbox.Runner{Launcher: exe, Getenv: func(k string) string {
		if k == sandbox.CacheDirEnv {
			return f.cacheRoot
		}
		return ""
	}}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.ws, "src")
	cmd, err := r.Command(context.Background(), f.ws, dir, false, sh, []string{"sh", "-c", `pwd; echo "$GOCACHE"; echo x > "$HOME/x"`}, f.env)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("writing the home directory succeeded: %s", out)
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < 2 || lines[0] != dir || lines[1] != filepath.Join(f.profile.CacheNamespace, "go-build") {
		t.Fatalf("unexpected output (want %s and the namespace's GOCACHE):\n%s", dir, out)
	}
	if _, err := r.Command(context.Background(), f.ws, f.home, false, sh, []string{"sh"}, f.env); err == nil {
		t.Fatal("a directory outside the workspace was accepted")
	}
}
