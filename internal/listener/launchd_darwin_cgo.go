//go:build darwin && cgo

package listener

/*
#include <launch.h>
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// launchdListener asks launchd for the socket under each accepted name in turn
// (launch_activate_socket(3)): it reports false when launchd does not manage this process
// (ESRCH). A process launchd manages but whose plist has none of the names fails.
func launchdListener(names []string) (net.Listener, bool, error) {
	if len(names) == 0 {
		names = []string{"Listeners"}
	}
	for _, name := range names {
		fds, err := activateSocket(name)
		switch {
		case errors.Is(err, syscall.ESRCH):
			return nil, false, nil
		case errors.Is(err, syscall.ENOENT):
			continue
		case err != nil:
			return nil, false, fmt.Errorf("launch_activate_socket %q: %w", name, err)
		}
		if len(fds) != 1 {
			for _, fd := range fds {
				syscall.Close(fd)
			}
			return nil, false, fmt.Errorf("%w: launchd socket %q has %d descriptors, want one", ErrActivation, name, len(fds))
		}
		syscall.CloseOnExec(fds[0])
		l, err := fileListener(os.NewFile(uintptr(fds[0]), name))
		if err != nil {
			return nil, false, err
		}
		return l, true, nil
	}
	return nil, false, fmt.Errorf("%w: launchd manages this process but its plist has no socket named one of %q", ErrActivation, names)
}

// activateSocket returns the descriptors launchd holds for the socket called name.
func activateSocket(name string) ([]int, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var cfds *C.int
	var cnt C.size_t
	if rc := C.launch_activate_socket(cname, &cfds, &cnt); rc != 0 {
		return nil, syscall.Errno(rc)
	}
	defer C.free(unsafe.Pointer(cfds))
	fds := make([]int, 0, int(cnt))
	for _, fd := range unsafe.Slice(cfds, int(cnt)) {
		fds = append(fds, int(fd))
	}
	return fds, nil
}
