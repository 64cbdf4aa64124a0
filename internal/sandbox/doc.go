// Package sandbox computes the sandbox profile for a workspace: its writable roots, read-only
// roots, denied and protected paths, network setting, private dependency caches and
// environment changes, the card that shows them, and the command that runs a program under it.
package sandbox
