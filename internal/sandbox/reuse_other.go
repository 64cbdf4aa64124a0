//go:build !linux

package sandbox

// usernsFingerprint is constant: outside Linux MountNamespaceUsable always refuses.
func usernsFingerprint() string { return "" }
