package execrun_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/testenv"
)

type output struct {
	mu             sync.Mutex
	stdout, stderr bytes.Buffer
}

func (o *output) write(s execrun.Stream, b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s == execrun.Stdout {
		o.stdout.Write(b)
	} else {
		o.stderr.Write(b)
	}
}

func bashPath(t *testing.T) string {
	t.Helper()
	p, err := execrun.ShellPath("bash")
	if err != nil {
		testenv.Skip(t, err.Error())
	}
	return p
}

// start runs command with bash through the plain runner.
func start(t *testing.T, ctx context.Context, command string, opts execrun.Options) (*execrun.Process, *output) {
	t.Helper()
	bash := bashPath(t)
	env, err := execrun.BuildEnv(execrun.Base{Path: execrun.SafePath, Home: t.TempDir(), User: "tester", Shell: bash}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := execrun.Plain{}.Command(ctx, execrun.Spec{Path: bash, Args: []string{"bash", "-c", command}, Env: env, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out := &output{}
	opts.Output = out.write
	p, err := execrun.Start(ctx, cmd, opts)
	if err != nil {
		t.Fatal(err)
	}
	p.Stdin().Close()
	return p, out
}

// direct runs bash -c command directly and returns its shell-style status.
func direct(t *testing.T, command string) int {
	t.Helper()
	err := exec.Command(bashPath(t), "-c", command).Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
	t.Fatal(err)
	return -1
}

func TestExitStatusParity(t *testing.T) {
	cases := []struct {
		name, command string
		want          int
		signal        bool
	}{
		{"true", "true", 0, false},
		{"false", "false", 1, false},
		{"exit2", "exit 2", 2, false},
		{"not-executable", "f=$(mktemp); chmod -x $f; $f", 126, false},
		{"not-found", "no-such-command-s-code", 127, false},
		{"kill-term", "kill -TERM $$", 143, true},
		{"kill-kill", "kill -KILL $$", 137, true},
		{"exit255", "exit 255", 255, false},
		{"exit-143", "exit 143", 143, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := direct(t, tc.command); got != tc.want {
				t.Fatalf("bash -c directly = %d, want %d", got, tc.want)
			}
			p, _ := start(t, context.Background(), tc.command, execrun.Options{})
			r := p.Wait()
			if r.Status() != tc.want {
				t.Fatalf("through execrun = %d (%+v), want %d", r.Status(), r, tc.want)
			}
			if (r.Signal != 0) != tc.signal {
				t.Errorf("signal = %v for status %d", r.Signal, tc.want)
			}
		})
	}
}

func TestOutputAndStdin(t *testing.T) {
	bash := bashPath(t)
	cmd, _ := execrun.Plain{}.Command(context.Background(), execrun.Spec{Path: bash, Args: []string{"bash", "-c", "tr a-z A-Z; echo err >&2"}, Dir: t.TempDir()})
	out := &output{}
	p, err := execrun.Start(context.Background(), cmd, execrun.Options{Output: out.write})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("abcdefgh\n", 50000) // larger than a pipe buffer
	go func() {
		p.Stdin().Write([]byte(big))
		p.Stdin().Close()
	}()
	r := p.Wait()
	if r.Status() != 0 {
		t.Fatalf("status %d", r.Status())
	}
	if out.stdout.String() != strings.ToUpper(big) || out.stderr.String() != "err\n" {
		t.Fatalf("stdout %d bytes (want %d), stderr %q", out.stdout.Len(), len(big), out.stderr.String())
	}
	if r.StdoutBytes != int64(len(big)) || r.StderrBytes != 4 {
		t.Errorf("byte counts %d/%d", r.StdoutBytes, r.StderrBytes)
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	// The shell ignores TERM and a background child sleeps: both must die.
	p, out := start(t, context.Background(), "trap '' TERM; sleep 300 & echo started; wait", execrun.Options{Timeout: 300 * time.Millisecond, KillGrace: 200 * time.Millisecond})
	r := p.Wait()
	if !r.TimedOut || r.Signal != syscall.SIGKILL {
		t.Fatalf("result %+v, want timed out by SIGKILL", r)
	}
	if out.stdout.String() != "started\n" {
		t.Errorf("stdout %q", out.stdout.String())
	}
	if left := testenv.WaitGroupGone(t, p.Pid(), 2*time.Second); left != nil {
		t.Fatalf("processes of group %d still alive: %v", p.Pid(), left)
	}
}

func TestCancelKillsGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p, _ := start(t, ctx, "sleep 300 & sleep 300", execrun.Options{KillGrace: time.Second})
	time.Sleep(100 * time.Millisecond)
	if len(testenv.GroupMembers(t, p.Pid())) < 2 {
		t.Fatalf("group %d has members %v, want bash and two sleeps", p.Pid(), testenv.GroupMembers(t, p.Pid()))
	}
	cancel()
	r := p.Wait()
	if !r.Canceled || r.Signal != syscall.SIGTERM {
		t.Fatalf("result %+v, want canceled by SIGTERM", r)
	}
	if left := testenv.WaitGroupGone(t, p.Pid(), 2*time.Second); left != nil {
		t.Fatalf("processes of group %d still alive: %v", p.Pid(), left)
	}
}

// TestExitKillsBackground checks that a background process does not outlive its command.
func TestExitKillsBackground(t *testing.T) {
	p, _ := start(t, context.Background(), "sleep 300 >/dev/null 2>&1 & echo $!", execrun.Options{})
	r := p.Wait()
	if r.Status() != 0 {
		t.Fatalf("status %d", r.Status())
	}
	if left := testenv.WaitGroupGone(t, p.Pid(), 2*time.Second); left != nil {
		t.Fatalf("background process of group %d still alive: %v", p.Pid(), left)
	}
}

// TestEscapedProcessDoesNotHoldResult: a process that leaves the group with setsid and keeps
// stdout open must not delay the result past the drain time.
func TestEscapedProcessDoesNotHoldResult(t *testing.T) {
	testenv.RequireTool(t, "setsid")
	begin := time.Now()
	p, _ := start(t, context.Background(), "setsid sleep 3 & echo hi", execrun.Options{Drain: 200 * time.Millisecond})
	r := p.Wait()
	if r.Status() != 0 || time.Since(begin) > 2*time.Second {
		t.Fatalf("result %+v after %v", r, time.Since(begin))
	}
}

func TestSignalForwarding(t *testing.T) {
	p, out := start(t, context.Background(), "trap 'echo got-usr1; exit 7' USR1; echo ready; while :; do sleep 0.05; done", execrun.Options{})
	deadline := time.Now().Add(5 * time.Second)
	for {
		out.mu.Lock()
		ready := strings.Contains(out.stdout.String(), "ready")
		out.mu.Unlock()
		if ready || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	r := p.Wait()
	if r.Status() != 7 || !strings.Contains(out.stdout.String(), "got-usr1") {
		t.Fatalf("result %+v, stdout %q", r, out.stdout.String())
	}
	if err := p.Signal(syscall.SIGUSR1); err == nil {
		t.Error("Signal after the end succeeded")
	}
}

// TestNoInheritedDescriptors checks that the child sees only fds 0, 1 and 2, even while the
// parent holds other descriptors open.
func TestNoInheritedDescriptors(t *testing.T) {
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, out := start(t, context.Background(), "ls /proc/self/fd", execrun.Options{})
	if r := p.Wait(); r.Status() != 0 {
		t.Fatalf("status %d: %s", r.Status(), out.stderr.String())
	}
	// ls itself opens one directory descriptor (3).
	fds := strings.Fields(out.stdout.String())
	for _, fd := range fds {
		if n, _ := strconv.Atoi(fd); n > 3 {
			t.Fatalf("child has descriptors %v", fds)
		}
	}
}

func TestStartRefusesPresetStdio(t *testing.T) {
	cmd := exec.Command(bashPath(t), "-c", "true")
	cmd.Stdout = os.Stdout
	if _, err := execrun.Start(context.Background(), cmd, execrun.Options{}); err == nil {
		t.Fatal("Start accepted a command with Stdout set")
	}
}

// TestSlowReaderKeepsOutput: when the drain time runs out while output is still in the pipe
// (here: the consumer of the first chunk is slow), that output is still delivered.
func TestSlowReaderKeepsOutput(t *testing.T) {
	bash := bashPath(t)
	cmd, _ := execrun.Plain{}.Command(context.Background(), execrun.Spec{Path: bash, Args: []string{"bash", "-c", "echo first; sleep 0.05; echo second"}, Dir: t.TempDir()})
	var mu sync.Mutex
	var got []string
	slow := func(s execrun.Stream, b []byte) {
		mu.Lock()
		first := len(got) == 0
		got = append(got, string(b))
		mu.Unlock()
		if first {
			time.Sleep(400 * time.Millisecond)
		}
	}
	p, err := execrun.Start(context.Background(), cmd, execrun.Options{Output: slow, Drain: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.Stdin().Close()
	r := p.Wait()
	if r.Status() != 0 || strings.Join(got, "") != "first\nsecond\n" {
		t.Fatalf("status %d, output %q", r.Status(), got)
	}
}

// TestNothingOutlivesPlainCommand checks that, where the helper can give each command a
// cgroup (as root on cgroup v2), processes that left the command's process group (setsid, a
// double fork, nohup, disown) end with it: when it ends, times out or is cancelled; /proc
// is searched for survivors.
func TestNothingOutlivesPlainCommand(t *testing.T) {
	testenv.RequireRoot(t)
	if !execrun.CommandCgroups() {
		// A machine feature, not a privilege: root in a container whose cgroup file system
		// is read-only has none.
		t.Skip("this helper cannot make cgroups here (no writable cgroup v2 with cgroup.kill)")
	}
	testenv.RequireTool(t, "setsid")
	for _, mode := range []string{"end", "timeout", "cancel"} {
		t.Run(mode, func(t *testing.T) {
			mark := "s-code-mark-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			tail := "3600"
			if mode == "end" {
				tail = "0.5"
			}
			// The marker is the name sleep runs under (exec -a), so /proc/PID/cmdline finds it.
			script := `setsid bash -c 'exec -a ` + mark + ` sleep 3600' &
( bash -c 'exec -a ` + mark + ` sleep 3600' & ) &
nohup bash -c 'exec -a ` + mark + ` sleep 3600' >/dev/null 2>&1 &
bash -c 'exec -a ` + mark + ` sleep 3600' & disown
sleep 0.3; echo ready; sleep ` + tail
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := execrun.Options{KillGrace: 300 * time.Millisecond}
			if mode == "timeout" {
				opts.Timeout = time.Second
			}
			p, out := start(t, ctx, script, opts)
			t.Cleanup(func() {
				for _, pid := range withCmdline(mark) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			deadline := time.Now().Add(5 * time.Second)
			for len(withCmdline(mark)) < 4 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := len(withCmdline(mark)); n < 4 {
				t.Fatalf("only %d escapers started", n)
			}
			if mode == "cancel" {
				cancel()
			}
			p.Wait()
			if left := withCmdline(mark); len(left) > 0 {
				t.Fatalf("%d processes outlived the command: %v (output %q)", len(left), left, out.stdout.String())
			}
		})
	}
}

// withCmdline returns the live processes whose argv[0] is name.
func withCmdline(name string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		arg0, _, _ := bytes.Cut(b, []byte{0})
		if string(arg0) == name {
			pids = append(pids, pid)
		}
	}
	return pids
}
