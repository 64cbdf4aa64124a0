// Package listener gives a helper daemon its Unix-socket listener: from systemd socket
// activation, from launchd, or by creating the socket at a path with a checked directory,
// an explicit mode and owner, and a stale socket replaced only when nothing listens on it.
package listener
