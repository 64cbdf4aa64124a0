//go:build linux || darwin

package listener

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// noActivation makes sure the test process itself looks unactivated.
func noActivation(t *testing.T) {
	t.Helper()
	for _, k := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
		t.Setenv(k, "")
	}
}

func listenOK(t *testing.T, cfg Config) net.Listener {
	t.Helper()
	l, src, err := Listen(cfg)
	if err != nil {
		t.Fatalf("Listen(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { l.Close() })
	if src != SourcePath {
		t.Errorf("source = %q, want %q", src, SourcePath)
	}
	return l
}

func statT(t *testing.T, path string) (fs.FileInfo, *syscall.Stat_t) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi, fi.Sys().(*syscall.Stat_t)
}

// staleSocket leaves a socket file at path that nothing listens on.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
}

func TestListenPathCreates(t *testing.T) {
	noActivation(t)
	for _, tc := range []struct {
		name     string
		mode     os.FileMode
		sub      string // socket directory below the temp dir, created by Listen when absent
		wantMode os.FileMode
		wantDir  os.FileMode
	}{
		{"user socket in a new directory", 0o600, "s-code", 0o600, 0o700},
		{"zero mode means 0600", 0, "s-code", 0o600, 0o700},
		{"group socket gets a reachable directory", 0o660, "s-code", 0o660, 0o755},
		{"existing directory kept as it is", 0o600, "", 0o600, 0},
		{"nested missing directories", 0o600, "a/b", 0o600, 0o700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, tc.sub)
			if tc.wantDir == 0 {
				fi, _ := statT(t, dir)
				tc.wantDir = fi.Mode().Perm()
			}
			path := filepath.Join(dir, "user.sock")
			l := listenOK(t, Config{Path: path, Mode: tc.mode, GID: -1})
			fi, st := statT(t, path)
			if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != tc.wantMode {
				t.Errorf("socket mode = %v, want socket %v", fi.Mode(), tc.wantMode)
			}
			if int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid() {
				t.Errorf("socket owner = %d:%d, want %d:%d", st.Uid, st.Gid, os.Geteuid(), os.Getegid())
			}
			dfi, _ := statT(t, dir)
			if dfi.Mode().Perm() != tc.wantDir {
				t.Errorf("directory mode = %v, want %v", dfi.Mode().Perm(), tc.wantDir)
			}
			if got := l.Addr().String(); got != path {
				t.Errorf("Addr = %q, want %q", got, path)
			}
			// It serves.
			go func() {
				if c, err := l.Accept(); err == nil {
					c.Write([]byte("hi"))
					c.Close()
				}
			}()
			c, err := net.Dial("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 2)
			if _, err := c.Read(buf); err != nil || string(buf) != "hi" {
				t.Errorf("read = %q, %v", buf, err)
			}
			c.Close()
			// Closing removes the socket file.
			l.Close()
			if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("socket file after Close: %v, want it gone", err)
			}
		})
	}
}

func TestListenPathExisting(t *testing.T) {
	noActivation(t)
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, path string) (check func(t *testing.T))
		wantErr error // nil: Listen succeeds
		wantMsg string
	}{
		{
			name:    "stale socket replaced",
			prepare: func(t *testing.T, path string) func(*testing.T) { staleSocket(t, path); return nil },
		},
		{
			name: "live socket kept",
			prepare: func(t *testing.T, path string) func(*testing.T) {
				live, err := net.Listen("unix", path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { live.Close() })
				go func() {
					for {
						c, err := live.Accept()
						if err != nil {
							return
						}
						c.Write([]byte("live"))
						c.Close()
					}
				}()
				return func(t *testing.T) {
					c, err := net.Dial("unix", path)
					if err != nil {
						t.Fatalf("the live helper no longer answers: %v", err)
					}
					defer c.Close()
					buf := make([]byte, 4)
					if _, err := c.Read(buf); err != nil || string(buf) != "live" {
						t.Errorf("live helper answered %q, %v", buf, err)
					}
				}
			},
			wantErr: ErrInUse, wantMsg: "another helper is listening on ",
		},
		{
			name: "regular file kept",
			prepare: func(t *testing.T, path string) func(*testing.T) {
				if err := os.WriteFile(path, []byte("data"), 0o600); err != nil {
					t.Fatal(err)
				}
				return func(t *testing.T) {
					if b, err := os.ReadFile(path); err != nil || string(b) != "data" {
						t.Errorf("file after Listen: %q, %v", b, err)
					}
				}
			},
			wantErr: ErrNotSocket, wantMsg: "regular file",
		},
		{
			name: "directory kept",
			prepare: func(t *testing.T, path string) func(*testing.T) {
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
				return func(t *testing.T) {
					if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
						t.Errorf("directory after Listen: %v", err)
					}
				}
			},
			wantErr: ErrNotSocket,
		},
		{
			name: "symlink to a stale socket kept",
			prepare: func(t *testing.T, path string) func(*testing.T) {
				target := path + ".target"
				staleSocket(t, target)
				if err := os.Symlink(target, path); err != nil {
					t.Fatal(err)
				}
				return func(t *testing.T) {
					if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != fs.ModeSymlink {
						t.Errorf("symlink after Listen: %v", err)
					}
				}
			},
			wantErr: ErrNotSocket, wantMsg: "symlink",
		},
		{
			name: "named pipe kept",
			prepare: func(t *testing.T, path string) func(*testing.T) {
				if err := unix.Mkfifo(path, 0o600); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			wantErr: ErrNotSocket, wantMsg: "named pipe",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "user.sock")
			check := tc.prepare(t, path)
			l, _, err := Listen(Config{Path: path, Mode: 0o600, GID: -1})
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Listen: %v", err)
				}
				defer l.Close()
				if fi, _ := statT(t, path); fi.Mode().Type() != fs.ModeSocket {
					t.Errorf("mode = %v, want a socket", fi.Mode())
				}
			} else {
				if l != nil {
					l.Close()
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Listen error = %v, want %v", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), path) {
					t.Errorf("error %q should name %q and the path", err, tc.wantMsg)
				}
			}
			if check != nil {
				check(t)
			}
		})
	}
}

func TestListenPathLength(t *testing.T) {
	noActivation(t)
	dir := t.TempDir()
	// A name that makes the absolute path exactly n bytes long.
	pathOf := func(n int) string {
		return filepath.Join(dir, strings.Repeat("s", n-len(dir)-1))
	}
	for _, tc := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"longest that fits", sunPathMax - 1, true},
		{"one byte too long (no room for the NUL)", sunPathMax, false},
		{"far too long", 300, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := pathOf(tc.n)
			if len(path) != tc.n {
				t.Fatalf("test bug: len = %d", len(path))
			}
			l, _, err := Listen(Config{Path: path, Mode: 0o600, GID: -1})
			if tc.ok {
				if err != nil {
					t.Fatalf("Listen: %v", err)
				}
				l.Close()
				return
			}
			if !errors.Is(err, ErrPathTooLong) {
				t.Fatalf("Listen error = %v, want ErrPathTooLong", err)
			}
			if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENAMETOOLONG) {
				t.Errorf("something was created at the path: %v", err)
			}
		})
	}
}

func TestListenUnsafeDir(t *testing.T) {
	noActivation(t)
	for _, tc := range []struct {
		name    string
		root    bool
		prepare func(t *testing.T, base string) (dir string)
		wantMsg string
	}{
		{"world-writable", false, func(t *testing.T, base string) string { return mkdirMode(t, base, "d", 0o777) }, "writable by group or others"},
		{"group-writable", false, func(t *testing.T, base string) string { return mkdirMode(t, base, "d", 0o770) }, "writable by group or others"},
		{"sticky world-writable like /tmp", false, func(t *testing.T, base string) string {
			return mkdirMode(t, base, "d", 0o777|fs.ModeSticky)
		}, "writable by group or others"},
		{"symlink to a safe directory", false, func(t *testing.T, base string) string {
			real := mkdirMode(t, base, "real", 0o700)
			link := filepath.Join(base, "link")
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, "not a directory"},
		{"a regular file", false, func(t *testing.T, base string) string {
			p := filepath.Join(base, "f")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, "not a directory"},
		{"owned by another user", true, func(t *testing.T, base string) string {
			d := mkdirMode(t, base, "d", 0o700)
			if err := os.Chown(d, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return d
		}, "owned by uid 65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root {
				testenv.RequireRoot(t)
			}
			dir := tc.prepare(t, t.TempDir())
			path := filepath.Join(dir, "user.sock")
			l, _, err := Listen(Config{Path: path, Mode: 0o600, GID: -1})
			if err == nil {
				l.Close()
				t.Fatal("Listen succeeded in an unsafe directory")
			}
			if !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("Listen error = %v, want ErrUnsafeDir mentioning %q", err, tc.wantMsg)
			}
		})
	}
}

func mkdirMode(t *testing.T, base, name string, mode os.FileMode) string {
	t.Helper()
	d := filepath.Join(base, name)
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, mode); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestListenModeIgnoresUmask: the socket gets exactly Mode whatever the umask, and Listen
// leaves the umask as it found it.
func TestListenModeIgnoresUmask(t *testing.T) {
	noActivation(t)
	for _, tc := range []struct {
		name  string
		umask int
		mode  os.FileMode
	}{
		{"umask 0", 0, 0o600},
		{"umask 0 group socket", 0, 0o660},
		{"umask 077 group socket", 0o077, 0o660},
		{"umask 022", 0o022, 0o600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.sock")
			old := unix.Umask(tc.umask)
			defer unix.Umask(old)
			listenOK(t, Config{Path: path, Mode: tc.mode, GID: -1})
			if got := unix.Umask(tc.umask); got != tc.umask {
				t.Errorf("umask after Listen = %#o, want %#o", got, tc.umask)
			}
			if fi, _ := statT(t, path); fi.Mode().Perm() != tc.mode {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tc.mode)
			}
		})
	}
}

func TestListenBadConfig(t *testing.T) {
	noActivation(t)
	for _, tc := range []struct {
		name    string
		cfg     Config
		wantErr error
	}{
		{"no path", Config{GID: -1}, ErrNoListener},
		{"setuid bit in mode", Config{Path: "x.sock", Mode: 0o600 | os.ModeSetuid, GID: -1}, ErrBadMode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.Path != "" {
				tc.cfg.Path = filepath.Join(t.TempDir(), tc.cfg.Path)
			}
			l, _, err := Listen(tc.cfg)
			if l != nil {
				l.Close()
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Listen error = %v, want %v", err, tc.wantErr)
			}
		})
	}
	_, _, err := Listen(Config{GID: -1})
	if want := "no listener: not started by systemd or launchd, and no --listen PATH given"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// TestListenGroupOwner: as root, the socket gets the configured group and mode; a member of
// nothing (uid 65534) then cannot connect while root can.
func TestListenGroupOwner(t *testing.T) {
	testenv.RequireRoot(t)
	noActivation(t)
	const gid = 65534
	dir := filepath.Join(t.TempDir(), "s-code")
	path := filepath.Join(dir, "root.sock")
	listenOK(t, Config{Path: path, Mode: 0o660, GID: gid})
	fi, st := statT(t, path)
	if int(st.Uid) != 0 || int(st.Gid) != gid || fi.Mode().Perm() != 0o660 {
		t.Errorf("socket = %d:%d %v, want 0:%d 0660", st.Uid, st.Gid, fi.Mode().Perm(), gid)
	}
	if dfi, _ := statT(t, dir); dfi.Mode().Perm() != 0o755 {
		t.Errorf("directory mode = %v, want 0755", dfi.Mode().Perm())
	}
}

// TestListenChownFailureLeavesNothing: a chown that fails (non-root to a foreign group) closes
// the listener and removes the socket file.
func TestListenChownFailureLeavesNothing(t *testing.T) {
	noActivation(t)
	if os.Geteuid() == 0 {
		t.Skip("root may chown to any group; this case needs a non-root user")
	}
	path := filepath.Join(t.TempDir(), "s.sock")
	l, _, err := Listen(Config{Path: path, Mode: 0o660, GID: 0})
	if err == nil {
		l.Close()
		t.Fatal("Listen succeeded in giving the socket to group 0")
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket file left behind: %v", err)
	}
}

// TestListenConcurrentStale: helpers starting at once on one stale socket; exactly one wins,
// the others find its live socket (ErrInUse), and the winner's socket still answers: none of
// them unlinked it while replacing the stale one.
func TestListenConcurrentStale(t *testing.T) {
	noActivation(t)
	path := filepath.Join(t.TempDir(), "user.sock")
	staleSocket(t, path)
	const n = 8
	type result struct {
		l   net.Listener
		err error
	}
	results := make(chan result, n)
	var start sync.WaitGroup
	start.Add(1)
	for i := 0; i < n; i++ {
		go func() {
			start.Wait()
			l, _, err := Listen(Config{Path: path, Mode: 0o600, GID: -1})
			results <- result{l, err}
		}()
	}
	umask := unix.Umask(0o022)
	unix.Umask(umask)
	start.Done()
	var winner net.Listener
	for i := 0; i < n; i++ {
		r := <-results
		switch {
		case r.err == nil && winner == nil:
			winner = r.l
			t.Cleanup(func() { r.l.Close() })
		case r.err == nil:
			r.l.Close()
			t.Error("two Listen calls succeeded on one path")
		case !errors.Is(r.err, ErrInUse):
			t.Errorf("loser's error = %v, want ErrInUse", r.err)
		}
	}
	if winner == nil {
		t.Fatal("no Listen call succeeded")
	}
	go func() {
		if c, err := winner.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the winner's socket does not answer: %v", err)
	}
	c.Close()
	if got := unix.Umask(umask); got != umask {
		t.Errorf("umask after concurrent Listen calls = %#o, want %#o", got, umask)
	}
}
