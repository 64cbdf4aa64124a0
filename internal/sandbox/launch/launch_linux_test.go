package launch

import (
	"context"
	"errors"
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
	// driverEnv holds a profile (JSON): the test binary then runs its arguments under it
	// through sandbox.Command, as the user helper does, and exits with their status. Tests
	// start it as another user, so that the launcher is started by that user.
	driverEnv = "S_CODE_TEST_DRIVER_PROFILE"
)

func TestMain(m *testing.M) {
	if os.Getenv(asLauncherEnv) == "1" && len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "--profile") {
		os.Exit(Main(os.Args[1:], os.Stderr))
	}
	if p := os.Getenv(probeEnv); p != "" {
		os.Exit(probe(p, os.Args[1:]))
	}
	if p := os.Getenv(driverEnv); p != "" {
		os.Exit(drive(p, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// drive runs argv under the profile profileJSON through the launcher (this binary), as
// the user helper does, and returns its exit status.
func drive(profileJSON string, argv []string) int {
	p, err := sandbox.ParseProfile([]byte(profileJSON))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, driverEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd, err := sandbox.Command(context.Background(), exe, p, argv, env)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The user helper's runner (internal/execrun) adds a process group to the attributes.
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	return 0
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
	case "capabilities":
		// Every capability set of the command must be empty, also after a launcher that
		// held CAP_SYS_ADMIN in its own user namespace; with the argument "bounding" the
		// bounding set too (a launcher that could empty it: root, or in its own user
		// namespace; an ordinary user's full bounding set grants nothing under
		// no_new_privs).
		var b []byte
		if b, err = os.ReadFile("/proc/self/status"); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				k, v, _ := strings.Cut(line, ":")
				if (k == "CapInh" || k == "CapPrm" || k == "CapEff" || k == "CapAmb" || (k == "CapBnd" && len(args) > 0 && args[0] == "bounding")) && strings.Trim(strings.TrimSpace(v), "0") != "" {
					err = fmt.Errorf("%s is %s", k, strings.TrimSpace(v))
				}
			}
		}
	case "mountns-usable":
		err = sandbox.MountNamespaceUsable()
	case "umount":
		err = unix.Unmount(args[0], unix.MNT_DETACH)
	case "connect-unix": // a raw connect(2) to the Unix socket args[0]
		var fd int
		if fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
			err = unix.Connect(fd, &unix.SockaddrUnix{Name: args[0]})
			unix.Close(fd)
		}
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
	write(t, filepath.Join(f.ws, ".vscode", "settings.json"), "{}\n")
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

// layouts are the two ways the launcher keeps protected paths read-only.
var layouts = []string{sandbox.ProtectionMountNamespace, sandbox.ProtectionLandlockEntries}

// fsCase is one shell command run in the sandbox, with whether it must succeed under the
// mount-namespace layout and under the per-entry Landlock layout.
type fsCase struct {
	name           string
	script         string
	mount, entries bool
}

// workspaceCases are the checks of the workspace and its protected paths, in order (some
// depend on earlier ones).
var workspaceCases = []fsCase{
	{"write a workspace file", `echo changed > README && cat README`, true, true},
	{"create a file in a workspace directory", `echo new > src/new.txt && cat src/new.txt`, true, true},
	{"make a directory in a workspace directory", `mkdir -p src/a/b && rmdir src/a/b`, true, true},
	{"create a file at the workspace top level", `echo x > newfile && cat newfile`, true, false},
	{"edit a top-level file in place (sed -i: temporary file and rename)", `sed -i s/changed/edited/ README && grep -q edited README`, true, false},
	{"make top-level directories", `mkdir node_modules target && touch node_modules/x target/y`, true, false},
	{"rename and remove top-level entries", `touch a && mv a b && rm b`, true, false},
	{"create and remove a file directly in .git", `echo x > .git/index.lock && rm .git/index.lock`, true, false},
	{"write git objects", `mkdir -p .git/objects/ab && echo x > .git/objects/ab/cd`, true, true},
	{"write .git/hooks", `echo x > .git/hooks/pre-commit`, false, false},
	{"write .git/config", `echo x >> .git/config`, false, false},
	{"replace .git/config by rename", `echo x > .git/cfg.new; mv .git/cfg.new .git/config`, false, false},
	{"remove .git/config", `rm -f .git/config`, false, false},
	{"write .git/config through a hard link", `ln .git/config cfg-link && echo x >> cfg-link`, false, false},
	{"write a submodule's config", `echo x >> .git/modules/sub/config`, false, false},
	{"create a submodule hook", `mkdir -p .git/modules/sub/hooks`, false, false},
	{"remove .git/hooks", `rm -rf .git/hooks`, false, false},
	{"move .git/hooks aside", `mv .git/hooks h`, false, false},
	{"move .git aside", `mv .git g`, false, false},
	{"write an existing .vscode file", `echo x > .vscode/settings.json`, false, false},
	{"remove .vscode", `rm -rf .vscode`, false, false},
	// A protected path missing at launch gets no mount (docs/sandbox.md, known limits).
	{"create a missing protected directory", `mkdir .claude && rmdir .claude`, true, false},
}

// outsideCases are the checks of everything outside the workspace.
func outsideCases(outside string) []fsCase {
	return []fsCase{
		{"write the private temporary directory", `echo t > "$TMPDIR/t" && cat "$TMPDIR/t"`, true, true},
		{"read a system file", `head -c1 /etc/passwd >/dev/null`, true, true},
		{"write /dev/null", `echo x > /dev/null`, true, true},
		{"read a runtime root", `cat "$HOME/.nvm/versions/node/v20.0.0/bin/node"`, true, true},
		{"write a runtime root", `echo x > "$HOME/.nvm/versions/node/v20.0.0/bin/node"`, false, false},
		{"write the home directory", `echo x > "$HOME/x"`, false, false},
		{"write /etc", `echo x > /etc/s-code-sandbox-test`, false, false},
		{"write a temporary path outside the private one", `echo x > ` + outside, false, false},
		{"write /tmp", `echo x > /tmp/s-code-sandbox-test-$$`, false, false},
		{"read an SSH key", `cat "$HOME/.ssh/id_ed25519"`, false, false},
		{"read the host npmrc", `cat "$HOME/.npmrc"`, false, false},
		{"read /etc/shadow", `test ! -e /etc/shadow || cat /etc/shadow`, false, false},
		{"list the home directory", `ls "$HOME"`, false, false},
		{"read another process's environment", `cat /proc/1/environ`, false, false},
	}
}

// TestFilesystem runs shell commands through the launcher and checks what they may touch,
// under both layouts of the protected paths. The test runs as root, which owns /etc and the
// fake home: every refusal below comes from the sandbox (root's CAP_DAC_OVERRIDE does not
// bypass Landlock, and its capabilities are dropped).
func TestFilesystem(t *testing.T) {
	requireLandlock(t)
	for _, layout := range layouts {
		t.Run(layout, func(t *testing.T) {
			f := newFixture(t, false)
			f.profile.Protection = layout
			outside := filepath.Join(filepath.Dir(f.ws), "outside-tmp")
			for _, tt := range append(slices.Clone(workspaceCases), outsideCases(outside)...) {
				t.Run(tt.name, func(t *testing.T) {
					want := tt.mount
					if layout == sandbox.ProtectionLandlockEntries {
						want = tt.entries
					}
					out, err := f.sh(t, tt.script)
					if want && err != nil {
						t.Fatalf("want success, got %v: %s", err, out)
					}
					if !want && err == nil {
						t.Fatalf("want failure, got success: %s", out)
					}
					if layout == sandbox.ProtectionMountNamespace && strings.Contains(out, "per-entry Landlock") {
						t.Fatalf("the launcher fell back to the per-entry layout: %s", out)
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
			f.checkProtectedIntact(t)
			// The launcher's mounts stay in its own namespace.
			if b, err := os.ReadFile("/proc/self/mountinfo"); err != nil || strings.Contains(string(b), f.ws) {
				t.Errorf("the workspace's mounts leaked into the test's mount namespace: %v\n%s", err, b)
			}
		})
	}
}

// checkProtectedIntact fails t when a protected file of the fixture was changed, removed or
// added to.
func (f *fixture) checkProtectedIntact(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(f.ws, ".git", "hooks", "pre-commit")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".git/hooks/pre-commit was written: %v", err)
	}
	for name, want := range map[string]string{
		".git/config":                  "[core]\n\tbare = false\n",
		".git/hooks/pre-commit.sample": "#!/bin/sh\n",
		".vscode/settings.json":        "{}\n",
	} {
		if fi, err := os.Lstat(filepath.Join(f.ws, filepath.Dir(name))); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			continue // planted by the test
		}
		if b, err := os.ReadFile(filepath.Join(f.ws, name)); err != nil || string(b) != want {
			t.Errorf("%s changed: %q, %v", name, b, err)
		}
	}
}

// TestGitCommit checks that git add and git commit work in the sandbox (they create
// .git/index.lock and new objects) while the repository's hooks and config stay read-only.
func TestGitCommit(t *testing.T) {
	requireLandlock(t)
	git := testenv.RequireTool(t, "git")
	f := newFixture(t, false)
	if err := os.RemoveAll(filepath.Join(f.ws, ".git")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(git, "init", "-q", "-b", "main", f.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	f.env = append(f.env, "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com", "GIT_CONFIG_NOSYSTEM=1")
	out, err := f.sh(t, `git add . && git commit -q -m first && echo more >> README && git commit -qam second && git log --format=%s`)
	if err != nil || strings.Fields(out)[0] != "second" {
		t.Fatalf("git add and commit in the sandbox: %v\n%s", err, out)
	}
	for _, script := range []string{`git config core.hooksPath /tmp`, `echo 'exit 0' > .git/hooks/pre-commit`} {
		if out, err := f.sh(t, script); err == nil {
			t.Errorf("%s: want failure, got success: %s", script, out)
		}
	}
}

// TestSymlinkPlantedInWorkspace checks that symbolic links in the workspace, which the
// launcher walks to carve out protected paths and opens to mount them, never extend a grant
// to their targets: not at the top level (keys -> ~/.ssh), and not as a protected path
// (.vscode -> ~/.ssh), which makes the mount-namespace layout fall back to the per-entry one.
func TestSymlinkPlantedInWorkspace(t *testing.T) {
	requireLandlock(t)
	for _, layout := range layouts {
		t.Run(layout, func(t *testing.T) {
			f := newFixture(t, false)
			f.profile.Protection = layout
			ssh := filepath.Join(f.home, ".ssh")
			if err := os.RemoveAll(filepath.Join(f.ws, ".vscode")); err != nil {
				t.Fatal(err)
			}
			for link, target := range map[string]string{"keys": ssh, "home": f.home, ".vscode": ssh} {
				if err := os.Symlink(target, filepath.Join(f.ws, link)); err != nil {
					t.Fatal(err)
				}
			}
			for _, script := range []string{`cat keys/id_ed25519`, `echo x > home/planted`, `cat .vscode/id_ed25519`, `ls .vscode/`, `rm .vscode && mkdir .vscode`} {
				if out, err := f.sh(t, script); err == nil {
					t.Errorf("%s: want failure, got success: %s", script, out)
				}
			}
			out, err := f.sh(t, `echo x > .git/hooks/pre-commit; echo ok > src/ok`)
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if fellBack := strings.Contains(out, "per-entry Landlock"); fellBack != (layout == sandbox.ProtectionMountNamespace) {
				t.Errorf("fell back to the per-entry layout: %v, want %v: %s", fellBack, layout == sandbox.ProtectionMountNamespace, out)
			}
			f.checkProtectedIntact(t)
		})
	}
}

// TestMountLayoutEdges checks the mount-namespace layout on workspaces whose .git is not a
// complete directory: a linked worktree's .git file stays read-only, a .git without hooks
// gets an empty, read-only hooks directory, and a .git without config makes the launcher
// fall back to the per-entry layout (and say so).
func TestMountLayoutEdges(t *testing.T) {
	requireLandlock(t)
	tests := []struct {
		name     string
		setup    func(t *testing.T, ws string)
		script   string
		ok       bool
		fallback bool
	}{
		{"a .git file cannot be written", func(t *testing.T, ws string) {
			os.RemoveAll(filepath.Join(ws, ".git"))
			write(t, filepath.Join(ws, ".git"), "gitdir: /nonexistent/.git/worktrees/ws\n")
		}, `echo gitdir: /tmp/evil > .git`, false, false},
		{"a .git file cannot be removed", func(t *testing.T, ws string) {
			os.RemoveAll(filepath.Join(ws, ".git"))
			write(t, filepath.Join(ws, ".git"), "gitdir: /nonexistent/.git/worktrees/ws\n")
		}, `rm -f .git`, false, false},
		{"a missing .git/hooks is made and read-only", func(t *testing.T, ws string) {
			os.RemoveAll(filepath.Join(ws, ".git", "hooks"))
		}, `test -d .git/hooks && ! echo x > .git/hooks/pre-commit && echo x > newfile`, true, false},
		{"a .git without config falls back", func(t *testing.T, ws string) {
			os.Remove(filepath.Join(ws, ".git", "config"))
		}, `echo x > .git/config`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, false)
			f.profile.Protection = sandbox.ProtectionMountNamespace
			tt.setup(t, f.ws)
			out, err := f.sh(t, tt.script)
			if tt.ok != (err == nil) {
				t.Fatalf("want ok=%v, got %v: %s", tt.ok, err, out)
			}
			if got := strings.Contains(out, "per-entry Landlock"); got != tt.fallback {
				t.Fatalf("fell back: %v, want %v: %s", got, tt.fallback, out)
			}
		})
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
		{"capabilities", []string{"bounding"}, "ok"},
		{"umount", []string{filepath.Join(f.ws, ".git", "hooks")}, "errno EPERM"},
		// In its own PID namespace the command cannot even name outside processes.
		{"kill", []string{strconv.Itoa(os.Getpid())}, "errno ESRCH"},
		// Without one, Landlock ABI 6 scoping: no signals to processes outside the sandbox.
		{"kill-no-pidns", []string{strconv.Itoa(os.Getpid())}, "errno EPERM"},
	}
	for _, tt := range tests {
		t.Run(tt.probe, func(t *testing.T) {
			if tt.probe == "kill-no-pidns" && sandbox.ProbeFeatures().LandlockABI < 6 {
				t.Skip("signal scoping needs Landlock ABI 6")
			}
			f := *f
			if tt.probe == "kill-no-pidns" {
				f.profile.PIDNamespace = false
				tt.probe = "kill"
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

// TestOrdinaryUser runs the checks as uid 65534 with a workspace and home it owns: the
// refusals must come from the sandbox, since file permissions allow them. The test binary
// runs as that user and starts the launcher through sandbox.Command, as the user helper
// does, so under the mount-namespace layout the launcher starts in its own user namespace.
func TestOrdinaryUser(t *testing.T) {
	testenv.RequireRoot(t)
	requireLandlock(t)
	// Let uid 65534 reach the test binary and own the fixture.
	exe, _ := os.Executable()
	bin := filepath.Join(t.TempDir(), "launch.test")
	testenv.CopyExecutable(t, exe, bin)
	for d := filepath.Dir(bin); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	for _, layout := range layouts {
		t.Run(layout, func(t *testing.T) {
			f := newFixture(t, false)
			f.profile.Protection = layout
			f.profile.ReadOnlyRoots = append(f.profile.ReadOnlyRoots, filepath.Dir(bin)) // the probe
			for d := filepath.Dir(f.ws); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
				os.Chmod(d, 0o755)
			}
			if err := sandbox.Prepare(f.profile); err != nil {
				t.Fatal(err)
			}
			for _, root := range []string{f.ws, f.home, f.cacheRoot} {
				filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
			}
			profile, err := f.profile.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			run := func(t *testing.T, argv ...string) (string, error) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, bin, argv...)
				cmd.Env = append(slices.Clone(f.env), driverEnv+"="+string(profile))
				cmd.Dir = f.ws
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			for _, tt := range workspaceCases {
				t.Run(tt.name, func(t *testing.T) {
					want := tt.mount
					if layout == sandbox.ProtectionLandlockEntries {
						want = tt.entries
					}
					out, err := run(t, "sh", "-c", tt.script)
					if want != (err == nil) {
						t.Fatalf("want ok=%v, got %v: %s", want, err, out)
					}
					if layout == sandbox.ProtectionMountNamespace && strings.Contains(out, "per-entry Landlock") {
						t.Fatalf("the launcher fell back to the per-entry layout: %s", out)
					}
				})
			}
			for _, tt := range []struct{ script string }{
				{`echo x > "$HOME/x"`}, {`cat "$HOME/.ssh/id_ed25519"`}, {`echo x > /tmp/s-code-sandbox-test-$$`},
			} {
				t.Run(tt.script, func(t *testing.T) {
					if out, err := run(t, "sh", "-c", tt.script); err == nil {
						t.Fatalf("want failure, got success: %s", out)
					}
				})
			}
			t.Run("launcher started without a user namespace falls back", func(t *testing.T) {
				// Started directly as the user (not through sandbox.Command), the launcher
				// has no CAP_SYS_ADMIN: it must keep the protected paths read-only with the
				// per-entry layout and say so.
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				p := f.profile
				p.PIDNamespace = false // TestLauncherRefusesWithoutPIDNamespace covers it
				cmd, err := sandbox.Command(ctx, bin, p, []string{"sh", "-c", `echo x > .git/hooks/pre-commit; echo x > newfile2`}, f.env)
				if err != nil {
					t.Fatal(err)
				}
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
				out, err := cmd.CombinedOutput()
				if err == nil || (layout == sandbox.ProtectionMountNamespace) != strings.Contains(string(out), "per-entry Landlock") {
					t.Fatalf("want both writes refused and, for %s, the fallback named: %v: %s", layout, err, out)
				}
			})
			t.Run("user namespace probe", func(t *testing.T) {
				cmd := exec.Command(bin)
				cmd.Env = []string{probeEnv + "=mountns-usable"}
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
				out, _ := cmd.CombinedOutput()
				if strings.TrimSpace(string(out)) != "ok" {
					t.Fatalf("MountNamespaceUsable as uid 65534 (unshare -Ur works here): %s", out)
				}
			})
			t.Run("capabilities", func(t *testing.T) {
				args := []string{"env", probeEnv + "=capabilities", bin}
				if layout == sandbox.ProtectionMountNamespace {
					args = append(args, "bounding")
				}
				out, err := run(t, args...)
				if err != nil || strings.TrimSpace(out) != "ok" {
					t.Fatalf("capabilities of the command: %v: %s", err, out)
				}
			})
			f.checkProtectedIntact(t)
		})
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
		switch k {
		case sandbox.CacheDirEnv:
			return f.cacheRoot
		case "HOME":
			return f.home
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
	// The command's environment has no say in the profile: a toolchain variable naming "/"
	// does not make the root readable, and a cache directory elsewhere is not granted.
	elsewhere := t.TempDir()
	env := append(slices.Clone(f.env), "GOROOT=/", sandbox.CacheDirEnv+"="+elsewhere, "XDG_CACHE_HOME="+elsewhere, "HOME="+elsewhere)
	cmd, err = r.Command(context.Background(), f.ws, dir, false, sh, []string{"sh", "-c", `ls / >/dev/null 2>&1 && echo listed-root; echo "$GOCACHE"; echo x > "$1/x" && echo wrote-elsewhere`, "sh", elsewhere}, env)
	if err != nil {
		t.Fatal(err)
	}
	out, _ = cmd.CombinedOutput()
	if strings.Contains(string(out), "listed-root") || strings.Contains(string(out), "wrote-elsewhere") || !strings.Contains(string(out), filepath.Join(f.profile.CacheNamespace, "go-build")) {
		t.Fatalf("the command's environment changed the profile:\n%s", out)
	}
}
