package execrun_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/execrun"
)

// TestHelperDeathKillsCommand: when the process that started a command (the helper) is
// killed with SIGKILL, so that nothing of it runs to clean up, the kernel kills the
// command's first process (PR_SET_PDEATHSIG); it is not left running as an orphan.
func TestHelperDeathKillsCommand(t *testing.T) {
	if os.Getenv("S_CODE_EXECRUN_PARENT") == "1" {
		// The stand-in helper: start a long command, print its pid, wait to be killed.
		p, err := execrun.Start(context.Background(), exec.Command("/bin/sleep", "300"), execrun.Options{Output: func(execrun.Stream, []byte) {}})
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(strconv.Itoa(p.Pid()) + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestHelperDeathKillsCommand$")
	parent.Env = append(os.Environ(), "S_CODE_EXECRUN_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		parent.Process.Kill()
		t.Fatalf("read the command's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		parent.Process.Kill()
		t.Fatalf("stand-in helper said %q", line)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the command %d is not running: %v", pid, err)
	}
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		// Gone, or a zombie waiting for init to reap it, counts as ended.
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(data), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the command %d outlived its killed helper: %s", pid, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
