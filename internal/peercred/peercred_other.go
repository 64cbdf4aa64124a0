//go:build !linux && !darwin

package peercred

// get fails on systems without an implementation: identity never defaults to anything.
func get(rawConn) (*Creds, error) { return nil, ErrUnsupported }

// ReadsProcStatus reports false: this system has no implementation.
func ReadsProcStatus() bool { return false }
