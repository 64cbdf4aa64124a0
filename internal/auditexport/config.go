package auditexport

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Defaults of Config.
const (
	DefaultQueue   = 10000            // records held while the endpoint is slow or down
	DefaultTimeout = 10 * time.Second // one export attempt
	DefaultURLPath = "/v1/logs"       // OTLP/HTTP's logs path
)

// Protocols of Config.Protocol.
const (
	ProtocolGRPC = "grpc" // OTLP/gRPC, usually port 4317
	ProtocolHTTP = "http" // OTLP/HTTP with protobuf bodies, usually port 4318
)

// Config is the export's configuration: the file the helpers' --audit-export flag names
// (TOML, docs/audit.md). Header values are credential handles, never secret values.
type Config struct {
	// Endpoint is the collector's HOST:PORT.
	Endpoint string `toml:"endpoint"`
	// Protocol is "grpc" or "http". Empty means grpc.
	Protocol string `toml:"protocol"`
	// URLPath is the HTTP path of OTLP/HTTP; empty means /v1/logs. Only for http.
	URLPath string `toml:"url_path"`
	// Insecure turns TLS off (plain text). The default is TLS, verified against CAFile or
	// the system's roots.
	Insecure bool `toml:"insecure"`
	// CAFile is a PEM file of the certificate authorities to trust instead of the system's.
	CAFile string `toml:"ca_file"`
	// ServerName overrides the name the server's certificate is checked against.
	ServerName string `toml:"server_name"`
	// Headers are sent with every export: name = credential handle (env:NAME or file:PATH).
	Headers map[string]string `toml:"headers"`
	// Queue is the most records waiting for export; more are counted as dropped and
	// reported by a gap record once there is room. 0 means DefaultQueue.
	Queue int `toml:"queue"`
	// Timeout bounds one export attempt, as a Go duration ("10s"). Empty means
	// DefaultTimeout.
	Timeout string `toml:"timeout"`

	timeout time.Duration
}

// ConfigError is a configuration file that cannot be used, with the reason.
type ConfigError struct {
	Path   string
	Reason string
}

// Error returns "audit export PATH: REASON".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("audit export %s: %s", e.Path, e.Reason)
}

// LoadConfig reads and checks the configuration file at path. The file must be a regular
// file owned by the effective uid or root and not writable by group or others (it says where
// audit records go and with which credentials); unknown keys, a missing endpoint, a bad
// protocol, timeout or queue, and a header value that is not a credential handle are
// errors (*ConfigError). Handles are not resolved here (see Resolve).
func LoadConfig(path string) (Config, error) {
	var c Config
	fi, err := os.Lstat(path)
	if err != nil {
		return c, fmt.Errorf("audit export: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return c, &ConfigError{path, "is not a regular file"}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return c, &ConfigError{path, fmt.Sprintf("mode %v is writable by group or others", fi.Mode().Perm())}
	}
	if uid, ok := fileOwner(fi); !ok || (uid != uint32(os.Geteuid()) && uid != 0) {
		return c, &ConfigError{path, fmt.Sprintf("is owned by uid %d, not by you or root", uid)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("audit export: %w", err)
	}
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, &ConfigError{path, err.Error()}
	}
	if err := c.check(); err != nil {
		return c, &ConfigError{path, err.Error()}
	}
	return c, nil
}

// check validates c and fills its defaults.
func (c *Config) check() error {
	if c.Endpoint == "" {
		return errors.New("endpoint is required (HOST:PORT of the collector)")
	}
	if _, port, err := net.SplitHostPort(c.Endpoint); err != nil || port == "" {
		return fmt.Errorf("endpoint %q is not HOST:PORT", c.Endpoint)
	}
	switch c.Protocol {
	case "":
		c.Protocol = ProtocolGRPC
	case ProtocolGRPC, ProtocolHTTP:
	default:
		return fmt.Errorf("protocol %q is neither %q nor %q", c.Protocol, ProtocolGRPC, ProtocolHTTP)
	}
	if c.URLPath != "" && c.Protocol != ProtocolHTTP {
		return errors.New("url_path is only for protocol \"http\"")
	}
	if c.URLPath == "" {
		c.URLPath = DefaultURLPath
	}
	if !strings.HasPrefix(c.URLPath, "/") {
		return fmt.Errorf("url_path %q does not start with /", c.URLPath)
	}
	if c.Insecure && (c.CAFile != "" || c.ServerName != "") {
		return errors.New("ca_file and server_name need TLS, but insecure is true")
	}
	switch {
	case c.Queue == 0:
		c.Queue = DefaultQueue
	case c.Queue < 0:
		return fmt.Errorf("queue %d is negative", c.Queue)
	}
	c.timeout = DefaultTimeout
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("timeout %q is not a positive duration such as \"10s\"", c.Timeout)
		}
		c.timeout = d
	}
	for name, h := range c.Headers {
		if name == "" || strings.ContainsAny(name, " :\r\n") {
			return fmt.Errorf("header name %q is not a valid header name", name)
		}
		if _, err := parseHandle(h); err != nil {
			return fmt.Errorf("header %s: %w", name, err)
		}
	}
	return nil
}
