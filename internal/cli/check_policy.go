package cli

import (
	"errors"

	"github.com/s-code-dev/s-code/safety"
)

// loadPolicy reads the TOML policy file at path. Until the ShellSafety engine's
// safety.LoadPolicy is on this branch, every policy file is refused (fail closed).
func loadPolicy(path string) (*safety.Policy, error) {
	return nil, errors.New(path + ": policy files are not supported by this build yet")
}
