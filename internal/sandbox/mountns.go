package sandbox

import "errors"

// ErrNoMountNamespace means the launcher cannot get a private mount namespace on this
// system: not Linux, or neither CAP_SYS_ADMIN nor an unprivileged user namespace is
// available (user namespaces switched off by sysctl, or refused by a security module).
var ErrNoMountNamespace = errors.New("no private mount namespace for the sandbox launcher")

// ErrNoPIDNamespace means the launcher cannot be started as the init of a new PID namespace
// on this system: not Linux, or neither CAP_SYS_ADMIN nor an unprivileged user namespace is
// available. Commands then run in a process group, which a process can leave (setsid).
var ErrNoPIDNamespace = errors.New("no PID namespace for the sandbox launcher")
