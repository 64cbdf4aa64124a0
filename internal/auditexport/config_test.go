package auditexport

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "export.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadConfig(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		err        string // "" means accepted
	}{
		{"minimal grpc", `endpoint = "collector:4317"`, 0o600, ""},
		{"http with everything", "endpoint = \"c.example:4318\"\nprotocol = \"http\"\nurl_path = \"/otlp/v1/logs\"\nca_file = \"/etc/ca.pem\"\nserver_name = \"c\"\nqueue = 5\ntimeout = \"3s\"\n[headers]\nauthorization = \"env:TOKEN\"\nx-tenant = \"file:/etc/s-code/tenant\"\n", 0o644, ""},
		{"group-writable", `endpoint = "c:4317"`, 0o664, "writable by group or others"},
		{"no endpoint", `protocol = "grpc"`, 0o600, "endpoint is required"},
		{"endpoint without port", `endpoint = "collector"`, 0o600, "is not HOST:PORT"},
		{"endpoint as URL", `endpoint = "https://collector:4317"`, 0o600, "is not HOST:PORT"},
		{"unknown protocol", "endpoint = \"c:1\"\nprotocol = \"udp\"", 0o600, `protocol "udp" is neither`},
		{"unknown key", "endpoint = \"c:1\"\ntls = false", 0o600, "strict mode"},
		{"url_path for grpc", "endpoint = \"c:1\"\nurl_path = \"/x\"", 0o600, "only for protocol"},
		{"ca_file without TLS", "endpoint = \"c:1\"\ninsecure = true\nca_file = \"/ca\"", 0o600, "need TLS"},
		{"negative queue", "endpoint = \"c:1\"\nqueue = -1", 0o600, "negative"},
		{"bad timeout", "endpoint = \"c:1\"\ntimeout = \"soon\"", 0o600, "not a positive duration"},
		{"pasted secret", "endpoint = \"c:1\"\nheaders = { authorization = \"Bearer abc\" }", 0o600, "is not a credential handle: write env:NAME"},
		{"pasted secret with colon", "endpoint = \"c:1\"\nheaders = { authorization = \"Basic:abc\" }", 0o600, "is not a credential handle"},
		{"relative file handle", "endpoint = \"c:1\"\nheaders = { a = \"file:token\" }", 0o600, "does not name an absolute path"},
		{"bad env name", "endpoint = \"c:1\"\nheaders = { a = \"env:A-B\" }", 0o600, "does not name an environment variable"},
		{"bad header name", "endpoint = \"c:1\"\nheaders = { \"a b\" = \"env:A\" }", 0o600, "is not a valid header name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadConfig(writeConfig(t, tc.body, tc.mode))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("got %v, want an error with %q", err, tc.err)
			}
			var ce *ConfigError
			if tc.err != "" && !errors.As(err, &ce) {
				t.Fatalf("%T is not a *ConfigError", err)
			}
		})
	}
}

func TestLoadConfigRefusesSymlink(t *testing.T) {
	p := writeConfig(t, `endpoint = "c:1"`, 0o600)
	link := filepath.Join(t.TempDir(), "link.toml")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(link); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("symlink: %v", err)
	}
}

func TestResolveHandles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("s3cret\n"), 0o600)
	loose := filepath.Join(dir, "loose")
	os.WriteFile(loose, []byte("s3cret"), 0o600)
	os.Chmod(loose, 0o640)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	twoLines := filepath.Join(dir, "two")
	os.WriteFile(twoLines, []byte("a\nb\n"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	others := filepath.Join(dir, "others")
	os.WriteFile(others, []byte("s3cret"), 0o600)
	if os.Geteuid() == 0 {
		if err := os.Chown(others, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else if os.Getenv("S_CODE_REQUIRE_ROOT") == "1" {
		t.Fatal("S_CODE_REQUIRE_ROOT=1 but not root")
	}
	env := map[string]string{"TOKEN": "from-env"}
	type handleCase struct{ handle, want, err string }
	cases := []handleCase{
		{"env:TOKEN", "from-env", ""},
		{"env:UNSET", "", "not set in the helper's environment"},
		{"file:" + good, "s3cret", ""},
		{"file:" + loose, "", "lets group or others read it"},
		{"file:" + empty, "", "is empty"},
		{"file:" + twoLines, "", "line break"},
		{"file:" + link, "", "symbolic link"},
		{"file:" + dir, "", "not a regular file"},
		{"file:" + filepath.Join(dir, "missing"), "", "no such file"},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, handleCase{"file:" + others, "", "not owned by the helper's user"})
	}
	for _, tc := range cases {
		t.Run(tc.handle, func(t *testing.T) {
			h, err := parseHandle(tc.handle)
			if err != nil {
				t.Fatal(err)
			}
			v, err := h.resolve(func(k string) string { return env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error with %q", v, err, tc.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil || v != tc.want {
				t.Fatalf("got %q, %v; want %q", v, err, tc.want)
			}
		})
	}
}
