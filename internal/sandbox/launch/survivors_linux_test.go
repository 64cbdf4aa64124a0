package launch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/sandbox"
	"github.com/s-code-dev/s-code/internal/testenv"
)

// holderEnv holds a profile (JSON): the test binary then runs its arguments (a bash script
// and the way it ends: end, timeout or cancel) under it through sandbox.Command and
// execrun.Start, as the user helper does, prints "started", and exits 0 once execrun says
// the command has ended. Tests start it as root and as another user, and kill it outright.
const holderEnv = "S_CODE_TEST_HOLDER_PROFILE"

// markEnv marks every process a survivor test starts: each inherits it, so /proc/PID/environ
// names the test's processes wherever they went (setsid, double fork, nohup, disown).
const markEnv = "S_CODE_TEST_MARK"

func init() {
	if p := os.Getenv(holderEnv); p != "" {
		os.Exit(hold(p, os.Args[1:]))
	}
}

func hold(profileJSON string, args []string) int {
	p, err := sandbox.ParseProfile([]byte(profileJSON))
	if err != nil || len(args) != 2 {
		fmt.Fprintln(os.Stderr, "holder: want a profile and SCRIPT MODE:", err)
		return 125
	}
	exe, _ := os.Executable()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, holderEnv+"=") {
			env = append(env, kv)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd, err := sandbox.Command(ctx, exe, p, []string{"bash", "-c", args[0]}, env)
	if err != nil {
		fmt.Fprintln(os.Stderr, "holder:", err)
		return 125
	}
	opts := execrun.Options{Output: func(_ execrun.Stream, b []byte) { os.Stdout.Write(b) }, KillGrace: 500 * time.Millisecond}
	if args[1] == "timeout" {
		opts.Timeout = 1500 * time.Millisecond
	}
	proc, err := execrun.Start(ctx, cmd, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "holder:", err)
		return 125
	}
	fmt.Println("started")
	if args[1] == "cancel" {
		time.AfterFunc(1500*time.Millisecond, cancel)
	}
	r := proc.Wait()
	fmt.Printf("ended status %d timed-out %v canceled %v\n", r.Status(), r.TimedOut, r.Canceled)
	return 0
}

// marked returns the live processes whose environment holds markEnv=mark.
func marked(mark string) []int {
	want := []byte(markEnv + "=" + mark + "\x00")
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	var pids []int
	for _, e := range envs {
		b, err := os.ReadFile(e)
		if err != nil || !bytes.Contains(b, want) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join(filepath.Dir(e), "stat")); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && len(st) > i+2 && (st[i+2] == 'Z' || st[i+2] == 'X') {
				continue
			}
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(e)))
		pids = append(pids, pid)
	}
	return pids
}

// escapers starts five processes that leave the command's process group or its process
// tree the ways a shell offers, then says so and waits $1 seconds.
const escapers = `setsid sleep 3600 &
( sleep 3600 & ) &
nohup sleep 3600 >/dev/null 2>&1 &
sleep 3600 & disown
setsid bash -c 'sleep 3600 & sleep 3600' >/dev/null 2>&1 < /dev/null &
sleep 0.2; echo ready; sleep "$TAIL"`

// TestNothingOutlivesTheCommand starts processes that escape the command's process group
// (setsid, a double fork, nohup, disown) and checks /proc for survivors after the command
// ends, times out, is cancelled, and after its helper (a holder process using execrun, as
// the user helper does) is killed outright; as root and as uid 65534, whose launcher gets
// its PID namespace through a user namespace.
func TestNothingOutlivesTheCommand(t *testing.T) {
	requireLandlock(t)
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "bash")
	testenv.RequireTool(t, "setsid")
	testenv.RequireTool(t, "nohup")
	bin := testenv.PublicExecutable(t)
	for _, user := range []string{"root", "uid 65534"} {
		t.Run(user, func(t *testing.T) {
			f := newFixture(t, false)
			if !f.profile.PIDNamespace {
				t.Fatal("the profile has no PID namespace, although root can make one")
			}
			f.profile.ReadOnlyRoots = append(f.profile.ReadOnlyRoots, filepath.Dir(bin))
			var cred *syscall.Credential
			if user != "root" {
				cred = &syscall.Credential{Uid: 65534, Gid: 65534}
				for d := filepath.Dir(f.ws); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
					os.Chmod(d, 0o755)
				}
				if err := sandbox.Prepare(f.profile); err != nil {
					t.Fatal(err)
				}
				for _, root := range []string{f.ws, f.home, f.cacheRoot} {
					filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
				}
			}
			profile, err := f.profile.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range []string{"end", "timeout", "cancel", "helper killed"} {
				t.Run(mode, func(t *testing.T) {
					mark := strconv.FormatInt(time.Now().UnixNano(), 36)
					tail := "3600"
					if mode == "end" {
						tail = "1"
					}
					hmode := mode
					if mode == "helper killed" {
						hmode = "end"
					}
					cmd := exec.Command(bin, escapers, hmode)
					cmd.Env = append(append([]string{}, f.env...), holderEnv+"="+string(profile), markEnv+"="+mark, "TAIL="+tail)
					cmd.Dir = f.ws
					cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() {
						for _, pid := range marked(mark) {
							syscall.Kill(pid, syscall.SIGKILL)
						}
					})
					// The five escapers and the command itself (bash, its sleep) are seen
					// before the command ends: else the test could not fail.
					deadline := time.Now().Add(10 * time.Second)
					for len(marked(mark)) < 7 && time.Now().Before(deadline) {
						time.Sleep(10 * time.Millisecond)
					}
					if n := len(marked(mark)); n < 7 {
						cmd.Process.Kill()
						cmd.Wait()
						t.Fatalf("only %d marked processes started: %s", n, out.String())
					}
					if mode == "helper killed" {
						cmd.Process.Kill()
					}
					err := cmd.Wait()
					var ee *exec.ExitError
					if mode != "helper killed" && err != nil {
						t.Fatalf("holder: %v: %s", err, out.String())
					} else if mode == "helper killed" && !errors.As(err, &ee) {
						t.Fatalf("holder: %v", err)
					}
					if mode == "helper killed" {
						// Nothing waits for the launcher now: the kernel ends it
						// (PR_SET_PDEATHSIG) and its namespace, without a reaper's help.
						deadline := time.Now().Add(5 * time.Second)
						for len(marked(mark)) > 0 && time.Now().Before(deadline) {
							time.Sleep(10 * time.Millisecond)
						}
					}
					if left := marked(mark); len(left) > 0 {
						t.Fatalf("%d processes outlived the command (%v): %s", len(left), left, out.String())
					}
					if mode != "helper killed" && !strings.Contains(out.String(), "ready") {
						t.Fatalf("the command did not run: %s", out.String())
					}
				})
			}
		})
	}
}

// TestLauncherRefusesWithoutPIDNamespace checks that a launcher whose profile asks for a PID
// namespace and that was started outside one refuses the command instead of running it
// where its processes could outlive it.
func TestLauncherRefusesWithoutPIDNamespace(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t, false)
	f.profile.PIDNamespace = true
	exe, _ := os.Executable()
	args, err := sandbox.LauncherArgs(exe, f.profile, []string{"sh", "-c", "echo ran"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args[1:]...)
	cmd.Env = f.env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitCannotRun || strings.Contains(string(out), "ran") || !strings.Contains(string(out), "PID namespace") {
		t.Fatalf("want exit %d naming the PID namespace, got %v: %s", ExitCannotRun, err, out)
	}
}

// TestCommandIsNotInit checks that the command runs as a child of the launcher, which is
// pid 1 of the namespace, and that its exit status and a signal that ends it come back.
func TestCommandIsNotInit(t *testing.T) {
	requireLandlock(t)
	f := newFixture(t, false)
	out, err := f.sh(t, `echo "$$ $PPID"`)
	pid, ppid, _ := strings.Cut(strings.TrimSpace(out), " ")
	if err != nil || pid == "1" || ppid != "1" {
		t.Fatalf("pid and parent of the command: %q, %v; want a pid other than 1 and parent 1", out, err)
	}
	// Its /proc is the namespace's: its own pid names itself, and outside processes are not
	// listed.
	if out, err := f.sh(t, `echo "$(cat /proc/$$/comm) $(ls -d /proc/[0-9]* | wc -l)"`); err != nil {
		t.Fatalf("/proc in the sandbox: %v: %s", err, out)
	} else if comm, n, _ := strings.Cut(strings.TrimSpace(out), " "); comm != "sh" || n > "9" || len(n) > 1 {
		t.Fatalf("/proc in the sandbox: %q; want the command's own comm (sh) and a few processes", out)
	}
	for script, want := range map[string]int{`exit 7`: 7, `kill -TERM $$`: 128 + 15, `kill -KILL $$`: 128 + 9} {
		_, err := f.sh(t, script)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != want {
			t.Errorf("%s: %v, want status %d", script, err, want)
		}
	}
}
