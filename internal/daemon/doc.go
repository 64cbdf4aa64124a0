// Package daemon is the start-up and shutdown of the two helper daemons: flags, logs, the
// listener, the audit log, readiness and watchdog notifications, and the drain on SIGTERM.
package daemon
