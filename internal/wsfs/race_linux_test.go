package wsfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSymlinkRace keeps swapping a directory on the path with a symlink to an outside
// directory (atomically, renameat2 RENAME_EXCHANGE, so the path always names one or the
// other) while 10,000 reads and writes run through it: every operation either works inside
// the workspace or is refused, and nothing outside is ever read or touched.
func TestSymlinkRace(t *testing.T) {
	modes(t, func(t *testing.T, walk bool) {
		r, ws, out := layout(t, walk)
		d, link := filepath.Join(ws, "d"), filepath.Join(ws, "d.link")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		symlink(t, out, link)
		write(t, filepath.Join(d, "f.txt"), "inside\n")
		write(t, filepath.Join(out, "f.txt"), "outside\n")
		before := snapshot(t, out)

		var stop atomic.Bool
		var swaps atomic.Int64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("renameat2 RENAME_EXCHANGE: %v", err)
					return
				}
				swaps.Add(1)
			}
		}()

		const ops = 10000
		var okRead, okWrite, refused int
		for i := range ops {
			var err error
			if i%2 == 0 {
				var b []byte
				b, _, err = r.ReadFile("d/f.txt", 0)
				if err == nil {
					if string(b) == "outside\n" {
						stop.Store(true)
						wg.Wait()
						t.Fatalf("op %d read the outside file through the swapped link", i)
					}
					okRead++
				}
			} else {
				err = r.WriteFile("d/f.txt", fmt.Appendf(nil, "write %d\n", i), WriteOptions{})
				if err == nil {
					okWrite++
				}
			}
			if err != nil {
				var pe *PathError
				if !errors.As(err, &pe) {
					t.Logf("op %d: %v", i, err)
				}
				refused++
			}
		}
		stop.Store(true)
		wg.Wait()
		if after := snapshot(t, out); !equalSnap(before, after) {
			t.Fatalf("outside directory changed:\nbefore %v\nafter  %v", before, after)
		}
		t.Logf("%d swaps; %d reads and %d writes succeeded inside, %d refused", swaps.Load(), okRead, okWrite, refused)
		if refused == 0 || okRead == 0 || okWrite == 0 || swaps.Load() == 0 {
			t.Errorf("the race did not happen (swaps %d, ok %d, refused %d)", swaps.Load(), okRead+okWrite, refused)
		}
	})
}
