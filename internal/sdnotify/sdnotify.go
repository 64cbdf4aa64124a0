package sdnotify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// ErrBadStatus: a status message holds a newline or NUL, which would let it add other
// assignments (READY=1, MAINPID=…) to the notification.
var ErrBadStatus = errors.New("sdnotify: status message has a newline or NUL")

// send writes state to $NOTIFY_SOCKET. Without NOTIFY_SOCKET (not under systemd, or a unit
// that is not Type=notify) it does nothing and returns nil. The variable is left set so later
// notifications reach systemd too; helpers build their children's environment from an
// allowlist, so it does not leak to commands.
func send(state string) error {
	if _, err := daemon.SdNotify(false, state); err != nil {
		return fmt.Errorf("sd_notify %q: %w", firstLine(state), err)
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Ready sends READY=1: start-up is finished and the listener accepts connections. systemd
// holds a Type=notify unit in "activating" until then.
func Ready() error { return send(daemon.SdNotifyReady) }

// Stopping sends STOPPING=1: the daemon has begun shutting down (on SIGTERM, before draining
// running commands).
func Stopping() error { return send(daemon.SdNotifyStopping) }

// Reloading sends RELOADING=1 with MONOTONIC_USEC= (needed by Type=notify-reload units,
// systemd.service(5)); call Ready when the reload is done.
func Reloading() error {
	return send(daemon.SdNotifyReloading + "\n" + strings.TrimSuffix(daemon.SdNotifyMonotonicUsec(), "\n"))
}

// Status sends STATUS=msg, the one-line text `systemctl status` shows. A msg holding a newline
// or NUL is refused with ErrBadStatus and nothing is sent.
func Status(msg string) error {
	if strings.ContainsAny(msg, "\n\x00") {
		return ErrBadStatus
	}
	return send("STATUS=" + msg)
}

// Watchdog sends WATCHDOG=1 every half of the interval systemd asked for (WatchdogSec=,
// passed as WATCHDOG_USEC, for this process when WATCHDOG_PID names it) until ctx ends, then
// returns nil. When no watchdog is asked for it returns nil at once. It returns the error of
// a malformed WATCHDOG_USEC or of a failed send; the daemon should then log it, and systemd
// will restart the unit when the pings stop.
func Watchdog(ctx context.Context) error {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		return fmt.Errorf("sd_watchdog_enabled: %w", err)
	}
	if interval <= 0 {
		return nil
	}
	return ping(ctx, interval/2)
}

// ping sends WATCHDOG=1 at once and then every period until ctx ends.
func ping(ctx context.Context, period time.Duration) error {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if err := send(daemon.SdNotifyWatchdog); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
