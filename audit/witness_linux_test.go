package audit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// startJournald starts a real systemd-journald in a private mount namespace whose /run is
// a fresh tmpfs, with its socket directory and its runtime journal bound to directories of
// the test: the machine's own /run and journal are untouched. It returns the native socket
// and the directory holding the journal files; the daemon is killed at cleanup.
func startJournald(t *testing.T) (socket, journalDir string) {
	t.Helper()
	testenv.RequireRoot(t)
	unshare := testenv.RequireTool(t, "unshare")
	testenv.RequireTool(t, "journalctl")
	const journald = "/lib/systemd/systemd-journald"
	if _, err := os.Stat(journald); err != nil {
		testenv.Skip(t, "systemd-journald is not installed: "+err.Error())
	}
	d := t.TempDir()
	run, logs := filepath.Join(d, "run"), filepath.Join(d, "log")
	os.Mkdir(run, 0o755)
	os.Mkdir(logs, 0o755)
	script := "mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/journal /run/log/journal && " +
		"mount --bind " + run + " /run/systemd/journal && mount --bind " + logs + " /run/log/journal && exec " + journald
	cmd := exec.Command(unshare, "-m", "--propagation", "private", "sh", "-c", script)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	socket = filepath.Join(run, "socket")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(socket); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("journald did not create its socket: %s", out.String())
		}
	}
	id, err := os.ReadFile("/etc/machine-id")
	if err != nil {
		testenv.Skip(t, "no /etc/machine-id: "+err.Error())
	}
	return socket, filepath.Join(logs, strings.TrimSpace(string(id)))
}

// TestWitnessJournal: with a real journald receiving the mirror, verify --witness journal
// matches every seal of a whole log, and catches a rollback of the whole directory (records
// and key state restored from an earlier copy), which the key alone cannot see.
func TestWitnessJournal(t *testing.T) {
	socket, jdir := startJournald(t)
	dir := filepath.Join(t.TempDir(), "audit")
	backup := filepath.Join(t.TempDir(), "backup")
	write := func(from, n int) {
		l, err := Open(dir, Options{JournalSocket: socket, SealEvery: 3, SealAfter: -1})
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < from+n; i++ {
			if err := l.Append(context.Background(), testRecord(i), true); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if l.JournalErrors() != 0 {
			t.Fatalf("%d records not mirrored", l.JournalErrors())
		}
	}
	write(0, 5)
	if out, err := exec.Command("cp", "-a", dir, backup).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	write(5, 7)
	key := readKey(t, dir)
	w := JournalWitness{Directory: jdir}
	var rep Report
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		rep, err = VerifyWith(dir, VerifyOptions{Key: key, Witness: w})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Whole && rep.Witness != nil && rep.Witness.Matched == rep.Seals {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the witness does not match the whole log: %+v %+v %v", rep.Witness, rep.Problem, rep.Notes)
		}
	}
	if rep.Seals < 3 {
		t.Fatalf("only %d seals", rep.Seals)
	}

	// Roll the whole directory back to the earlier copy.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", backup, dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if r, _ := VerifyWith(dir, VerifyOptions{Key: key}); !r.Whole {
		t.Fatalf("the rolled-back copy should verify with the key alone (that is the gap): %+v", r.Problem)
	}
	r, err := VerifyWith(dir, VerifyOptions{Key: key, Witness: w})
	if err != nil {
		t.Fatal(err)
	}
	if r.Whole || r.Problem.Kind != ProblemTruncated || !strings.Contains(r.Problem.Detail, "rolled back") {
		t.Fatalf("rollback not caught by the witness: %+v", r)
	}
	t.Logf("caught: %s", r.Problem)

	// Entries of another log directory do not count for this one.
	other := filepath.Join(t.TempDir(), "other")
	seals, err := w.Seals(context.Background(), other)
	if err == nil && len(seals) != 0 {
		t.Fatalf("seals of another directory: %v", seals)
	}
}
