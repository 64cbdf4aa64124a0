//go:build !unix

package gitsafe

// checkOwner fails closed where file ownership cannot be read.
func checkOwner(path string) error {
	return &LayoutError{Rule: RuleForeignOwner, Path: path, Reason: "cannot check the owner", Err: ErrUnsupported}
}
