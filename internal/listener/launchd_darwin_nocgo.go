//go:build darwin && !cgo

package listener

import "net"

// launchdListener cannot ask launchd without cgo: it returns ErrNoCgo, which Listen ignores
// when a --listen path is given.
func launchdListener([]string) (net.Listener, bool, error) { return nil, false, ErrNoCgo }
