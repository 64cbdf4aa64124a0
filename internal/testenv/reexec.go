package testenv

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// PublicDir returns a new empty directory that every user may enter (mode 0755, its parent
// 0711), removed when t ends. Tests that re-execute a program as another uid put the
// program and the sockets it dials there.
func PublicDir(t testing.TB) string {
	t.Helper()
	parent, err := os.MkdirTemp("", "s-code-public-")
	if err != nil {
		t.Fatalf("testenv: mkdirtemp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	dir := filepath.Join(parent, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("testenv: mkdir: %v", err)
	}
	if err := os.Chmod(parent, 0o711); err != nil {
		t.Fatalf("testenv: chmod: %v", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("testenv: chmod: %v", err)
	}
	return dir
}

// PublicExecutable copies the running test binary into a PublicDir and returns its path,
// so that a child started as another uid (SysProcAttr.Credential) can execute it: the go
// tool builds test binaries in directories only their owner may enter.
func PublicExecutable(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("testenv: executable: %v", err)
	}
	dst := filepath.Join(PublicDir(t), filepath.Base(self))
	CopyExecutable(t, self, dst)
	return dst
}

// CopyExecutable copies the file from to a new file to with mode 0755, failing t on any
// error (an existing file at to is replaced).
func CopyExecutable(t testing.TB, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatalf("testenv: open %s: %v", from, err)
	}
	defer src.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatalf("testenv: create %s: %v", to, err)
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		t.Fatalf("testenv: copy %s to %s: %v", from, to, err)
	}
	if err := out.Close(); err != nil {
		t.Fatalf("testenv: close %s: %v", to, err)
	}
}
