// Package filetools provides the workspace file tools read_file, apply_patch and undo over
// a workspace directory handle, with revisions, validated batches and turn-undo records.
package filetools
