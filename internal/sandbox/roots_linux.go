package sandbox

// systemRoots returns the read-only system roots of a Linux machine (those that exist are
// kept by Discover). /proc is readable because tools read /proc/self and /proc/cpuinfo;
// Landlock refuses reads of other processes' /proc entries (ptrace rules). /dev is not a
// root: only the devices of defaultDevices are granted, so /dev/shm stays out of reach.
func systemRoots() []string {
	return []string{
		"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
		"/nix", "/snap", "/proc", "/sys", "/run/systemd/resolve", "/run/resolvconf",
		"/usr/local/go",
	}
}

// defaultDevices returns the device files a command may read, write and control.
func defaultDevices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts", "/dev/ptmx"}
}
