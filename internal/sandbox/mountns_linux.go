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
	_, err := syscall.ForkExec("/proc/self/fd/-1/s-code-userns-probe", []string{"s-code-userns-probe"}, &syscall.ProcAttr{Sys: userNamespaceAttr()})
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	if err == nil {
		return fmt.Errorf("%w: the user namespace probe ran a program", ErrNoMountNamespace)
	}
	return fmt.Errorf("%w: clone CLONE_NEWUSER: %w", ErrNoMountNamespace, err)
}

// LauncherSysProcAttr returns the process attributes for starting the launcher under p: a
// new user namespace, with CAP_SYS_ADMIN there, when p asks for ProtectionMountNamespace and
// this process lacks CAP_SYS_ADMIN (see userNamespaceAttr); else nil (the launcher unshares
// its mount namespace with its own CAP_SYS_ADMIN, or needs none). A process that holds these
// attributes cannot replace itself with the launcher (execve keeps the user namespace): it
// must start the launcher as a child.
func LauncherSysProcAttr(p Profile) *syscall.SysProcAttr {
	if p.Protection != ProtectionMountNamespace || HasSysAdmin() {
		return nil
	}
	return userNamespaceAttr()
}
