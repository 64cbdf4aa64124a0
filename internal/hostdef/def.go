package hostdef

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/s-code-dev/s-code/internal/credhandle"
)

// Kind is what a host process is for. The zero value is no kind, and no definition of it
// is valid.
type Kind string

// The kinds of host process (issue 16).
const (
	KindMCPServer Kind = "mcp-server" // a local MCP stdio server S-Code hosts for the agent
	KindHook      Kind = "hook"       // a command run at points of a session
	KindTerminal  Kind = "terminal"   // a background terminal: a command in a PTY
)

// Hook events: when a hook runs.
const (
	EventPreCall      = "pre-call"      // before a tool call; it may allow, ask or deny it
	EventPostCall     = "post-call"     // after a tool call
	EventSessionStart = "session-start" // when a session starts
	EventSessionEnd   = "session-end"   // when a session ends
)

// BaseEnv are the names of the variables every host process gets from the environment of
// the process that starts it (the user helper), besides its credential handles. The card
// lists them; nothing else of that environment is passed.
var BaseEnv = []string{"HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "SHELL", "TMPDIR", "USER", "XDG_RUNTIME_DIR"}

// AmbientAuthority is the sentence every permission preview card carries.
const AmbientAuthority = "It runs outside the sandbox, as you, with your files, your network and your credentials: it can read, change or send anything you can."

// Definition is one host process as the user configured it. Env maps a variable name to a
// credential handle (credhandle.Parse); the configuration never holds a secret value.
type Definition struct {
	Name    string            `toml:"-" json:"name"`
	Kind    Kind              `toml:"kind" json:"kind"`
	Command string            `toml:"command" json:"command"`
	Args    []string          `toml:"args" json:"args"`
	Dir     string            `toml:"dir,omitempty" json:"dir,omitempty"`
	Env     map[string]string `toml:"env,omitempty" json:"env,omitempty"`
	// Event is when a hook runs (Event* constants); hooks only.
	Event string `toml:"event,omitempty" json:"event,omitempty"`
	// Timeout is a hook's time limit (default DefaultHookTimeout); hooks only.
	Timeout Duration `toml:"timeout,omitempty" json:"timeout,omitempty"`
	// Enabled: an MCP server or hook runs only when enabled.
	Enabled bool `toml:"enabled" json:"enabled"`
	// Confirmed is the digest of the card a person confirmed ("sha256:..."), empty when
	// none was. The definition runs only while Confirmed equals Digest of its card now.
	Confirmed   string    `toml:"confirmed,omitempty" json:"confirmed,omitempty"`
	ConfirmedAt time.Time `toml:"confirmed_at,omitempty" json:"confirmed_at,omitzero"`
}

// DefaultHookTimeout is a hook's time limit when its definition names none.
const DefaultHookTimeout = 30 * time.Second

// Duration is a time.Duration written in TOML as a string ("30s").
type Duration time.Duration

// MarshalText writes d as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a time.ParseDuration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// nameRE and envRE are compiled on first use: compiling `{0,63}` at package initialisation
// cost every s-code process, `s-code version` included, about 3 million instructions.
var (
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`) })
	envRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// ErrInvalid is wrapped by every error Validate returns.
var ErrInvalid = errors.New("invalid host process definition")

// Validate reports what is wrong with d: a name that is not [a-z0-9][a-z0-9_-]* (64 bytes at
// most), an unknown kind, a command that is not an absolute path, a relative dir, an env
// name that is not a variable name or that shadows a BaseEnv name, a value that is not a
// credential handle (the error says how to store it), or a hook without a known event.
func (d *Definition) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrInvalid, d.Name, fmt.Sprintf(format, args...))
	}
	if !nameRE().MatchString(d.Name) {
		return bad("the name must be lower-case letters, digits, - and _ (64 at most), starting with a letter or digit")
	}
	switch d.Kind {
	case KindMCPServer, KindTerminal:
		if d.Event != "" {
			return bad("event is for hooks only")
		}
	case KindHook:
		switch d.Event {
		case EventPreCall, EventPostCall, EventSessionStart, EventSessionEnd:
		default:
			return bad("event must be %s, %s, %s or %s", EventPreCall, EventPostCall, EventSessionStart, EventSessionEnd)
		}
		if d.Timeout < 0 {
			return bad("timeout must not be negative")
		}
	default:
		return bad("kind must be %s, %s or %s", KindMCPServer, KindHook, KindTerminal)
	}
	if !filepath.IsAbs(d.Command) || filepath.Clean(d.Command) != d.Command {
		return bad("command must be a clean absolute path (it is the exact program that runs)")
	}
	if d.Dir != "" && !filepath.IsAbs(d.Dir) {
		return bad("dir must be an absolute path")
	}
	for _, a := range append([]string{d.Command, d.Dir}, d.Args...) {
		if strings.ContainsRune(a, 0) {
			return bad("command, args and dir may not hold NUL")
		}
	}
	for k, v := range d.Env {
		if !envRE().MatchString(k) {
			return bad("env name %q is not a variable name", k)
		}
		for _, b := range BaseEnv {
			if k == b {
				return bad("env %s is passed from your environment already; name another variable", k)
			}
		}
		if _, err := credhandle.Parse(v); err != nil {
			return bad("env %s: %v", k, err)
		}
	}
	return nil
}

// ResolveCommand returns the absolute, clean path of the program name names: a path is
// made absolute, a bare name is looked up on PATH. The definition holds the result, so what
// the card shows is what runs.
func ResolveCommand(name string) (string, error) {
	p := name
	if !strings.Contains(name, "/") {
		var err error
		if p, err = exec.LookPath(name); err != nil {
			return "", fmt.Errorf("command %s: %w", name, err)
		}
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("command %s: %w", name, err)
	}
	return p, nil
}

// Card is the permission preview of a definition: everything it runs with, values of
// credentials never. Its digest is what a confirmation covers.
type Card struct {
	// Version changes when the card's meaning does; a new version needs new confirmations.
	Version     int          `json:"version"`
	Name        string       `json:"name"`
	Kind        Kind         `json:"kind"`
	Command     string       `json:"command"`
	Args        []string     `json:"args"`
	Dir         string       `json:"dir"`
	EnvNames    []string     `json:"env_names"`
	Credentials []Credential `json:"credentials"`
	Event       string       `json:"event,omitempty"`
	Timeout     string       `json:"timeout,omitempty"`
	Authority   string       `json:"authority"`
}

// Credential is one credential handle on a card: the variable it fills and the handle.
type Credential struct {
	Env    string `json:"env"`
	Handle string `json:"handle"`
}

// CardVersion is the Card.Version this package writes.
const CardVersion = 1

// Card returns d's permission preview card. Dir "" is shown as the directory it will run
// in: the user's home (home).
func (d *Definition) Card(home string) Card {
	c := Card{Version: CardVersion, Name: d.Name, Kind: d.Kind, Command: d.Command, Args: append([]string{}, d.Args...), Dir: d.Dir,
		Event: d.Event, Authority: AmbientAuthority, EnvNames: append([]string{}, BaseEnv...)}
	if c.Dir == "" {
		c.Dir = home
	}
	if d.Kind == KindHook {
		t := time.Duration(d.Timeout)
		if t == 0 {
			t = DefaultHookTimeout
		}
		c.Timeout = t.String()
	}
	for k, v := range d.Env {
		c.EnvNames = append(c.EnvNames, k)
		c.Credentials = append(c.Credentials, Credential{Env: k, Handle: v})
	}
	sort.Strings(c.EnvNames)
	sort.Slice(c.Credentials, func(i, j int) bool { return c.Credentials[i].Env < c.Credentials[j].Env })
	return c
}

// Digest returns "sha256:" and the hex SHA-256 of the card's canonical JSON: any change to
// the command, arguments, directory, environment, handles, event or timeout changes it.
func (c Card) Digest() string {
	b, err := json.Marshal(c)
	if err != nil {
		panic("hostdef: card JSON: " + err.Error()) // only strings and slices: cannot fail
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Text renders the card for a person: every field in full, never truncated; each argument
// on its own line in Go quoting so spaces, quotes and control characters are visible.
func (c Card) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Host process %s (%s)\n", c.Name, c.Kind)
	fmt.Fprintf(&b, "  %s\n", c.Authority)
	fmt.Fprintf(&b, "  command:     %q\n", c.Command)
	if len(c.Args) == 0 {
		fmt.Fprintf(&b, "  arguments:   none\n")
	}
	for i, a := range c.Args {
		fmt.Fprintf(&b, "  argument %d:  %q\n", i+1, a)
	}
	fmt.Fprintf(&b, "  directory:   %q\n", c.Dir)
	if c.Event != "" {
		fmt.Fprintf(&b, "  runs at:     %s (time limit %s)\n", c.Event, c.Timeout)
	}
	fmt.Fprintf(&b, "  environment: %s\n", strings.Join(c.EnvNames, " "))
	if len(c.Credentials) == 0 {
		fmt.Fprintf(&b, "  credentials: none\n")
	} else {
		fmt.Fprintf(&b, "  credentials (resolved when it starts; the process can read, transmit or print them):\n")
		for _, cr := range c.Credentials {
			fmt.Fprintf(&b, "    %s from %s\n", cr.Env, cr.Handle)
		}
	}
	fmt.Fprintf(&b, "  digest:      %s\n", c.Digest())
	return b.String()
}

// ErrNotConfirmed is wrapped by Runnable's error for a definition whose card no person
// confirmed, or which changed since.
var ErrNotConfirmed = errors.New("not confirmed")

// Runnable returns nil when d is valid and a person confirmed exactly its current card;
// otherwise an error wrapping ErrInvalid or ErrNotConfirmed that says what to do.
func (d *Definition) Runnable(home string) error {
	if err := d.Validate(); err != nil {
		return err
	}
	advice := fmt.Sprintf("review its card with s-code mcp-servers show %s and confirm it with s-code mcp-servers enable %s", d.Name, d.Name)
	switch d.Kind {
	case KindHook:
		advice = fmt.Sprintf("review its card with s-code hooks show %s and confirm it with s-code hooks enable %s", d.Name, d.Name)
	case KindTerminal:
		advice = "start it again with s-code term start, which shows its card to confirm"
	}
	if d.Confirmed == "" {
		return fmt.Errorf("host process %s is %w: %s", d.Name, ErrNotConfirmed, advice)
	}
	if d.Confirmed != d.Card(home).Digest() {
		return fmt.Errorf("host process %s changed since it was confirmed, so it is %w: %s", d.Name, ErrNotConfirmed, advice)
	}
	return nil
}
