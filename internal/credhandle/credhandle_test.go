package credhandle

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/s-code-dev/s-code/internal/testenv"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Handle
	}{
		{"env:GITHUB_TOKEN", Handle{Kind: KindEnv, Name: "GITHUB_TOKEN"}},
		{"keyring:github.com/me@example.org", Handle{Kind: KindKeyring, Service: "github.com", Account: "me@example.org"}},
		{"keyring:svc/a/b", Handle{Kind: KindKeyring, Service: "svc", Account: "a/b"}},
		{"systemd:api-token", Handle{Kind: KindSystemd, Name: "api-token"}},
		{"file:/home/me/.config/tok", Handle{Kind: KindFile, Name: "/home/me/.config/tok"}},
		{"file:/a/../b", Handle{Kind: KindFile, Name: "/b"}},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if back, _ := Parse(got.String()); back != got {
			t.Errorf("%q: String %q does not parse back", tc.in, got.String())
		}
	}
}

// TestParseRefusesValues: a value pasted where a handle belongs is refused with advice, and
// the error never repeats the value or a part of it.
func TestParseRefusesValues(t *testing.T) {
	for _, v := range []string{
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"sk-proj-Abc123Def456Ghi789",
		"hunter2hunter2",
		"Bearer: abcdefghijkl", // has a colon, unknown kind
		"https://user:pw@example.org",
		"",
	} {
		_, err := Parse(v)
		var nh *NotHandleError
		if !errors.As(err, &nh) || !errors.Is(err, ErrNotHandle) {
			t.Errorf("Parse(%q) = %v; want a NotHandleError", v, err)
			continue
		}
		msg := err.Error()
		for _, want := range []string{"not a credential handle", "env:NAME", "keyring:SERVICE/ACCOUNT", "secret-tool store", "systemd:ID", "file:PATH", "0600"} {
			if !strings.Contains(msg, want) {
				t.Errorf("Parse(%q): error %q lacks %q", v, msg, want)
			}
		}
		if len(v) >= 4 && strings.Contains(msg, v[:4]) && !strings.HasPrefix(v, "http") {
			t.Errorf("Parse(%q): error repeats the value: %q", v, msg)
		}
	}
	if _, err := Parse("ghp_abcdefghijklmnopqrstuvwxyz0123456789"); !strings.Contains(err.Error(), "looks like a secret") {
		t.Errorf("a token is not called secret-looking: %v", err)
	}
}

func TestParseMalformed(t *testing.T) {
	for _, v := range []string{"env:", "env:1X", "env:A-B", "keyring:", "keyring:svc", "keyring:/acct", "keyring:svc/", "systemd:", "systemd:a/b", "systemd:..", "file:", "file:rel/path", "file:/a\nb"} {
		if _, err := Parse(v); err == nil || errors.Is(err, ErrNotHandle) {
			t.Errorf("Parse(%q) = %v; want a malformed-handle error", v, err)
		}
	}
}

func TestResolveEnv(t *testing.T) {
	r := Resolver{Getenv: func(k string) (string, bool) {
		v, ok := map[string]string{"TOK": "s3cr3t-value", "EMPTY": "", "SHORT": "ab"}[k]
		return v, ok
	}, UID: -1}
	if v, err := r.Resolve(Handle{Kind: KindEnv, Name: "TOK"}); err != nil || v != "s3cr3t-value" {
		t.Fatalf("env:TOK = %q, %v", v, err)
	}
	for name, want := range map[string]string{"UNSET": "not set", "EMPTY": "empty", "SHORT": "shorter than 4"} {
		_, err := r.Resolve(Handle{Kind: KindEnv, Name: name})
		var re *ResolveError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "env:"+name) {
			t.Errorf("env:%s: %v; want a ResolveError naming the handle and %q", name, err, want)
		}
	}
	// The zero Resolver reaches nothing.
	var zero Resolver
	for _, h := range []Handle{{Kind: KindEnv, Name: "PATH"}, {Kind: KindKeyring, Service: "a", Account: "b"}, {Kind: KindSystemd, Name: "x"}, {}} {
		if _, err := zero.Resolve(h); err == nil {
			t.Errorf("zero Resolver resolved %v", h)
		}
	}
}

func TestResolveFile(t *testing.T) {
	dir := t.TempDir()
	uid := os.Geteuid()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "file-secret-1\n", 0o600)
	ro := write("ro", "file-secret-2", 0o400)
	wide := write("wide", "file-secret-3", 0o640)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	big := write("big", strings.Repeat("x", MaxValueLen+1), 0o600)
	fifo := filepath.Join(dir, "fifo")
	if err := exec.Command("mkfifo", "-m", "0600", fifo).Run(); err != nil {
		t.Fatal(err)
	}
	r := Resolver{UID: uid}
	for path, want := range map[string]string{good: "file-secret-1", ro: "file-secret-2"} {
		if v, err := r.Resolve(Handle{Kind: KindFile, Name: path}); err != nil || v != want {
			t.Errorf("file:%s = %q, %v; want %q", path, v, err, want)
		}
	}
	for path, want := range map[string]string{wide: "chmod 0600", link: "open", big: "larger", fifo: "not a regular file", filepath.Join(dir, "none"): "no such file", dir: "not a regular file"} {
		if v, err := r.Resolve(Handle{Kind: KindFile, Name: path}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("file:%s = %q, %v; want an error with %q", path, v, err, want)
		}
	}
	if _, err := (Resolver{UID: uid + 1}).Resolve(Handle{Kind: KindFile, Name: good}); err == nil || !strings.Contains(err.Error(), "not owned") {
		t.Errorf("a file of another uid: %v", err)
	}
}

func TestResolveSystemd(t *testing.T) {
	dir := t.TempDir()
	// systemd makes credential files read-only for the service's user (0400).
	if err := os.WriteFile(filepath.Join(dir, "api"), []byte("systemd-secret"), 0o400); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CREDENTIALS_DIRECTORY", dir)
	r := FromEnvironment()
	if v, err := r.Resolve(Handle{Kind: KindSystemd, Name: "api"}); err != nil || v != "systemd-secret" {
		t.Fatalf("systemd:api = %q, %v", v, err)
	}
	if _, err := r.Resolve(Handle{Kind: KindSystemd, Name: "missing"}); err == nil {
		t.Fatal("a missing credential resolved")
	}
	t.Setenv("CREDENTIALS_DIRECTORY", "")
	if _, err := FromEnvironment().Resolve(Handle{Kind: KindSystemd, Name: "api"}); err == nil || !strings.Contains(err.Error(), "LoadCredential") {
		t.Fatalf("without CREDENTIALS_DIRECTORY: %v", err)
	}
}

// TestResolveKeyring stores an item in a real Secret Service (gnome-keyring on a private
// session bus) with secret-tool, a separate client, and reads it through the handle.
func TestResolveKeyring(t *testing.T) {
	if !testenv.InSecretService(t) {
		return
	}
	st := testenv.RequireTool(t, "secret-tool")
	cmd := exec.Command(st, "store", "--label=s-code test", "service", "s-code-test", "username", "me")
	cmd.Stdin = strings.NewReader("keyring-secret-42")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("secret-tool store: %v\n%s", err, out)
	}
	h, err := Parse("keyring:s-code-test/me")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := FromEnvironment().Resolve(h); err != nil || v != "keyring-secret-42" {
		t.Fatalf("keyring:s-code-test/me = %q, %v", v, err)
	}
	_, err = FromEnvironment().Resolve(Handle{Kind: KindKeyring, Service: "s-code-test", Account: "nobody"})
	if err == nil || !strings.Contains(err.Error(), "secret-tool store") {
		t.Fatalf("a missing item: %v", err)
	}
	// go-keyring's own writes land in the same Secret Service.
	if err := keyring.Set("s-code-test", "other", "written-by-go"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(st, "lookup", "service", "s-code-test", "username", "other").Output()
	if err != nil || string(out) != "written-by-go" {
		t.Fatalf("secret-tool lookup = %q, %v", out, err)
	}
}
