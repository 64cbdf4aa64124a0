// Package wsfs resolves and writes workspace paths from one directory handle opened on the
// workspace root, never following a symlink in any component.
package wsfs
