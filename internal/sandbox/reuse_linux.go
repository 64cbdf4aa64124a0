package sandbox

import "os"

// nsSettings are the kernel settings that decide whether this process may create the user
// and PID namespaces the launcher asks for (user_namespaces(7), pid_namespaces(7); Debian's
// and Ubuntu's switches for unprivileged user namespaces).
var nsSettings = []string{
	"/proc/sys/user/max_user_namespaces",
	"/proc/sys/user/max_pid_namespaces",
	"/proc/sys/kernel/unprivileged_userns_clone",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
}

// nsFingerprint returns the contents of nsSettings (a missing file reads as "-"): a
// namespace probe's success holds while it is unchanged.
func nsFingerprint() string {
	var s string
	for _, f := range nsSettings {
		b, err := os.ReadFile(f)
		if err != nil {
			b = []byte("-")
		}
		s += string(b) + "\x00"
	}
	return s
}
