package hostdef

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testDef() *Definition {
	return &Definition{Name: "github", Kind: KindMCPServer, Command: "/usr/bin/npx",
		Args: []string{"-y", "@modelcontextprotocol/server-github@2025.4.8", "--a very long argument " + strings.Repeat("x", 300) + " end"},
		Env:  map[string]string{"GITHUB_TOKEN": "keyring:github.com/me", "OTHER": "file:/home/me/.tok"}, Enabled: true}
}

// TestCardText: the card names the ambient authority, the exact command and every argument
// untruncated, the directory, every environment name and every handle.
func TestCardText(t *testing.T) {
	d := testDef()
	text := d.Card("/home/me").Text()
	for _, want := range []string{
		AmbientAuthority, "outside the sandbox", "your files, your network and your credentials",
		`"/usr/bin/npx"`, `"-y"`, `"@modelcontextprotocol/server-github@2025.4.8"`, strings.Repeat("x", 300) + ` end"`,
		`directory:   "/home/me"`, "GITHUB_TOKEN from keyring:github.com/me", "OTHER from file:/home/me/.tok",
		"can read, transmit or print", "PATH", "HOME", "digest:      sha256:",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("card lacks %q:\n%s", want, text)
		}
	}
	// Arguments that look alike on a terminal are told apart.
	d.Args = []string{"a b", "a\tb", "a\x1b[2Jb"}
	text = d.Card("/h").Text()
	for _, want := range []string{`"a b"`, `"a\tb"`, `"a\x1b[2Jb"`} {
		if !strings.Contains(text, want) {
			t.Errorf("card lacks %s:\n%s", want, text)
		}
	}
}

// TestDigestCoversEveryField: each change to what runs changes the digest, so the old
// confirmation no longer covers it and Runnable refuses until confirmed again.
func TestDigestCoversEveryField(t *testing.T) {
	base := testDef()
	if err := Confirm(base, "/home/me", nil, &strings.Builder{}, true, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := base.Runnable("/home/me"); err != nil {
		t.Fatalf("confirmed definition: %v", err)
	}
	for name, change := range map[string]func(d *Definition){
		"command":   func(d *Definition) { d.Command = "/usr/bin/node" },
		"arg":       func(d *Definition) { d.Args[0] = "-Y" },
		"arg added": func(d *Definition) { d.Args = append(d.Args, "--x") },
		"arg split": func(d *Definition) {
			d.Args = append([]string{"-y", "@modelcontextprotocol/server-github@2025.4.8", "--a"}, d.Args[2][4:])
		},
		"dir":         func(d *Definition) { d.Dir = "/tmp" },
		"env added":   func(d *Definition) { d.Env["NEW"] = "env:NEW" },
		"handle":      func(d *Definition) { d.Env["GITHUB_TOKEN"] = "env:GITHUB_TOKEN" },
		"env renamed": func(d *Definition) { d.Env["GH_TOKEN"] = d.Env["GITHUB_TOKEN"]; delete(d.Env, "GITHUB_TOKEN") },
		"kind":        func(d *Definition) { d.Kind = KindTerminal },
		"home":        nil,
	} {
		d := *base
		d.Args = append([]string{}, base.Args...)
		d.Env = map[string]string{}
		for k, v := range base.Env {
			d.Env[k] = v
		}
		home := "/home/me"
		if change == nil {
			home = "/home/other"
		} else {
			change(&d)
		}
		err := d.Runnable(home)
		if !errors.Is(err, ErrNotConfirmed) || !strings.Contains(err.Error(), "changed since it was confirmed") {
			t.Errorf("%s changed: Runnable = %v; want not confirmed", name, err)
		}
	}
	unconfirmed := testDef()
	if err := unconfirmed.Runnable("/h"); !errors.Is(err, ErrNotConfirmed) {
		t.Errorf("never confirmed: %v", err)
	}
}

func TestConfirmPrompt(t *testing.T) {
	for in, ok := range map[string]bool{"yes\n": true, "yes": true, "y\n": false, "no\n": false, "": false, "YES please\n": false} {
		d := testDef()
		var out strings.Builder
		err := Confirm(d, "/h", strings.NewReader(in), &out, false, time.Now())
		if ok != (err == nil) || ok != (d.Confirmed != "") {
			t.Errorf("answer %q: err %v, confirmed %q", in, err, d.Confirmed)
		}
		if !ok && !errors.Is(err, ErrDeclined) {
			t.Errorf("answer %q: %v; want ErrDeclined", in, err)
		}
		if !strings.Contains(out.String(), AmbientAuthority) || !strings.Contains(out.String(), "Type yes") {
			t.Errorf("answer %q: the prompt did not show the card:\n%s", in, out.String())
		}
	}
}

func TestValidate(t *testing.T) {
	for name, change := range map[string]func(d *Definition){
		"pasted token":   func(d *Definition) { d.Env["GITHUB_TOKEN"] = "ghp_abcdefghijklmnopqrstuvwxyz0123456789" },
		"relative cmd":   func(d *Definition) { d.Command = "npx" },
		"unclean cmd":    func(d *Definition) { d.Command = "/usr/bin/../bin/npx" },
		"bad name":       func(d *Definition) { d.Name = "Git Hub" },
		"no kind":        func(d *Definition) { d.Kind = "" },
		"shadows PATH":   func(d *Definition) { d.Env["PATH"] = "env:MYPATH" },
		"bad env name":   func(d *Definition) { d.Env["A-B"] = "env:X" },
		"hook no event":  func(d *Definition) { d.Kind = KindHook },
		"event non-hook": func(d *Definition) { d.Event = EventPreCall },
		"relative dir":   func(d *Definition) { d.Dir = "src" },
	} {
		d := testDef()
		change(d)
		err := d.Validate()
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate = %v", name, err)
		}
		if name == "pasted token" && (!strings.Contains(err.Error(), "secret-tool store") || strings.Contains(err.Error(), "ghp_")) {
			t.Errorf("pasted token: the error must say how to store it and not repeat it: %v", err)
		}
	}
}

func TestStoreRoundTripAndSafety(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	p, err := UserPath(os.Getenv)
	if err != nil || p != filepath.Join(dir, "s-code", FileName) {
		t.Fatalf("UserPath = %q, %v", p, err)
	}
	uid := os.Geteuid()
	s, err := Load(p, uid)
	if err != nil || len(s.Defs) != 0 {
		t.Fatalf("missing file: %v %v", s, err)
	}
	d := testDef()
	d.Kind, d.Event, d.Timeout = KindHook, EventPreCall, Duration(5*time.Second)
	if err := Confirm(d, "/h", nil, &strings.Builder{}, true, time.Now()); err != nil {
		t.Fatal(err)
	}
	s.Defs[d.Name] = d
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("saved with mode %v", fi.Mode().Perm())
	}
	back, err := Load(p, uid)
	if err != nil {
		t.Fatal(err)
	}
	got := back.Defs["github"]
	if got == nil || got.Runnable("/h") != nil || got.Timeout != d.Timeout || got.Card("/h").Digest() != d.Card("/h").Digest() {
		t.Fatalf("round trip lost the definition or its confirmation: %+v", got)
	}
	if _, err := Load(p, uid+1); err == nil {
		t.Error("a file of another uid loaded")
	}
	os.Chmod(p, 0o620)
	var ue *UnsafeFileError
	if _, err := Load(p, uid); !errors.As(err, &ue) {
		t.Errorf("group-writable file: %v", err)
	}
	os.Chmod(p, 0o600)
	os.Chmod(filepath.Dir(p), 0o777)
	if _, err := Load(p, uid); !errors.As(err, &ue) {
		t.Errorf("world-writable directory: %v", err)
	}
	os.Chmod(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte("[process.x]\nkind='terminal'\ncommand='/bin/sh'\nbogus=1\n"), 0o600)
	if _, err := Load(p, uid); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown key: %v", err)
	}
}

// TestSuggestionNeverRunnable: a workspace that writes a definition with a correct digest of
// its own card (anyone can compute one) still suggests only: not enabled, not confirmed.
func TestSuggestionNeverRunnable(t *testing.T) {
	root := t.TempDir()
	d := testDef()
	d.Confirmed = d.Card("/h").Digest()
	os.MkdirAll(filepath.Join(root, ".s-code"), 0o755)
	body := "[process.github]\nkind = 'mcp-server'\ncommand = '/usr/bin/npx'\nargs = ['-y']\nenabled = true\nconfirmed = '" + (&Definition{Name: "github", Kind: KindMCPServer, Command: "/usr/bin/npx", Args: []string{"-y"}}).Card("/h").Digest() + "'\n"
	if err := os.WriteFile(SuggestionsPath(root), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sug, err := LoadSuggestions(root)
	if err != nil || len(sug) != 1 {
		t.Fatalf("LoadSuggestions = %v, %v", sug, err)
	}
	if sug[0].Enabled || sug[0].Confirmed != "" || !errors.Is(sug[0].Runnable("/h"), ErrNotConfirmed) {
		t.Fatalf("a suggestion is runnable as read: %+v", sug[0])
	}
}
