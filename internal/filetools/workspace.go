package filetools

import (
	"github.com/s-code-dev/s-code/internal/workspace"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// OpenWorkspace resolves the workspace for the working directory cwd (workspace.Resolve:
// override, else the Git top level above cwd, else cwd), refuses it as the helpers do
// (workspace.Validate with v; the error is a *workspace.Error naming the rule), and only
// then opens its directory handle. Every file tool opens its workspace through it.
func OpenWorkspace(cwd, override string, v workspace.Validation) (*wsfs.Root, error) {
	ws, err := workspace.Resolve(cwd, override)
	if err != nil {
		return nil, err
	}
	if err := workspace.Validate(ws, v); err != nil {
		return nil, err
	}
	return wsfs.Open(ws)
}
