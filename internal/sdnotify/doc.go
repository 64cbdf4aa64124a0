// Package sdnotify tells systemd about a helper daemon's state (sd_notify(3): READY=1,
// STOPPING=1, RELOADING=1, STATUS=, WATCHDOG=1); outside systemd every call does nothing.
package sdnotify
