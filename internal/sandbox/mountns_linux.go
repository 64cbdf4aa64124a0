package sandbox

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// HasSysAdmin reports whether the calling thread has CAP_SYS_ADMIN in its effective set
// (capget(2)): then the launcher can unshare a mount namespace itself.
func HasSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_SYS_ADMIN) != 0
}

// userNamespaceAttr returns the attributes that start a process in a new user namespace
// (clone(2) CLONE_NEWUSER), with the caller's own uid and gid
// mapped to themselves (user_namespaces(7); setgroups denied, as an unprivileged writer of
// gid_map must) and CAP_SYS_ADMIN raised as an ambient capability (with CAP_SETPCAP, so that
// the launcher can empty its bounding set as it does as root), so that the launcher keeps
// it across execve(2) and can unshare its own mount namespace and set up its read-only bind
// mounts there (the mount namespace is not made at clone time: the launcher makes one
// anyway, and each copies the mount table). The capability is only valid inside the new
// namespace, and the launcher drops every capability before it execs the command. The user
// namespace is made at clone time because unshare(CLONE_NEWUSER) refuses a multi-threaded
// caller, and every Go process is one.
func userNamespaceAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP},
	}
}

// MountNamespaceUsable returns nil when the launcher started by this process can get a
// private mount namespace: this process has CAP_SYS_ADMIN (the launcher unshares one
// itself), or a user namespace can be created (tried for real: a child is cloned with the
// attributes of Command and its execve of a path that does not exist must be the only
// failure). Otherwise it returns ErrNoMountNamespace with the kernel's error.
func MountNamespaceUsable() error {
	if HasSysAdmin() {
		return nil
	}
	if err := probeClone(userNamespaceAttr()); err != nil {
		return fmt.Errorf("%w: %w", ErrNoMountNamespace, err)
	}
	return nil
}

// PIDNamespaceUsable returns nil when this process can start the launcher as the init of a
// new PID namespace (clone(2) CLONE_NEWPID): with CAP_SYS_ADMIN directly, else together with
// a new user namespace that owns it. Both are tried for real, as in MountNamespaceUsable.
// Otherwise it returns ErrNoPIDNamespace with the kernel's error.
func PIDNamespaceUsable() error {
	if err := probeClone(pidNamespaceAttr()); err != nil {
		return fmt.Errorf("%w: %w", ErrNoPIDNamespace, err)
	}
	return nil
}

// probeClone clones a child with attr whose execve of a path that does not exist must be its
// only failure; it returns the clone's error otherwise.
func probeClone(attr *syscall.SysProcAttr) error {
	_, err := syscall.ForkExec("/proc/self/fd/-1/s-code-ns-probe", []string{"s-code-ns-probe"}, &syscall.ProcAttr{Sys: attr})
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	if err == nil {
		return errors.New("the namespace probe ran a program")
	}
	return fmt.Errorf("clone: %w", err)
}

// pidNamespaceAttr returns the attributes that start the launcher as pid 1 of a new PID
// namespace: CLONE_NEWPID alone with CAP_SYS_ADMIN, else with the user namespace of
// userNamespaceAttr (the kernel creates the user namespace first, and it owns the PID
// namespace, user_namespaces(7)).
func pidNamespaceAttr() *syscall.SysProcAttr {
	if HasSysAdmin() {
		return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	}
	a := userNamespaceAttr()
	a.Cloneflags |= syscall.CLONE_NEWPID
	return a
}

// LauncherSysProcAttr returns the process attributes for starting the launcher under p:
// when p asks for a PID namespace, those of pidNamespaceAttr (with a user namespace when this
// process lacks CAP_SYS_ADMIN); else a new user namespace, with CAP_SYS_ADMIN there, when p
// asks for ProtectionMountNamespace and this process lacks CAP_SYS_ADMIN (see
// userNamespaceAttr); else nil (the launcher unshares its mount namespace with its own
// CAP_SYS_ADMIN, or needs none). A process that holds these attributes cannot replace itself
// with the launcher (execve keeps the user namespace, and a PID namespace is only entered by
// a new child): it must start the launcher as a child.
func LauncherSysProcAttr(p Profile) *syscall.SysProcAttr {
	if p.PIDNamespace {
		a := pidNamespaceAttr()
		if p.Protection != ProtectionMountNamespace && a.Cloneflags&syscall.CLONE_NEWUSER != 0 {
			// The capabilities the user namespace grants are only needed for the mounts.
			a.AmbientCaps = nil
		}
		return a
	}
	if p.Protection != ProtectionMountNamespace || HasSysAdmin() {
		return nil
	}
	return userNamespaceAttr()
}
