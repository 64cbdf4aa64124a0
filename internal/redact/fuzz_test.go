package redact

import (
	"strings"
	"testing"
)

// markerWords are substrings that may start a pattern; words holding one are left out of the
// surrounding text of FuzzKeepsWords, so that only the planted secret is a secret.
var markerWords = []string{"pass", "pwd", "token", "secret", "key", "bearer", "://", "akia", "asia", "gh", "glpat", "xox", "private", "reg-", "authorization"}

// words returns the fuzzer's text as plain words: letters, digits and . / _ , + - only,
// without pattern markers.
func words(s string) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		w = strings.Map(func(c rune) rune {
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.ContainsRune("./_,+-", c):
				return c
			}
			return -1
		}, w)
		bad := w == ""
		for _, m := range markerWords {
			bad = bad || strings.Contains(w, m)
		}
		if !bad {
			out = append(out, w)
		}
	}
	return out
}

// secretForms plant a secret body in each shape the patterns know.
var secretForms = []func(body string) string{
	func(b string) string { return "token=" + b },
	func(b string) string { return "--password " + b },
	func(b string) string { return "ghp_" + b },
	func(b string) string { return "https://u:" + b + "@host/x" },
	func(b string) string { return "Bearer " + b },
	func(b string) string { return "reg-" + b },
	func(b string) string { return `'-----BEGIN RSA PRIVATE KEY-----\n` + b + `'` },
	func(b string) string {
		return "'-----BEGIN EC PRIVATE KEY-----\n" + b + "\n-----END EC PRIVATE KEY-----'"
	},
	func(b string) string { return `token="` + b },
	func(b string) string { return `api_key: '` + b + `'` },
	func(b string) string { return "GITHUB_TOKEN=" + b },
	func(b string) string { return "export PGPASSWORD=" + b },
	func(b string) string { return "'Authorization: Basic " + b + "'" },
	func(b string) string { return "-u admin:" + b },
}

// FuzzKeepsWords: a command made of plain words around one planted secret comes out with the
// secret gone and every other word kept, in place and unchanged (the text before the secret
// is a prefix of the output, the text after it a suffix).
func FuzzKeepsWords(f *testing.F) {
	f.Add("git push origin", uint8(0), "abcdefghijklmnopqrstuvwx", "&& echo done")
	f.Add("", uint8(6), "MIIEowIBAAKCAQEA", "> key.pem")
	f.Add("curl -s", uint8(4), "eyJhbGciOiJIUzI1NiJ9", "https.example")
	f.Add("a", uint8(8), "zzzzzzzzzzzzzzzzzzzzzzzzzz", "b c")
	f.Fuzz(func(t *testing.T, before string, kind uint8, body string, after string) {
		body = strings.Map(func(c rune) rune {
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
				return c
			}
			return -1
		}, body)
		if len(body) < 20 {
			body += strings.Repeat("Q", 20-len(body))
		}
		secret := secretForms[int(kind)%len(secretForms)](body)
		r, err := New([]string{"reg-" + body})
		if err != nil {
			t.Fatal(err)
		}
		pre, post := strings.Join(words(before), " "), strings.Join(words(after), " ")
		in := pre + " " + secret + " " + post
		out := r.String(in)
		if strings.Contains(out, body) {
			t.Fatalf("String(%q) = %q keeps the secret %q", in, out, body)
		}
		if !strings.HasPrefix(out, pre+" ") || !strings.HasSuffix(out, " "+post) {
			t.Fatalf("String(%q) = %q does not keep the words around the secret", in, out)
		}
		if again := r.String(out); again != out {
			t.Fatalf("String is not idempotent: %q then %q", out, again)
		}
	})
}

// FuzzString: on any input String ends, removes the registered value, keeps text without
// any pattern marker unchanged, and is idempotent.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "ls", "token=", "-----BEGIN PRIVATE KEY-----", "password=\"", "Bearer ", "https://a:b@c", "reg-value-1234 x"} {
		f.Add(s)
	}
	r, err := New([]string{"reg-value-1234"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := r.String(s)
		if strings.Contains(out, "reg-value-1234") {
			t.Fatalf("String(%q) = %q keeps the registered value", s, out)
		}
		lower := strings.ToLower(s)
		clean := true
		for _, p := range patterns() {
			for _, m := range p.marker {
				clean = clean && !strings.Contains(lower, m)
			}
		}
		for _, w := range secretEnvWords {
			clean = clean && !(strings.Contains(s, "=") && strings.Contains(strings.ToUpper(s), w))
		}
		if clean && !strings.Contains(s, "reg-value-1234") && out != s {
			t.Fatalf("String changed text without a secret: %q -> %q", s, out)
		}
		if again := r.String(out); again != out {
			t.Fatalf("String is not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}
