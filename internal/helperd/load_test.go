package helperd_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/s-code-dev/s-code/audit"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// TestConcurrentCommands runs 200 commands at once through one helper: every one is
// audited (request, start, exit) and gets exactly its own output.
func TestConcurrentCommands(t *testing.T) {
	e := newEnv(t, nil)
	const n = 200
	var wg sync.WaitGroup
	results := make([]*result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := fmt.Sprintf("for j in $(seq 1 100); do echo out-%d-$j; echo err-%d-$j >&2; done", i, i)
			results[i] = e.exec(ctx(t), &helperv1.ExecStart{Command: cmd, Approval: approve()}, nil)
		}()
	}
	wg.Wait()
	ids := map[string]bool{}
	for i, r := range results {
		if r.err != nil || r.denied != nil || r.status() != 0 {
			t.Fatalf("command %d: err %v denied %v status %d", i, r.err, r.denied, r.status())
		}
		var wantOut, wantErr strings.Builder
		for j := 1; j <= 100; j++ {
			fmt.Fprintf(&wantOut, "out-%d-%d\n", i, j)
			fmt.Fprintf(&wantErr, "err-%d-%d\n", i, j)
		}
		if r.stdout.String() != wantOut.String() || r.stderr.String() != wantErr.String() {
			t.Fatalf("command %d: output lost or mixed:\n%s", i, r.stdout.String())
		}
		ids[r.requestID] = true
	}
	if len(ids) != n {
		t.Fatalf("%d distinct request ids, want %d", len(ids), n)
	}
	counts := map[audit.Kind]int{}
	e.aud.mu.Lock()
	for _, rec := range e.aud.records {
		if ids[rec.RequestID] {
			counts[rec.Kind]++
		}
	}
	e.aud.mu.Unlock()
	if counts[audit.KindRequest] != n || counts[audit.KindStart] != n || counts[audit.KindExit] != n {
		t.Fatalf("audit counts %v, want %d of each", counts, n)
	}
}
