// Package turns keeps turn-undo records: for each file a turn changed, its original bytes
// (or that the turn created it) and the SHA-256 of what the turn wrote.
package turns
