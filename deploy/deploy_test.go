package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/listener"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// repoRoot is the repository root, one level above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// binaries maps each binary to its cmd directory, as CMDS in the Makefile does.
var binaries = []struct{ name, cmd string }{
	{"s-code", "agent"},
	{"s-code-sandbox", "sandbox"},
	{"s-code-userhelper", "userhelper"},
	{"s-code-roothelper", "roothelper"},
}

// inTree reports whether the main package of binary name is in this tree (the helpers' cmd
// directories come from another branch; make build and install skip absent ones).
func inTree(t *testing.T, name string) bool {
	t.Helper()
	for _, b := range binaries {
		if b.name == name {
			_, err := os.Stat(filepath.Join(repoRoot(t), "cmd", b.cmd))
			return err == nil
		}
	}
	t.Fatalf("unknown binary %s", name)
	return false
}

// makeInstall runs make install (both systemd and launchd files) into a fresh DESTDIR, the
// binaries built into a temporary BIN, and returns DESTDIR and make's output.
func makeInstall(t *testing.T, destdir string, vars ...string) string {
	t.Helper()
	testenv.RequireTool(t, "make")
	testenv.RequireTool(t, "go")
	args := append([]string{"-C", repoRoot(t), "install", "DESTDIR=" + destdir,
		"BIN=" + filepath.Join(t.TempDir(), "bin"), "INSTALL_SYSTEMD=yes", "INSTALL_LAUNCHD=yes"}, vars...)
	return runMake(t, args...)
}

func runMake(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// installedFile is one file make install must put in place.
type installedFile struct {
	path string      // below DESTDIR
	mode fs.FileMode // permission bits
	src  string      // repository file it must equal, "" to skip the comparison
}

func expectedFiles(t *testing.T) []installedFile {
	files := []installedFile{
		{"/usr/local/share/doc/s-code/README.md", 0o644, "README.md"},
		{"/etc/s-code/roothelper.toml", 0o644, "deploy/roothelper.toml"},
		{"/etc/sysusers.d/s-code.conf", 0o644, "deploy/systemd/s-code.sysusers.conf"},
		{"/usr/local/lib/systemd/user/s-code-userhelper.socket", 0o644, "deploy/systemd/s-code-userhelper.socket"},
		{"/usr/local/lib/systemd/user/s-code-userhelper.service", 0o644, "deploy/systemd/s-code-userhelper.service"},
		{"/usr/local/lib/systemd/system/s-code-roothelper.socket", 0o644, "deploy/systemd/s-code-roothelper.socket"},
		{"/usr/local/lib/systemd/system/s-code-roothelper.service", 0o644, "deploy/systemd/s-code-roothelper.service"},
		{"/Library/LaunchAgents/dev.s-code.userhelper.plist", 0o644, "deploy/launchd/dev.s-code.userhelper.plist"},
		{"/Library/LaunchDaemons/dev.s-code.roothelper.plist", 0o644, "deploy/launchd/dev.s-code.roothelper.plist"},
	}
	for _, b := range binaries {
		if inTree(t, b.name) {
			files = append(files, installedFile{"/usr/local/bin/" + b.name, 0o755, ""})
		}
	}
	return files
}

func TestMakeInstallUninstall(t *testing.T) {
	destdir := t.TempDir()
	out := makeInstall(t, destdir)
	for _, b := range binaries {
		if !inTree(t, b.name) && !strings.Contains(out, "skipped "+b.name) {
			t.Errorf("make install neither installed nor reported skipping %s:\n%s", b.name, out)
		}
	}
	files := expectedFiles(t)
	for _, f := range files {
		p := destdir + f.path
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("not installed: %v", err)
			continue
		}
		if fi.Mode().Perm() != f.mode || !fi.Mode().IsRegular() {
			t.Errorf("%s: mode %v, want a regular file with %v", f.path, fi.Mode(), f.mode)
		}
		if os.Geteuid() == 0 {
			if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != 0 {
				t.Errorf("%s: owner %d:%d, want root (0:0)", f.path, st.Uid, st.Gid)
			}
		}
		if f.src != "" {
			want, err := os.ReadFile(filepath.Join(repoRoot(t), f.src))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (the default PREFIX must not rewrite anything)", f.path, f.src)
			}
		}
	}
	if fi, err := os.Stat(destdir + "/etc/s-code"); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("/etc/s-code: %v, want a 0755 directory", err)
	}
	// A second install keeps a policy the admin changed.
	policy := destdir + "/etc/s-code/roothelper.toml"
	edited := []byte("[access]\nuids = [1000]\n")
	if err := os.WriteFile(policy, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := makeInstall(t, destdir); !strings.Contains(out, "kept the existing") {
		t.Errorf("second install did not report keeping the policy:\n%s", out)
	}
	if got, _ := os.ReadFile(policy); !bytes.Equal(got, edited) {
		t.Errorf("install overwrote an existing policy: %q", got)
	}
	// Uninstall removes everything but the changed policy, then, once it is the default
	// again, that too.
	root := repoRoot(t)
	runMake(t, "-C", root, "uninstall", "DESTDIR="+destdir)
	if left := filesUnder(t, destdir); len(left) != 1 || left[0] != "/etc/s-code/roothelper.toml" {
		t.Errorf("after uninstall with a changed policy, files left: %q, want only the policy", left)
	}
	def, _ := os.ReadFile(filepath.Join(root, "deploy/roothelper.toml"))
	if err := os.WriteFile(policy, def, 0o644); err != nil {
		t.Fatal(err)
	}
	runMake(t, "-C", root, "uninstall", "DESTDIR="+destdir)
	if left := filesUnder(t, destdir); len(left) != 0 {
		t.Errorf("after uninstall, files left: %q", left)
	}
}

// filesUnder lists the non-directories below dir, as paths relative to it with a leading /.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestInstallPrefixRewritesPaths(t *testing.T) {
	destdir := t.TempDir()
	makeInstall(t, destdir, "PREFIX=/opt/s-code")
	for _, f := range []struct{ path, want string }{
		{"/opt/s-code/lib/systemd/user/s-code-userhelper.service", "ExecStart=/opt/s-code/bin/s-code-userhelper\n"},
		{"/opt/s-code/lib/systemd/system/s-code-roothelper.service", "ExecStart=/opt/s-code/bin/s-code-roothelper\n"},
		{"/Library/LaunchAgents/dev.s-code.userhelper.plist", "<string>/opt/s-code/bin/s-code-userhelper</string>"},
		{"/Library/LaunchDaemons/dev.s-code.roothelper.plist", "<string>/opt/s-code/bin/s-code-roothelper</string>"},
		{"/opt/s-code/lib/systemd/user/s-code-userhelper.socket", "Documentation=file:///opt/s-code/share/doc/s-code/README.md\n"},
	} {
		b, err := os.ReadFile(destdir + f.path)
		if err != nil {
			t.Errorf("not installed: %v", err)
			continue
		}
		if !bytes.Contains(b, []byte(f.want)) {
			t.Errorf("%s lacks %q", f.path, f.want)
		}
		if bytes.Contains(b, []byte("/usr/local/")) {
			t.Errorf("%s still names /usr/local/ with PREFIX=/opt/s-code", f.path)
		}
	}
	if _, err := os.Stat(destdir + "/opt/s-code/bin/s-code"); err != nil {
		t.Errorf("binary not under PREFIX: %v", err)
	}
}

// unitKeys reads the Key=Value settings of a unit file (comments and sections skipped; a key
// given twice keeps its last value).
func unitKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: not a setting: %q", path, line)
		}
		keys[k] = v
	}
	return keys
}

func TestUnitSettings(t *testing.T) {
	for _, tc := range []struct {
		file string
		want map[string]string
	}{
		{"systemd/s-code-userhelper.socket", map[string]string{
			"ListenStream": "%t/s-code/user.sock", "FileDescriptorName": listener.UserSocketName,
			"SocketMode": "0600", "DirectoryMode": "0700", "Accept": "no",
		}},
		{"systemd/s-code-roothelper.socket", map[string]string{
			"ListenStream": "/run/s-code/root.sock", "FileDescriptorName": listener.RootSocketName,
			"SocketMode": "0660", "SocketUser": "root", "SocketGroup": "s-code", "DirectoryMode": "0755", "Accept": "no",
		}},
		{"systemd/s-code-userhelper.service", map[string]string{
			"Type": "notify", "ExecStart": "/usr/local/bin/s-code-userhelper", "Restart": "on-failure",
			"NoNewPrivileges": "yes", "MemoryDenyWriteExecute": "no", "KillMode": "mixed",
		}},
		{"systemd/s-code-roothelper.service", map[string]string{
			"Type": "notify", "ExecStart": "/usr/local/bin/s-code-roothelper", "Restart": "on-failure", "KillMode": "mixed",
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := unitKeys(t, tc.file)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s=%q, want %q", k, got[k], v)
				}
			}
			if strings.HasSuffix(tc.file, ".service") && got["WatchdogSec"] == "" {
				t.Error("no WatchdogSec: the helper pings the watchdog, systemd must ask for it")
			}
		})
	}
}

// TestSystemdAnalyzeVerify runs systemd-analyze verify on the installed units, rewritten to
// name the binaries make install put into DESTDIR (verify checks that ExecStart exists), and
// demands exit status 0 and no output: verify exits 0 even for unknown settings, so a
// warning is only visible in its output.
func TestSystemdAnalyzeVerify(t *testing.T) {
	sa := testenv.RequireTool(t, "systemd-analyze")
	destdir := t.TempDir()
	makeInstall(t, destdir)
	runtimeDir := t.TempDir() // --user needs an XDG_RUNTIME_DIR
	for _, tc := range []struct {
		name, unitDir, binary string
		user                  bool
		units                 []string
	}{
		{"user", "/usr/local/lib/systemd/user", "s-code-userhelper", true, []string{"s-code-userhelper.socket", "s-code-userhelper.service"}},
		{"system", "/usr/local/lib/systemd/system", "s-code-roothelper", false, []string{"s-code-roothelper.socket", "s-code-roothelper.service"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !inTree(t, tc.binary) {
				t.Skipf("cmd for %s is not in this tree yet, so make install has no binary for ExecStart", tc.binary)
			}
			dir := t.TempDir()
			var paths []string
			for _, u := range tc.units {
				b, err := os.ReadFile(destdir + tc.unitDir + "/" + u)
				if err != nil {
					t.Fatal(err)
				}
				b = bytes.ReplaceAll(b, []byte("ExecStart=/usr/local/bin/"), []byte("ExecStart="+destdir+"/usr/local/bin/"))
				p := filepath.Join(dir, u)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			verify(t, sa, runtimeDir, tc.user, paths, true)
			// The check itself can fail: a unit with an unknown setting makes verify talk.
			bad := filepath.Join(t.TempDir(), tc.units[1])
			b, _ := os.ReadFile(paths[1])
			os.WriteFile(bad, append(b, []byte("NoSuchSetting=yes\n")...), 0o644)
			verify(t, sa, runtimeDir, tc.user, []string{bad}, false)
		})
	}
}

func verify(t *testing.T, sa, runtimeDir string, user bool, paths []string, wantClean bool) {
	t.Helper()
	args := []string{"verify"}
	if user {
		args = append(args, "--user")
	}
	cmd := exec.Command(sa, append(args, paths...)...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir, "SYSTEMD_LOG_COLOR=0")
	out, err := cmd.CombinedOutput()
	clean := err == nil && len(bytes.TrimSpace(out)) == 0
	if clean != wantClean {
		t.Errorf("systemd-analyze %s: err=%v, output:\n%s\nwant clean=%v", strings.Join(cmd.Args[1:], " "), err, out, wantClean)
	}
}

// plist parses a property list with python3's plistlib (a real plist parser) into JSON.
func plist(t *testing.T, path string) map[string]any {
	t.Helper()
	py := testenv.RequireTool(t, "python3")
	out, err := exec.Command(py, "-c", "import json,plistlib,sys; print(json.dumps(plistlib.load(open(sys.argv[1],'rb'))))", path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s is not a property list: %s", path, ee.Stderr)
		}
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLaunchdPlists(t *testing.T) {
	destdir := t.TempDir()
	makeInstall(t, destdir)
	for _, tc := range []struct {
		file, installed, binary, socket string
		mode                            float64
		keys                            map[string]any
	}{
		{"launchd/dev.s-code.userhelper.plist", "/Library/LaunchAgents/dev.s-code.userhelper.plist",
			"s-code-userhelper", listener.UserSocketName, 0o600,
			map[string]any{"SecureSocketWithKey": "S_CODE_USER_SOCKET", "SockType": "stream", "SockFamily": "Unix"}},
		{"launchd/dev.s-code.roothelper.plist", "/Library/LaunchDaemons/dev.s-code.roothelper.plist",
			"s-code-roothelper", listener.RootSocketName, 0o660,
			map[string]any{"SockPathName": "/var/run/s-code-root.sock", "SockType": "stream", "SockFamily": "Unix", "SockPathOwner": 0.0}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			for _, p := range []string{tc.file, destdir + tc.installed} {
				m := plist(t, p)
				if want := strings.TrimSuffix(filepath.Base(tc.file), ".plist"); m["Label"] != want {
					t.Errorf("%s: Label %v, want %s", p, m["Label"], want)
				}
				args, _ := m["ProgramArguments"].([]any)
				// make install puts the binaries into BINDIR, /usr/local/bin by default.
				if want := "/usr/local/bin/" + tc.binary; len(args) == 0 || args[0] != want {
					t.Errorf("%s: ProgramArguments %v, want [%s]", p, args, want)
				} else if inTree(t, tc.binary) {
					if fi, err := os.Stat(destdir + want); err != nil || fi.Mode().Perm()&0o111 == 0 {
						t.Errorf("make install put no executable where the plist points: %v", err)
					}
				}
				sockets, _ := m["Sockets"].(map[string]any)
				if len(sockets) != 1 {
					t.Fatalf("%s: Sockets %v, want one socket named %s", p, sockets, tc.socket)
				}
				s, ok := sockets[tc.socket].(map[string]any)
				if !ok {
					t.Fatalf("%s: no socket named %s (the name internal/listener asks launchd for): %v", p, tc.socket, sockets)
				}
				if s["SockPathMode"] != tc.mode {
					t.Errorf("%s: SockPathMode %v, want %v (decimal for %#o)", p, s["SockPathMode"], tc.mode, int(tc.mode))
				}
				for k, v := range tc.keys {
					if s[k] != v {
						t.Errorf("%s: %s = %v, want %v", p, k, s[k], v)
					}
				}
			}
		})
	}
}

// TestDefaultPolicy: the shipped policy is valid TOML (python3's tomllib), uses only the
// tables and keys internal/rootpolicy knows, admits nobody, and sets every limit.
func TestDefaultPolicy(t *testing.T) {
	py := testenv.RequireTool(t, "python3")
	out, err := exec.Command(py, "-c", "import json,sys,tomllib; print(json.dumps(tomllib.load(open(sys.argv[1],'rb'))))", "roothelper.toml").CombinedOutput()
	if err != nil {
		t.Fatalf("roothelper.toml: %v\n%s", err, out)
	}
	var p map[string]map[string]any
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("roothelper.toml is not a set of tables: %v", err)
	}
	known := map[string][]string{
		"allow":    {"users", "groups"},
		"limits":   {"max_concurrent", "max_timeout", "default_timeout"},
		"timeouts": {"kill_grace", "drain"},
		"exec":     {"path"},
		"socket":   {"group"},
	}
	for table, keys := range p {
		for k := range keys {
			if !slices.Contains(known[table], k) {
				t.Errorf("[%s] %s is not a key internal/rootpolicy knows", table, k)
			}
		}
	}
	if users, groups := p["allow"]["users"].([]any), p["allow"]["groups"].([]any); len(users) != 0 || len(groups) != 0 {
		t.Errorf("default policy admits users %v groups %v, want nobody", users, groups)
	}
	if n, _ := p["limits"]["max_concurrent"].(float64); n < 1 {
		t.Errorf("limits.max_concurrent = %v, want >= 1", p["limits"]["max_concurrent"])
	}
	dur := func(table, key string) time.Duration {
		s, _ := p[table][key].(string)
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Errorf("[%s] %s = %q, want a positive duration", table, key, s)
		}
		return d
	}
	if dur("limits", "default_timeout") > dur("limits", "max_timeout") {
		t.Error("default_timeout exceeds max_timeout")
	}
	// The helper must be able to drain and kill before systemd gives up on it.
	stop, err := time.ParseDuration(unitKeys(t, "systemd/s-code-roothelper.service")["TimeoutStopSec"])
	if err != nil {
		t.Fatal(err)
	}
	if drain := dur("timeouts", "drain") + dur("timeouts", "kill_grace"); drain >= stop {
		t.Errorf("drain+kill_grace = %v, not below the unit's TimeoutStopSec=%v", drain, stop)
	}
}

// TestUserHelperUnderSocketActivation starts the installed s-code-userhelper the way its units
// do, with the socket settings of s-code-userhelper.socket, under systemd-socket-activate and
// with a notification socket of our own, and checks the daemon's wiring: it takes the
// activated socket, sends READY=1, pings the watchdog systemd asked for, and sends STOPPING=1
// on SIGTERM.
func TestUserHelperUnderSocketActivation(t *testing.T) {
	if !inTree(t, "s-code-userhelper") {
		t.Skip("cmd/userhelper is not in this tree yet")
	}
	ssa := testenv.RequireTool(t, "systemd-socket-activate")
	destdir := t.TempDir()
	makeInstall(t, destdir)
	unit := unitKeys(t, destdir+"/usr/local/lib/systemd/user/s-code-userhelper.socket")
	home := t.TempDir()
	runtimeDir := filepath.Join(home, "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	sockPath := strings.ReplaceAll(unit["ListenStream"], "%t", runtimeDir)
	if err := os.MkdirAll(filepath.Dir(sockPath), 0o700); err != nil { // DirectoryMode=0700
		t.Fatal(err)
	}
	notifyPath := filepath.Join(home, "notify")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()
	cmd := exec.Command(ssa, "-l", sockPath, "--fdname="+unit["FileDescriptorName"],
		"-E", "NOTIFY_SOCKET="+notifyPath, "-E", "WATCHDOG_USEC=2000000",
		"-E", "XDG_RUNTIME_DIR="+runtimeDir, "-E", "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"-E", "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		destdir+"/usr/local/bin/s-code-userhelper")
	cmd.Env = append(os.Environ(), "HOME="+home)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("helper output:\n%s", stderr.String())
		}
	}()
	// The first connection makes systemd-socket-activate exec the helper.
	var c net.Conn
	for i := 0; i < 100; i++ {
		if c, err = net.Dial("unix", sockPath); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("dial %s: %v", sockPath, err)
	}
	c.Close()
	waitFor := func(state string, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		buf := make([]byte, 4096)
		for {
			notify.SetReadDeadline(deadline)
			n, err := notify.Read(buf)
			if err != nil {
				t.Fatalf("no %s from the helper within %v: %v", state, within, err)
			}
			for _, line := range strings.Split(string(buf[:n]), "\n") {
				if line == state {
					return
				}
			}
		}
	}
	waitFor("READY=1", 20*time.Second)
	waitFor("WATCHDOG=1", 5*time.Second)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitFor("STOPPING=1", 10*time.Second)
	select {
	case <-exited:
		exited <- nil
	case <-time.After(45 * time.Second): // TimeoutStopSec of the unit
		t.Error("the helper did not exit after SIGTERM within the unit's TimeoutStopSec")
	}
}
