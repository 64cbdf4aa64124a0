package audit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSealByTime: a few records, far fewer than SealEvery, are sealed within SealAfter of
// the first of them, without another append or Close; verify then reports nothing unsealed.
func TestSealByTime(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l, err := Open(dir, Options{DisableJournal: true, SealAfter: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < 3; i++ {
		if err := l.Append(context.Background(), testRecord(i), true); err != nil {
			t.Fatal(err)
		}
	}
	key := readKey(t, dir)
	rep := mustVerify(t, dir, key)
	if rep.UnsealedTail != 3 || rep.UnsealedSince.IsZero() {
		t.Fatalf("before the interval: unsealed %d since %v, want 3 and a time", rep.UnsealedTail, rep.UnsealedSince)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		rep = mustVerify(t, dir, key)
		if rep.Seals == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no seal 5 s after SealAfter of 100 ms: %+v", rep)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !rep.Whole || rep.UnsealedTail != 0 || !rep.UnsealedSince.IsZero() {
		t.Fatalf("after the time seal: %+v", rep)
	}
	// The timer is re-armed by the next record, not left running on an empty tail.
	if err := l.Append(context.Background(), testRecord(3), true); err != nil {
		t.Fatal(err)
	}
	for rep = mustVerify(t, dir, key); rep.Seals != 2; rep = mustVerify(t, dir, key) {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("no second time seal: %+v", rep)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSealEpochCount: cutting the tail back to an earlier seal (the seal and everything after
// it removed, the file ending at a whole record) is caught with --key by the key state's
// epoch, and the report names the epoch.
func TestSealEpochCount(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	key := makeLog(t, dir, 25, Options{SealEvery: 5, SealAfter: -1})
	rep := mustVerify(t, dir, key)
	if !rep.Whole || rep.SealEpoch == nil || uint64(rep.Seals) != *rep.SealEpoch {
		t.Fatalf("whole log: %+v", rep)
	}
	f := logFiles(t, dir)[0]
	lines := readLines(t, f)
	// Cut right after the second-to-last seal: the last seal and the records before it go.
	cut := -1
	n := 0
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(string(lines[i]), `"kind":"seal"`) {
			n++
			if n == 2 {
				cut = i + 1
				break
			}
		}
	}
	if cut < 0 {
		t.Fatal("fewer than two seals")
	}
	writeLines(t, f, lines[:cut])
	if rep := mustVerify(t, dir, nil); !rep.Whole {
		t.Fatalf("without a key the cut is invisible (the chain is whole), got %+v", rep.Problem)
	}
	rep = mustVerify(t, dir, key)
	if rep.Whole || rep.Problem.Kind != ProblemTruncated {
		t.Fatalf("cut of a seal not caught: %+v", rep)
	}
	t.Logf("caught: %s", rep.Problem)
	os.Remove(filepath.Join(dir, DefaultVerifyKeyFile))
}
