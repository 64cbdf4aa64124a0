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
)

// TestWriteFailsOnFullDisk runs a batch on a real 1 MiB tmpfs: the third file does not fit
// (ENOSPC). The applied list is exact, the rest is untouched, and undo restores the applied.
func TestWriteFailsOnFullDisk(t *testing.T) {
	testenv.RequireRoot(t)
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		testenv.Skip(t, "mount tmpfs size=1m: "+err.Error())
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	e := newEnvAt(t, filepath.Join(mnt, "ws"))
	ra := e.write("a.txt", "a\n")
	rz := e.write("z.txt", "z\n")
	big := strings.Repeat("x", 600<<10)
	_, err := e.apply(m{"files": []m{
		{"path": "a.txt", "expected_revision": ra, "content": "A\n"},
		{"path": "b.bin", "expected_revision": nil, "content": big},
		{"path": "c.bin", "expected_revision": nil, "content": big},
		{"path": "z.txt", "expected_revision": rz, "content": "Z\n"},
	}}, "t1")
	var be *BatchError
	if !errors.As(err, &be) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Apply = %v, want ENOSPC", err)
	}
	if got := appliedPaths(be.Applied); got != "a.txt,b.bin" || be.Failed != "c.bin" || be.Code != "write_failed" {
		t.Fatalf("applied %s, failed %s, code %s", got, be.Failed, be.Code)
	}
	for p, s := range map[string]string{"a.txt": "A\n", "b.bin": big, "c.bin": "<absent>", "z.txt": "z\n"} {
		if got := e.read(p); got != s {
			t.Errorf("%s: %d bytes, want %d", p, len(got), len(s))
		}
	}
	if ents, _ := os.ReadDir(e.ws); len(ents) != 3 {
		t.Errorf("workspace holds %v: the failed write left a temporary file", ents)
	}
	res, err := Undo(e.root, e.store, "t1")
	if err != nil {
		t.Fatalf("Undo: %v", err)
	}
	if strings.Join(res.Restored, ",") != "a.txt" || strings.Join(res.Deleted, ",") != "b.bin" {
		t.Errorf("undo = %+v", res)
	}
	if e.read("a.txt") != "a\n" || e.read("b.bin") != "<absent>" {
		t.Errorf("after undo: a.txt %q, b.bin present %v", e.read("a.txt"), e.read("b.bin") != "<absent>")
	}
}
