package sandbox

import "os"

// usernsSettings are the kernel settings that decide whether an unprivileged process may
// create a user namespace (user_namespaces(7); Debian's and Ubuntu's switches).
var usernsSettings = []string{
	"/proc/sys/user/max_user_namespaces",
	"/proc/sys/kernel/unprivileged_userns_clone",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
}

// usernsFingerprint returns the contents of usernsSettings (a missing file reads as
// "-"): the user-namespace probe's answer holds while it is unchanged.
func usernsFingerprint() string {
	var s string
	for _, f := range usernsSettings {
		b, err := os.ReadFile(f)
		if err != nil {
			b = []byte("-")
		}
		s += string(b) + "\x00"
	}
	return s
}
