package audit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// lineObserver keeps what the log tells it.
type lineObserver struct {
	mu    sync.Mutex
	seqs  []uint64
	seals []uint64
	lines []string
}

func (o *lineObserver) Observe(seq, sealIndex uint64, line []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seqs = append(o.seqs, seq)
	o.seals = append(o.seals, sealIndex)
	o.lines = append(o.lines, string(line))
}

// TestObserverSeesEveryRecordInOrder: concurrent appends, seals by count, rotations and the
// closing seal; the observer is told of each record once, in chain order, with exactly the
// line the file holds and the index of the seal that covers it.
func TestObserverSeesEveryRecordInOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	o := &lineObserver{}
	l, err := Open(dir, Options{DisableJournal: true, SealEvery: 7, MaxFileBytes: 4096, Observer: o})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if err := l.Append(context.Background(), testRecord(g*100+i), i%3 == 0); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "audit-*.jsonl"))
	sort.Strings(files)
	if len(files) < 2 {
		t.Fatalf("want rotation, got %d files", len(files))
	}
	var onDisk []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if line != "" {
				onDisk = append(onDisk, line)
			}
		}
	}
	if len(o.lines) != len(onDisk) {
		t.Fatalf("observed %d records, the log has %d", len(o.lines), len(onDisk))
	}
	var next uint64 // the seal that covers the next record
	for i, line := range onDisk {
		if o.lines[i] != line {
			t.Fatalf("record %d: observed %q, file has %q", i, o.lines[i], line)
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if o.seqs[i] != r.Seq || r.Seq != uint64(i+1) {
			t.Fatalf("record %d: observed seq %d, file seq %d", i, o.seqs[i], r.Seq)
		}
		if o.seals[i] != next {
			t.Fatalf("seq %d (%s): observed seal index %d, want %d", r.Seq, r.Kind, o.seals[i], next)
		}
		if r.Kind == KindSeal {
			if *r.SealIndex != next {
				t.Fatalf("seal seq %d has index %d, want %d", r.Seq, *r.SealIndex, next)
			}
			next++
		}
	}
	if next < 3 {
		t.Fatalf("only %d seals; the test wants several", next)
	}
}
