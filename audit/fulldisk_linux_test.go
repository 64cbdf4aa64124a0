package audit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// TestFullDisk fills a 1 MiB tmpfs: appends then fail with ENOSPC (and say so), nothing
// half-written is left, the records written before still verify with their seals, and appends
// work again once there is room.
func TestFullDisk(t *testing.T) {
	testenv.RequireRoot(t)
	for _, tc := range []struct {
		name     string
		maxBytes int64
	}{
		{"appends", 256 << 10},
		{"rotation on every other record", 2048}, // the disk fills in seals and rotate records too
	} {
		t.Run(tc.name, func(t *testing.T) { fullDisk(t, tc.maxBytes) })
	}
}

func fullDisk(t *testing.T, maxBytes int64) {
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m,mode=0700"); err != nil {
		testenv.Skip(t, "mount tmpfs: "+err.Error())
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 256<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mnt, "audit")
	l, err := Open(dir, Options{DisableJournal: true, SealEvery: 50, MaxFileBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 900)
	var written uint64
	var full error
	for i := 0; i < 10000; i++ {
		r := &Record{Kind: KindStart, Command: "echo " + big}
		if err := l.Append(context.Background(), r, true); err != nil {
			full = err
			break
		}
		written = r.Seq
	}
	if full == nil {
		t.Fatal("1 MiB tmpfs never filled")
	}
	if !errors.Is(full, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v, want ENOSPC", full)
	}
	t.Logf("full after seq %d: %v", written, full)
	for i := 0; i < 3; i++ {
		if err := l.Append(context.Background(), &Record{Kind: KindStart, Command: "echo " + big}, true); err == nil {
			t.Fatal("append succeeded on a full disk")
		}
	}
	key := readKey(t, dir)
	rep := mustVerify(t, dir, key)
	if !rep.Whole || rep.LastSeq < written {
		t.Fatalf("after ENOSPC: %+v %v", rep, rep.Problem)
	}
	// Room again: the same Log goes on.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(context.Background(), &Record{Kind: KindExit, Command: "after the disk was full"}, true); err != nil {
		t.Fatalf("append after freeing space: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, dir, key); !rep.Whole {
		t.Fatalf("final: %v", rep.Problem)
	}
}
