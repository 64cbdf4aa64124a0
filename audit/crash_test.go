package audit

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// crashChildEnv names the log directory TestCrashChild appends to; set only in the child
// processes TestCrashRecovery starts.
const crashChildEnv = "S_CODE_AUDIT_CRASH_CHILD"

// TestCrashChild is not a test: it is the child process of TestCrashRecovery. It appends
// durable records in a loop and prints "ack SEQ HASH" for each append that returned.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("child process of TestCrashRecovery")
	}
	l, err := Open(dir, Options{DisableJournal: true, SealEvery: 7, MaxFileBytes: 16 << 10})
	if err != nil {
		fmt.Printf("error %v\n", err)
		os.Exit(3)
	}
	for i := 0; ; i++ {
		r := &Record{Kind: KindStart, Command: fmt.Sprintf("crash test %d", i)}
		if err := l.Append(context.Background(), r, true); err != nil {
			fmt.Printf("error %v\n", err)
			os.Exit(4)
		}
		fmt.Printf("ack %d %s\n", r.Seq, r.Hash)
	}
}

// TestCrashRecovery kills a process that appends durably with SIGKILL at random moments, 200
// times, and checks after each kill that the log verifies up to its last whole record (a torn
// final record is the only damage allowed, and the next Open repairs it) and that every
// append that had returned is in the log.
func TestCrashRecovery(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 20
	}
	dir := filepath.Join(t.TempDir(), "audit")
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	acked := map[uint64]string{}
	var torn, kills int
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		first := make(chan struct{})
		var mu sync.Mutex
		var lines []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(out)
			once := sync.Once{}
			for sc.Scan() {
				mu.Lock()
				lines = append(lines, sc.Text())
				mu.Unlock()
				once.Do(func() { close(first) })
			}
		}()
		if round%5 == 0 {
			// Any moment, Open and its repair included.
			time.Sleep(time.Duration(rng.IntN(15000)) * time.Microsecond)
		} else {
			select {
			case <-first:
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: the child acknowledged nothing", round)
			}
			time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		cmd.Wait()
		kills++
		mu.Lock()
		for _, ln := range lines {
			f := strings.Fields(ln)
			if len(f) >= 1 && f[0] == "error" {
				t.Fatalf("round %d: child: %s", round, ln)
			}
			if len(f) != 3 || f[0] != "ack" {
				continue
			}
			seq, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatalf("round %d: bad ack %q", round, ln)
			}
			acked[seq] = f[2]
		}
		mu.Unlock()

		if _, err := os.Stat(dir); os.IsNotExist(err) && len(acked) == 0 {
			continue // killed before the first Open created the directory
		}
		rep := mustVerify(t, dir, nil)
		if !rep.Whole {
			if rep.Problem.Kind != ProblemTruncated || !strings.Contains(rep.Problem.Detail, "final record is cut off") {
				t.Fatalf("round %d: log damaged beyond a torn final record: %s", round, rep.Problem)
			}
			torn++
		} else if _, err := os.Stat(filepath.Join(dir, DefaultVerifyKeyFile)); err == nil {
			if krep := mustVerify(t, dir, readKey(t, dir)); !krep.Whole {
				t.Fatalf("round %d: seals: %s", round, krep.Problem)
			}
		}
		got := map[uint64]string{}
		if err := Read(dir, Filter{}, func(r *Record) error { got[r.Seq] = r.Hash; return nil }); err != nil {
			t.Fatalf("round %d: read: %v", round, err)
		}
		for seq, h := range acked {
			if got[seq] != h {
				t.Fatalf("round %d: acknowledged record seq %d (hash %s) is not in the log (have %q; last whole %d)", round, seq, h, got[seq], rep.LastSeq)
			}
		}
	}
	// A last Open repairs what the last kill left; the log is then whole with its seals.
	l, err := Open(dir, Options{DisableJournal: true, SealEvery: 7, MaxFileBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, dir, readKey(t, dir))
	if !rep.Whole {
		t.Fatalf("final: %s", rep.Problem)
	}
	t.Logf("%d kills, %d left a torn final record, %d appends acknowledged, %d records (seq %d..%d) in %d files, %d seals", kills, torn, len(acked), rep.Records, rep.FirstSeq, rep.LastSeq, rep.Files, rep.Seals)
}
