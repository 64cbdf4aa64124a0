package filetools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/testenv"
	"github.com/s-code-dev/s-code/internal/turns"
)

// TestWriteFailsOnFullDisk runs batches on a real 1 MiB tmpfs until the disk is full
// (ENOSPC). Files are staged (written to temporary files) before any is renamed into place,
// so a disk that fills while staging fails the batch with nothing applied; a new file in a
// new directory is written in its turn, so a disk that fills then fails mid-batch. Either
// way the applied list is exact, the rest is untouched, no temporary file or directory is
// left, and undo restores the applied files.
func TestWriteFailsOnFullDisk(t *testing.T) {
	testenv.RequireRoot(t)
	big := strings.Repeat("x", 600<<10)
	tests := []struct {
		name    string
		files   func(ra, rz string) []m
		applied string
		failed  []string // any of
		after   map[string]string
	}{
		{"full while staging", func(ra, rz string) []m {
			return []m{
				{"path": "a.txt", "expected_revision": ra, "content": "A\n"},
				{"path": "b.bin", "expected_revision": nil, "content": big},
				{"path": "c.bin", "expected_revision": nil, "content": big},
				{"path": "z.txt", "expected_revision": rz, "content": "Z\n"},
			}
		}, "", []string{"b.bin", "c.bin"}, map[string]string{"a.txt": "a\n", "b.bin": "<absent>", "c.bin": "<absent>", "z.txt": "z\n"}},
		{"full mid-batch", func(ra, rz string) []m {
			return []m{
				{"path": "a.txt", "expected_revision": ra, "content": "A\n"},
				{"path": "sub/b.bin", "expected_revision": nil, "content": big},
				{"path": "c.bin", "expected_revision": nil, "content": big},
				{"path": "z.txt", "expected_revision": rz, "content": "Z\n"},
			}
		}, "a.txt", []string{"sub/b.bin"}, map[string]string{"a.txt": "A\n", "sub/b.bin": "<absent>", "c.bin": "<absent>", "z.txt": "z\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mnt := t.TempDir()
			if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
				testenv.Skip(t, "mount tmpfs size=1m: "+err.Error())
			}
			t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
			e := newEnvAt(t, filepath.Join(mnt, "ws"))
			ra, rz := e.write("a.txt", "a\n"), e.write("z.txt", "z\n")
			_, err := e.apply(m{"files": tc.files(ra, rz)}, "t1")
			var be *BatchError
			if !errors.As(err, &be) || !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Apply = %v, want ENOSPC", err)
			}
			okFailed := false
			for _, f := range tc.failed {
				okFailed = okFailed || be.Failed == f
			}
			if got := appliedPaths(be.Applied); got != tc.applied || !okFailed || be.Code != "write_failed" {
				t.Fatalf("applied %q, failed %s, code %s; want applied %q, failed one of %v", got, be.Failed, be.Code, tc.applied, tc.failed)
			}
			for p, s := range tc.after {
				if got := e.read(p); got != s {
					t.Errorf("%s: %d bytes, want %d", p, len(got), len(s))
				}
			}
			if ents, _ := os.ReadDir(e.ws); len(ents) != 2 {
				t.Errorf("workspace holds %v: a temporary file or directory was left", ents)
			}
			res, err := Undo(e.root, e.store, "t1")
			if tc.applied == "" {
				if !errors.Is(err, turns.ErrNoTurn) {
					t.Errorf("nothing was applied, yet a turn record exists: %+v, %v", res, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Undo: %v", err)
			}
			if strings.Join(res.Restored, ",") != tc.applied {
				t.Errorf("undo = %+v", res)
			}
			if e.read("a.txt") != "a\n" {
				t.Errorf("after undo: a.txt %q", e.read("a.txt"))
			}
		})
	}
}
