//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
	"syscall"
)

// HasSysAdmin reports false: CAP_SYS_ADMIN is a Linux capability.
func HasSysAdmin() bool { return false }

// MountNamespaceUsable returns ErrNoMountNamespace: mount namespaces are Linux's.
func MountNamespaceUsable() error {
	return fmt.Errorf("%w: %s has no mount namespaces", ErrNoMountNamespace, runtime.GOOS)
}

// PIDNamespaceUsable returns ErrNoPIDNamespace: PID namespaces are Linux's.
func PIDNamespaceUsable() error {
	return fmt.Errorf("%w: %s has no PID namespaces", ErrNoPIDNamespace, runtime.GOOS)
}

// LauncherSysProcAttr returns nil: there is no namespace to ask for.
func LauncherSysProcAttr(Profile) *syscall.SysProcAttr { return nil }
