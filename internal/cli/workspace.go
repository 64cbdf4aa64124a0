package cli

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/s-code-dev/s-code/internal/filetools"
	"github.com/s-code-dev/s-code/internal/turns"
	"github.com/s-code-dev/s-code/internal/workspace"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// openWorkspace opens the workspace named by --workspace (or the default) as a directory
// handle, after workspace.Validate (filetools.OpenWorkspace). A refused workspace is an
// *ExitError with ExitDenied wrapping the *workspace.Error.
func openWorkspace(flag string) (*wsfs.Root, error) {
	root, err := filetools.OpenWorkspace(mustGetwd(), flag, userValidation())
	var we *workspace.Error
	if errors.As(err, &we) {
		return nil, &ExitError{Code: ExitDenied, Err: err}
	}
	return root, err
}

// userWorkspace resolves the workspace named by --workspace (or the default,
// workspace.Resolve) and validates it for this user. A refused workspace is an *ExitError
// with ExitDenied wrapping the *workspace.Error.
func userWorkspace(flag string) (string, error) {
	ws, err := workspace.Resolve(mustGetwd(), flag)
	if err != nil {
		return "", err
	}
	if err := workspace.Validate(ws, userValidation()); err != nil {
		return "", &ExitError{Code: ExitDenied, Err: err}
	}
	return ws, nil
}

// mustGetwd returns the working directory, or "/" when it is gone (Resolve then fails on
// the relative override or finds nothing).
func mustGetwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return wd
}

// userValidation is the workspace validation of this user: their home (symbolic links
// resolved), their uid, S-Code's state directories.
func userValidation() workspace.Validation {
	home, _ := os.UserHomeDir()
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	return workspace.Validation{Home: home, UID: os.Geteuid(), State: workspace.StateDirs(os.Getenv, home)}
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
