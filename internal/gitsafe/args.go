package gitsafe

import (
	"fmt"
	"strings"
)

// ArgError is a revision, path or option value that gitsafe will not hand to git: it could
// be read as an option (argument injection, e.g. "--output=FILE" or "--upload-pack=CMD")
// or it holds a NUL or newline byte.
type ArgError struct {
	What  string // "revision", "path", …
	Value string
	Why   string
}

// Error names what was refused, its value and why.
func (e *ArgError) Error() string { return fmt.Sprintf("%s %q: %s", e.What, e.Value, e.Why) }

// checkRevision refuses a revision that is empty, starts with '-' or holds control bytes.
// Revisions are also placed after --end-of-options, so this is a second guard.
func checkRevision(rev string) error {
	switch {
	case rev == "":
		return &ArgError{What: "revision", Value: rev, Why: "empty"}
	case strings.HasPrefix(rev, "-"):
		return &ArgError{What: "revision", Value: rev, Why: "starts with '-' and would be read as an option"}
	case strings.ContainsAny(rev, "\x00\n\r"):
		return &ArgError{What: "revision", Value: rev, Why: "holds a NUL or line break"}
	}
	return nil
}

// checkPaths refuses empty paths and paths with NUL bytes; paths always follow "--", so a
// leading '-' is harmless.
func checkPaths(paths []string) error {
	for _, p := range paths {
		if p == "" || strings.ContainsRune(p, 0) {
			return &ArgError{What: "path", Value: p, Why: "empty or holds a NUL byte"}
		}
	}
	return nil
}
