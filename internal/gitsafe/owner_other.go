//go:build !unix

package gitsafe

import "os"

// checkOwner fails closed where file ownership cannot be read.
func checkOwner(path string) error {
	return &LayoutError{Rule: RuleForeignOwner, Path: path, Reason: "cannot check the owner", Err: ErrUnsupported}
}

// fileID returns "?": no device and inode here (checkOwner refuses every repository anyway).
func fileID(os.FileInfo) string { return "?" }

// unixWritable reports false: pinned views go to the temporary directory.
func unixWritable(string) bool { return false }
