package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// defaultWorkspace returns the Git top-level of the working directory (the nearest
// directory above it holding a .git file or directory), or the working directory itself.
func defaultWorkspace() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getwd: %w", err)
	}
	for dir := wd; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("look for .git: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd, nil
		}
		dir = parent
	}
}

// openWorkspace opens the workspace named by --workspace (or the default) as a directory
// handle.
func openWorkspace(flag string) (*wsfs.Root, error) {
	dir := flag
	if dir == "" {
		var err error
		if dir, err = defaultWorkspace(); err != nil {
			return nil, err
		}
	}
	return wsfs.Open(dir)
}

// turnStore returns the turn-undo records of the workspace root.
func turnStore(root *wsfs.Root) (*turns.Store, error) {
	base, err := turns.StateDir()
	if err != nil {
		return nil, err
	}
	return turns.Open(base, root.Path()), nil
}

// errorObject is the --json form of a file tool's failure.
type errorObject struct {
	Code        string              `json:"code"`
	Message     string              `json:"message"`
	Applied     []filetools.Applied `json:"applied"`
	Failed      string              `json:"failed,omitempty"`
	Written     bool                `json:"written,omitempty"`
	Unconfirmed []string            `json:"unconfirmed,omitempty"`
}

func errorObjectOf(err error) errorObject {
	var be *filetools.BatchError
	if errors.As(err, &be) {
		return errorObject{Code: be.Code, Message: be.Error(), Applied: be.Applied, Failed: be.Failed, Written: be.Written, Unconfirmed: be.Unconfirmed}
	}
	return errorObject{Code: filetools.Code(err), Message: err.Error(), Applied: []filetools.Applied{}}
}
