// Package audit is the append-only, hash-chained, sealed audit log the helpers write: one
// JSON record a line, its writer, its verifier and its reader.
package audit
