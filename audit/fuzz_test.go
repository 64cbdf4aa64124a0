package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzEscape checks that Escape never lets a control, format or invalid byte through.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "ls -la", "echo \x1b[2J", "a\rb", "\u202egnp", "\xff\xfe", "\u009b1m", "tab\there", "ok\\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if !utf8.ValidString(e) {
			t.Fatalf("Escape(%q) = %q is not UTF-8", s, e)
		}
		for _, c := range e {
			if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || unicode.Is(unicode.Cf, c) || c == '\u2028' || c == '\u2029' {
				t.Fatalf("Escape(%q) = %q keeps %U", s, e, c)
			}
		}
		if !strings.ContainsAny(s, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f") && utf8.ValidString(s) && e != s && !strings.ContainsFunc(s, needsEscape) {
			t.Fatalf("Escape changed clean text %q to %q", s, e)
		}
	})
}

// FuzzVerifyLine appends arbitrary bytes as a line to a real, sealed log: Verify must not
// panic, and must never call the result whole unless the bytes are empty.
func FuzzVerifyLine(f *testing.F) {
	base := filepath.Join(f.TempDir(), "base")
	makeLog(f, base, 12, Options{SealEvery: 5})
	files := logFiles(f, base)
	orig, err := os.ReadFile(files[0])
	if err != nil {
		f.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(orig), "\n"), "\n")
	f.Add([]byte(lines[3]))
	f.Add([]byte(`{"seq":15,"time":"x","kind":"exit","prev":"","hash":"` + strings.Repeat("a", 64) + `"}`))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, extra []byte) {
		if len(extra) == 0 || strings.ContainsRune(string(extra), '\n') {
			return
		}
		dir := t.TempDir()
		data := append(append(append([]byte(nil), orig...), extra...), '\n')
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(files[0])), data, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, err := Verify(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Whole {
			t.Fatalf("log with an extra line %q verifies whole", extra)
		}
	})
}
