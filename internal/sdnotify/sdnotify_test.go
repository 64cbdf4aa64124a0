//go:build linux || darwin

package sdnotify

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// notifySocket binds a unixgram socket like systemd's notification socket, points
// NOTIFY_SOCKET at it and returns it.
func notifySocket(t *testing.T) *net.UnixConn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return c
}

// recv returns the next datagram, or "" when none arrives within wait.
func recv(t *testing.T, c *net.UnixConn, wait time.Duration) string {
	t.Helper()
	buf := make([]byte, 4096)
	c.SetReadDeadline(time.Now().Add(wait))
	n, err := c.Read(buf)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func TestNotify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		call    func() error
		want    *regexp.Regexp // nil: nothing may arrive
		wantErr error
	}{
		{"ready", Ready, regexp.MustCompile(`^READY=1$`), nil},
		{"stopping", Stopping, regexp.MustCompile(`^STOPPING=1$`), nil},
		{"reloading", Reloading, regexp.MustCompile(`^RELOADING=1\nMONOTONIC_USEC=[0-9]+$`), nil},
		{"status", func() error { return Status("serving 3 commands") }, regexp.MustCompile(`^STATUS=serving 3 commands$`), nil},
		{"status with a newline refused", func() error { return Status("ok\nREADY=1") }, nil, ErrBadStatus},
		{"status with a NUL refused", func() error { return Status("ok\x00READY=1") }, nil, ErrBadStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := notifySocket(t)
			err := tc.call()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			got := recv(t, c, 200*time.Millisecond)
			switch {
			case tc.want == nil && got != "":
				t.Errorf("sent %q, want nothing", got)
			case tc.want != nil && !tc.want.MatchString(got):
				t.Errorf("sent %q, want %v", got, tc.want)
			}
		})
	}
}

func TestNotifyOutsideSystemd(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	for name, call := range map[string]func() error{"ready": Ready, "stopping": Stopping, "reloading": Reloading, "status": func() error { return Status("x") }} {
		if err := call(); err != nil {
			t.Errorf("%s without NOTIFY_SOCKET: %v, want nil", name, err)
		}
	}
}

func TestNotifySocketGone(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "absent"))
	if err := Ready(); err == nil {
		t.Error("Ready to a missing NOTIFY_SOCKET succeeded, want an error")
	}
}

func TestWatchdogPings(t *testing.T) {
	c := notifySocket(t)
	t.Setenv("WATCHDOG_USEC", "100000") // 100 ms: pings every 50 ms
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- Watchdog(ctx) }()
	const pings = 4
	for i := 0; i < pings; i++ {
		if got := recv(t, c, 5*time.Second); got != "WATCHDOG=1" {
			t.Fatalf("ping %d = %q, want WATCHDOG=1", i, got)
		}
	}
	// The first ping is at once, then one per 50 ms: four take at least 150 ms.
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("%d pings in %v, faster than half the watchdog interval", pings, el)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Watchdog after cancel = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watchdog did not return after its context ended")
	}
}

func TestWatchdogNotAsked(t *testing.T) {
	for _, tc := range []struct {
		name, usec, pid string
		wantErr         bool
	}{
		{"no WATCHDOG_USEC", "", "", false},
		{"another process's watchdog", "100000", "1", false},
		{"malformed WATCHDOG_USEC", "soon", "", true},
		{"zero WATCHDOG_USEC", "0", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := notifySocket(t)
			t.Setenv("WATCHDOG_USEC", tc.usec)
			t.Setenv("WATCHDOG_PID", tc.pid)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := Watchdog(ctx)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Watchdog = %v, want error %v", err, tc.wantErr)
			}
			if ctx.Err() != nil {
				t.Error("Watchdog waited for its context instead of returning at once")
			}
			if got := recv(t, c, 100*time.Millisecond); got != "" {
				t.Errorf("sent %q, want nothing", got)
			}
		})
	}
}

func TestWatchdogSendFails(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "absent"))
	t.Setenv("WATCHDOG_USEC", "100000")
	t.Setenv("WATCHDOG_PID", "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Watchdog(ctx); err == nil {
		t.Error("Watchdog to a missing NOTIFY_SOCKET returned nil, want the send error")
	}
}
