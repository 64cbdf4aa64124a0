//go:build !linux && !darwin

package sandbox

// systemRoots returns no roots: this system has no sandbox launcher (see ErrUnsupported).
func systemRoots() []string { return nil }

// defaultDevices returns no devices on systems without a sandbox launcher.
func defaultDevices() []string { return nil }
