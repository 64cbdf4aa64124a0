package auditexport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A credential handle names where a secret is, never the secret itself (DESIGN.md):
//
//	env:NAME   the helper's environment variable NAME, read when the helper starts
//	file:PATH  the contents of PATH (an absolute path; trailing newlines removed), a regular
//	           file owned by the helper's user, mode 0600 or stricter, not a symbolic link
type handle struct {
	scheme string // "env" or "file"
	name   string // the variable's name or the file's path
}

// ErrNotHandle is a value where a credential handle belongs.
var ErrNotHandle = errors.New("is not a credential handle")

// maxSecretFile bounds a file: handle's file (64 KiB).
const maxSecretFile = 64 << 10

// parseHandle parses "env:NAME" or "file:PATH". Anything else is refused with an error that
// says how to store the secret instead (a pasted value must not end up in a file that is
// only meant to point at one).
func parseHandle(s string) (handle, error) {
	scheme, rest, ok := strings.Cut(s, ":")
	switch {
	case ok && scheme == "env" && validEnvName(rest):
		return handle{scheme, rest}, nil
	case ok && scheme == "env":
		return handle{}, fmt.Errorf("env: handle %q does not name an environment variable ([A-Za-z_][A-Za-z0-9_]*)", s)
	case ok && scheme == "file" && filepath.IsAbs(rest):
		return handle{scheme, filepath.Clean(rest)}, nil
	case ok && scheme == "file":
		return handle{}, fmt.Errorf("file: handle %q does not name an absolute path", s)
	}
	return handle{}, fmt.Errorf("the value %w: write env:NAME (a variable of the helper's environment) or file:PATH (a file of yours, mode 0600) holding the secret, not the secret itself", ErrNotHandle)
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// String returns the handle as written (it holds no secret).
func (h handle) String() string { return h.scheme + ":" + h.name }

// resolve returns the secret h names. getenv reads the environment (os.Getenv in the
// helpers). An unset or empty variable, and a file that is missing, not a regular file, a
// symbolic link, another user's, or readable by group or others, are errors naming the
// handle (never the value).
func (h handle) resolve(getenv func(string) string) (string, error) {
	switch h.scheme {
	case "env":
		v := getenv(h.name)
		if v == "" {
			return "", fmt.Errorf("credential handle %s: the variable is not set in the helper's environment", h)
		}
		return v, nil
	case "file":
		f, err := os.OpenFile(h.name, os.O_RDONLY|oSecretFile, 0)
		if err != nil {
			return "", fmt.Errorf("credential handle %s: %w", h, err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return "", fmt.Errorf("credential handle %s: %w", h, err)
		}
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("credential handle %s: not a regular file", h)
		}
		if uid, ok := fileOwner(fi); !ok || uid != uint32(os.Geteuid()) {
			return "", fmt.Errorf("credential handle %s: the file is not owned by the helper's user (uid %d)", h, os.Geteuid())
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("credential handle %s: mode %v lets group or others read it; chmod 600 it", h, fi.Mode().Perm())
		}
		b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
		if err != nil {
			return "", fmt.Errorf("credential handle %s: %w", h, err)
		}
		if len(b) > maxSecretFile {
			return "", fmt.Errorf("credential handle %s: the file is larger than %d bytes", h, maxSecretFile)
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", fmt.Errorf("credential handle %s: the file is empty", h)
		}
		if strings.ContainsAny(v, "\r\n") {
			return "", fmt.Errorf("credential handle %s: the secret holds a line break, which no header value may", h)
		}
		return v, nil
	}
	return "", fmt.Errorf("credential handle %s: unknown kind", h)
}

// resolveHeaders returns the configuration's headers with their handles resolved.
func (c *Config) resolveHeaders(getenv func(string) string) (map[string]string, error) {
	out := make(map[string]string, len(c.Headers))
	for name, s := range c.Headers {
		h, err := parseHandle(s)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", name, err)
		}
		v, err := h.resolve(getenv)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}
