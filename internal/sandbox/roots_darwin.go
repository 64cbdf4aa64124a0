package sandbox

// systemRoots returns the read-only system roots of a macOS machine, in their resolved form
// (Seatbelt matches resolved paths, so /etc is /private/etc).
func systemRoots() []string {
	return []string{
		"/usr", "/bin", "/sbin", "/System", "/Library", "/opt/homebrew", "/opt/local",
		"/private/etc", "/private/var/db/timezone", "/Applications/Xcode.app",
		"/usr/local/go",
	}
}

// defaultDevices returns the device files a command may read, write and control.
func defaultDevices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/dtracehelper", "/dev/fd"}
}
