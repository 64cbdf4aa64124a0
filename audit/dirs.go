package audit

import (
	"fmt"
	"os"
	"path/filepath"
)

// RootDir is the root helper's audit log directory.
const RootDir = "/var/log/s-code"

// DefaultDir returns the audit log directory of a helper role: for "user",
// $XDG_STATE_HOME/s-code/audit (an absolute XDG_STATE_HOME only, as the XDG Base Directory
// Specification requires), else ~/.local/state/s-code/audit; for "root", /var/log/s-code.
// It returns an error for another role or when the home directory is unknown.
func DefaultDir(role string) (string, error) {
	switch role {
	case "root":
		return RootDir, nil
	case "user", "":
		if s := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
			return filepath.Join(s, "s-code", "audit"), nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("audit log directory: %w", err)
		}
		return filepath.Join(home, ".local", "state", "s-code", "audit"), nil
	default:
		return "", fmt.Errorf("audit log directory: unknown helper role %q (want user or root)", role)
	}
}
