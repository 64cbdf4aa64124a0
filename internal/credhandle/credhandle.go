package credhandle

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/s-code-dev/s-code/internal/redact"
)

// Kind is the source a credential handle names. The zero value is no kind and resolves to
// nothing.
type Kind string

// The kinds of credential handle (issue 16, "Credential handles").
const (
	// KindEnv is env:NAME, the variable NAME of the user's environment when the process starts.
	KindEnv Kind = "env"
	// KindKeyring is keyring:SERVICE/ACCOUNT, an item of the Secret Service (Linux) or the
	// login Keychain (macOS), read through github.com/zalando/go-keyring.
	KindKeyring Kind = "keyring"
	// KindSystemd is systemd:ID, the file $CREDENTIALS_DIRECTORY/ID that systemd's
	// LoadCredential=/SetCredential= put in place (systemd.exec(5), "Credentials").
	KindSystemd Kind = "systemd"
	// KindFile is file:PATH, an absolute path to a regular file owned by the user with mode
	// 0600 or stricter.
	KindFile Kind = "file"
)

// MaxValueLen is the largest value a file: or systemd: handle may hold, in bytes.
const MaxValueLen = 64 << 10

// Handle is one parsed credential handle. Its fields never hold the secret itself.
type Handle struct {
	Kind Kind
	// Name is the variable (env), the credential ID (systemd) or the absolute path (file).
	Name string
	// Service and Account name a keyring item (keyring only).
	Service, Account string
}

// String returns the handle in the form Parse reads (env:NAME, keyring:SERVICE/ACCOUNT,
// systemd:ID, file:PATH).
func (h Handle) String() string {
	if h.Kind == KindKeyring {
		return string(h.Kind) + ":" + h.Service + "/" + h.Account
	}
	return string(h.Kind) + ":" + h.Name
}

// HowToStore is the advice every refusal of a pasted value ends with: where to put the
// secret and which handle then names it.
const HowToStore = "store the secret outside the configuration and give its handle instead: " +
	"env:NAME (exported in your environment before s-code starts), " +
	"keyring:SERVICE/ACCOUNT (secret-tool store --label=NAME service SERVICE username ACCOUNT on Linux; " +
	"security add-generic-password -s SERVICE -a ACCOUNT -w on macOS), " +
	"systemd:ID (LoadCredential=ID:... in the unit), " +
	"or file:PATH (an absolute path to a file you own with chmod 0600)"

// ErrNotHandle is wrapped by the error Parse returns for text that is not a handle
// (most likely a secret value pasted where a handle belongs).
var ErrNotHandle = errors.New("not a credential handle")

// NotHandleError is Parse's error for text without a known handle kind. It never holds
// the text: that text may be the secret.
type NotHandleError struct {
	// Len is the length of the refused text, in bytes.
	Len int
	// LooksSecret reports whether the text has the shape of a known secret (a token, a key).
	LooksSecret bool
}

// Error says why the text is refused and how to store a secret instead.
func (e *NotHandleError) Error() string {
	what := fmt.Sprintf("a %d-byte value", e.Len)
	if e.LooksSecret {
		what += " that looks like a secret"
	}
	return fmt.Sprintf("%s is not a credential handle (env:, keyring:, systemd:, file:); values are never kept in the configuration: %s", what, HowToStore)
}

// Unwrap returns ErrNotHandle.
func (e *NotHandleError) Unwrap() error { return ErrNotHandle }

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse reads one credential handle. Text without a known kind prefix is refused with a
// *NotHandleError, which names neither the text nor any part of it; a known kind with a
// malformed rest is refused with an error naming the kind and the rule.
func Parse(s string) (Handle, error) {
	kind, rest, ok := strings.Cut(s, ":")
	bad := func(rule string) (Handle, error) {
		return Handle{}, fmt.Errorf("credential handle %s:...: %s", kind, rule)
	}
	if !ok {
		return Handle{}, notHandle(s)
	}
	switch Kind(kind) {
	case KindEnv:
		if !envName.MatchString(rest) {
			return bad("NAME must be a variable name (letters, digits, _; not starting with a digit)")
		}
		return Handle{Kind: KindEnv, Name: rest}, nil
	case KindKeyring:
		svc, acct, ok := strings.Cut(rest, "/")
		if !ok || svc == "" || acct == "" {
			return bad("the form is keyring:SERVICE/ACCOUNT, both non-empty")
		}
		if strings.ContainsAny(rest, "\x00\n") {
			return bad("SERVICE and ACCOUNT may not hold NUL or newline")
		}
		return Handle{Kind: KindKeyring, Service: svc, Account: acct}, nil
	case KindSystemd:
		if rest == "" || rest == "." || rest == ".." || strings.ContainsAny(rest, "/\x00\n") {
			return bad("ID must be a credential name: a file name without /")
		}
		return Handle{Kind: KindSystemd, Name: rest}, nil
	case KindFile:
		if !filepath.IsAbs(rest) || strings.ContainsAny(rest, "\x00\n") {
			return bad("PATH must be absolute")
		}
		return Handle{Kind: KindFile, Name: filepath.Clean(rest)}, nil
	}
	return Handle{}, notHandle(s)
}

func notHandle(s string) error {
	var r redact.Redactor
	return &NotHandleError{Len: len(s), LooksSecret: r.String(s) != s || len(s) >= 20 && !strings.ContainsAny(s, " \t")}
}

// Keyring reads one keyring item; go-keyring's Get is the real one (DefaultKeyring).
type Keyring func(service, account string) (string, error)

// Resolver turns handles into values. Its zero value resolves nothing: each source must be
// given, so a caller decides which of the user's credentials a process may reach.
type Resolver struct {
	// Getenv reads the user's environment (env:). Nil refuses env: handles.
	Getenv func(string) (string, bool)
	// Keyring reads keyring: handles. Nil refuses them.
	Keyring Keyring
	// CredentialsDir is $CREDENTIALS_DIRECTORY (systemd:). Empty refuses systemd: handles.
	CredentialsDir string
	// UID owns file: handles' files. Negative refuses file: handles.
	UID int
}

// FromEnvironment returns the Resolver of the calling process: its environment, the system
// keyring, its $CREDENTIALS_DIRECTORY and its effective uid.
func FromEnvironment() Resolver {
	return Resolver{Getenv: os.LookupEnv, Keyring: DefaultKeyring, CredentialsDir: os.Getenv("CREDENTIALS_DIRECTORY"), UID: os.Geteuid()}
}

// ResolveError reports a handle that gave no value. It names the handle, never a value.
type ResolveError struct {
	Handle Handle
	Err    error
}

// Error names the handle and the cause.
func (e *ResolveError) Error() string {
	return fmt.Sprintf("credential %s: %v", e.Handle, e.Err)
}

// Unwrap returns the cause.
func (e *ResolveError) Unwrap() error { return e.Err }

// ErrEmpty is wrapped when a handle resolves to an empty value: a process never gets an
// empty credential in place of a missing one.
var ErrEmpty = errors.New("the value is empty")

// Resolve returns the value h names. Errors are *ResolveError. A file: or systemd: value
// loses one trailing newline (what echo and editors add); values shorter than
// redact.MinSecretLen are refused, since the redactor could not remove them from output.
func (r Resolver) Resolve(h Handle) (string, error) {
	v, err := r.resolve(h)
	if err == nil && v == "" {
		err = ErrEmpty
	}
	if err == nil && len(v) < redact.MinSecretLen {
		err = fmt.Errorf("the value is shorter than %d bytes and could not be redacted from output", redact.MinSecretLen)
	}
	if err != nil {
		return "", &ResolveError{Handle: h, Err: err}
	}
	return v, nil
}

func (r Resolver) resolve(h Handle) (string, error) {
	switch h.Kind {
	case KindEnv:
		if r.Getenv == nil {
			return "", errors.New("env: handles are not available here")
		}
		v, ok := r.Getenv(h.Name)
		if !ok {
			return "", fmt.Errorf("the variable %s is not set in your environment", h.Name)
		}
		return v, nil
	case KindKeyring:
		if r.Keyring == nil {
			return "", errors.New("keyring: handles are not available here")
		}
		return r.Keyring(h.Service, h.Account)
	case KindSystemd:
		if r.CredentialsDir == "" {
			return "", errors.New("CREDENTIALS_DIRECTORY is not set (systemd: handles need a unit with LoadCredential= or SetCredential=)")
		}
		return readFile(filepath.Join(r.CredentialsDir, h.Name), -1)
	case KindFile:
		if r.UID < 0 {
			return "", errors.New("file: handles are not available here")
		}
		return readFile(h.Name, r.UID)
	}
	return "", fmt.Errorf("unknown handle kind %q", h.Kind)
}

// readFile reads a credential file without following a final symbolic link. With uid >= 0
// the file must be owned by uid and have no permission bits for group or others.
func readFile(path string, uid int) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if uid >= 0 {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != uid {
			return "", fmt.Errorf("%s is not owned by uid %d", path, uid)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("%s has mode %04o: group or others may read it (chmod 0600 %s)", path, fi.Mode().Perm(), path)
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxValueLen+1))
	if err != nil {
		return "", fmt.Errorf("read: %w", err)
	}
	if len(b) > MaxValueLen {
		return "", fmt.Errorf("%s is larger than %d bytes", path, MaxValueLen)
	}
	s := string(b)
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\r")
	return s, nil
}
