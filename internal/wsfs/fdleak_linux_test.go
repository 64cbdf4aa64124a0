package wsfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNoDescriptorLeak runs refused and accepted operations many times and checks that the
// process holds no more descriptors afterwards.
func TestNoDescriptorLeak(t *testing.T) {
	modes(t, func(t *testing.T, walk bool) {
		r, ws, out := layout(t, walk)
		write(t, filepath.Join(ws, "big"), "0123456789")
		symlink(t, out, filepath.Join(ws, "linked"))
		count := func() int {
			ents, err := os.ReadDir("/proc/self/fd")
			if err != nil {
				t.Skipf("/proc/self/fd: %v", err)
			}
			return len(ents)
		}
		before := count()
		for range 200 {
			r.ReadFile("dir", 0)               // not regular
			r.ReadFile("big", 5)               // too large
			r.ReadFile("linked/secret.txt", 0) // symlink
			r.ReadFile("dir/missing", 0)       // missing
			r.ReadFile("dir/in.txt/x", 0)      // not a directory
			r.ReadFile("dir/in.txt", 0)        // fine
			r.WriteFile("linked/x", nil, WriteOptions{MkdirParents: true})
			r.WriteFile("dir/w.txt", []byte("w"), WriteOptions{})
			r.Remove("dir/w.txt", WriteOptions{})
			r.FoldsCase("dir/in.txt")
			st, err := r.Stage("dir/s.txt", []byte("s"), WriteOptions{})
			if err == nil {
				st.Abort()
			}
			st, err = r.StageUnsynced("new/dir/s.txt", []byte("s"), WriteOptions{MkdirParents: true})
			if err == nil {
				st.Abort()
			}
		}
		if after := count(); after > before {
			t.Errorf("descriptors: %d before, %d after", before, after)
		}
		if _, err := os.Stat(filepath.Join(ws, "new")); !os.IsNotExist(err) {
			t.Errorf("an aborted stage left its directories: %v", err)
		}
	})
}
