package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/tools"
)

// userConfig is the user's S-Code configuration file (see configPath). Only the person
// writes it: the sandbox never makes it writable and ShellSafety refuses writes to it.
type userConfig struct {
	// Mode is the default permission mode of a session: "manual", "accept-edits" or
	// "workspace". Empty means manual.
	Mode string `toml:"mode"`
	// EditFormat is the apply_patch form `s-code mcp` shows the model: "lines", "text" or
	// "patch". Empty means lines.
	EditFormat string `toml:"edit_format"`
	// CodeMode sends Code Mode's code_mode tool in `s-code mcp`'s default tool list; false
	// (the default) leaves it deferred, found through tool_search.
	CodeMode bool `toml:"code_mode"`
}

// configPath returns $XDG_CONFIG_HOME/s-code/config.toml (an absolute XDG_CONFIG_HOME
// only), else ~/.config/s-code/config.toml.
func configPath() (string, error) {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "s-code", "config.toml"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("configuration: %w", err)
	}
	return filepath.Join(home, ".config", "s-code", "config.toml"), nil
}

// loadUserConfig reads the configuration file; a missing file is the zero configuration.
// Unknown keys and bad values are errors naming the file.
func loadUserConfig() (userConfig, error) {
	var c userConfig
	p, err := configPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("configuration %s: %w", p, err)
	}
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, configDecodeError(p, err)
	}
	if c.EditFormat != "" {
		if _, err := tools.ParseEditFormat(c.EditFormat); err != nil {
			return c, fmt.Errorf("configuration %s: edit_format: %w", p, err)
		}
	}
	if c.Mode != "" {
		if _, err := permission.ParseMode(c.Mode); err != nil {
			return c, fmt.Errorf("configuration %s: mode: %w", p, err)
		}
	}
	return c, nil
}

// configDecodeError names the line of a TOML error in the configuration file at path: each
// unknown key (with the keys the file may hold), or the syntax error's line and column.
func configDecodeError(path string, err error) error {
	var sm *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case errors.As(err, &sm):
		var parts []string
		for _, e := range sm.Errors {
			row, _ := e.Position()
			parts = append(parts, fmt.Sprintf("%s:%d: unknown key %q", path, row, strings.Join(e.Key(), ".")))
		}
		return fmt.Errorf("configuration %s (the keys are mode, edit_format and code_mode)", strings.Join(parts, "; "))
	case errors.As(err, &de):
		row, col := de.Position()
		return fmt.Errorf("configuration %s:%d:%d: %w", path, row, col, err)
	}
	return fmt.Errorf("configuration %s: %w", path, err)
}

// sessionMode returns the permission mode of this session: the --mode flag when given,
// else the configuration's mode, else Manual.
func sessionMode(flag string) (permission.Mode, error) {
	if flag != "" {
		m, err := permission.ParseMode(flag)
		if err != nil {
			return permission.ModeUnset, usagef("--mode: %v", err)
		}
		return m, nil
	}
	c, err := loadUserConfig()
	if err != nil {
		return permission.ModeUnset, usageError{err}
	}
	if c.Mode == "" {
		return permission.Manual, nil
	}
	return permission.ParseMode(c.Mode)
}
