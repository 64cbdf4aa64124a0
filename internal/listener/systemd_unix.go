//go:build linux || darwin

package listener

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/coreos/go-systemd/v22/activation"
	"golang.org/x/sys/unix"
)

// systemdListener takes the socket systemd passed (sd_listen_fds(3)): it reports false when
// LISTEN_PID is not this process or LISTEN_FDS is empty. activation.Files checks LISTEN_PID,
// sets close-on-exec on the descriptors and unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES.
// The descriptors not chosen are closed.
func systemdListener(names []string) (net.Listener, bool, error) {
	files := activation.Files(true)
	if len(files) == 0 {
		return nil, false, nil
	}
	var chosen *os.File
	var got []string
	for _, f := range files {
		got = append(got, f.Name())
		if chosen == nil && acceptsName(names, f.Name()) {
			chosen = f
			continue
		}
		f.Close()
	}
	if chosen == nil {
		return nil, false, fmt.Errorf("%w: got sockets named %q, want one of %q", ErrActivation, got, names)
	}
	if len(names) == 0 && len(files) != 1 {
		chosen.Close()
		return nil, false, fmt.Errorf("%w: got %d sockets %q, want exactly one", ErrActivation, len(files), got)
	}
	l, err := fileListener(chosen)
	if err != nil {
		return nil, false, err
	}
	return l, true, nil
}

// fileListener turns an inherited descriptor into a listener, closing f, and refuses anything
// but a Unix stream socket.
func fileListener(f *os.File) (net.Listener, error) {
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("%w: socket %q: %w", ErrActivation, f.Name(), err)
	}
	if l.Addr().Network() != "unix" {
		l.Close()
		return nil, fmt.Errorf("%w: socket %q is %s, want a Unix stream socket", ErrActivation, f.Name(), l.Addr().Network())
	}
	if err := checkListening(l.(*net.UnixListener)); err != nil {
		l.Close()
		return nil, fmt.Errorf("%w: socket %q: %w", ErrActivation, f.Name(), err)
	}
	return l, nil
}

// checkListening returns an error unless listen(2) was called on the socket
// (getsockopt SO_ACCEPTCONN): accepting on any other socket fails only later, with EINVAL.
func checkListening(l *net.UnixListener) error {
	rc, err := l.SyscallConn()
	if err != nil {
		return err
	}
	var on int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		on, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("getsockopt SO_ACCEPTCONN: %w", serr)
	}
	if on == 0 {
		return errors.New("not listening (SO_ACCEPTCONN is 0)")
	}
	return nil
}
