//go:build !linux && !darwin

package listener

import "net"

// systemdListener reports false: systemd socket activation exists only on Unix systems.
func systemdListener([]string) (net.Listener, bool, error) { return nil, false, nil }

// launchdListener reports false: launchd exists only on macOS.
func launchdListener([]string) (net.Listener, bool, error) { return nil, false, nil }

// listenPath returns ErrUnsupported: this package creates Unix sockets only on Linux and macOS.
func listenPath(Config) (net.Listener, error) { return nil, ErrUnsupported }
