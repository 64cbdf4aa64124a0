//go:build !linux

package sandbox

// MakeGitPlaceholders returns nil: only the Linux launcher mounts over the workspace's Git
// entries (Seatbelt refuses writes to missing paths by name).
func MakeGitPlaceholders(Profile) error { return nil }
