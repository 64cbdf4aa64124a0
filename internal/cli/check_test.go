package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/s-code-dev/s-code/safety"
)

// TestVerdictJSONShape checks that writeJSONLine writes a verdict with the same JSON
// value as safety.Verdict's own MarshalJSON, and leaves <, > and & unescaped.
func TestVerdictJSONShape(t *testing.T) {
	for name, v := range map[string]safety.Verdict{
		"no findings": {Decision: safety.Allow},
		"findings": {Decision: safety.Deny, Findings: []safety.Finding{
			{Rule: "redirect.outside-workspace", Decision: safety.Deny, Command: "echo x > /etc/hosts && ls", Offset: 5, Message: "m <&>"},
			{Rule: "a.b", Decision: safety.Ask, Command: "ls", Offset: 0, Message: "n"},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := writeJSONLine(&buf, v); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			if !bytes.HasSuffix(got, []byte("\n")) || bytes.Count(got, []byte("\n")) != 1 {
				t.Fatalf("want one line, got %q", got)
			}
			if bytes.Contains(got, []byte(`\u003e`)) || bytes.Contains(got, []byte(`\u0026`)) {
				t.Errorf("HTML-escaped output: %s", got)
			}
			var a, b any
			if err := json.Unmarshal(want, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("shape differs from Verdict.MarshalJSON:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestCaretLines(t *testing.T) {
	for _, tc := range []struct {
		name            string
		command         string
		off, n, cols    int
		line            int
		src, wantCarets string
	}{
		{"whole", "rm -rf /", 0, 8, 0, 1, "rm -rf /", "^^^^^^^^"},
		{"second statement", "echo ok; rm -rf /", 9, 8, 0, 1, "echo ok; rm -rf /", "         ^^^^^^^^"},
		{"second line", "echo control\nrm -rf /var", 13, 11, 0, 2, "rm -rf /var", "^^^^^^^^^^^"},
		{"cut at line end", "bash <<EOF\nrm -rf /\nEOF", 0, 25, 0, 1, "bash <<EOF", "^^^^^^^^^^"},
		{"empty command text", "ls", 1, 0, 0, 1, "ls", " ^"},
		{"offset past end", "ls", 9, 3, 0, 1, "ls", "  ^"},
		{"escapes keep columns", "a\tb\rc; rm x", 7, 4, 0, 1, `a\tb\rc; rm x`, "         ^^^^"},
		{"window at the start", "ls " + strings.Repeat("a", 100), 0, 2, 20, 1, "ls " + strings.Repeat("a", 17) + "…", "^^"},
		{"window in the middle", strings.Repeat("a", 50) + "; rm x; " + strings.Repeat("b", 50), 52, 4, 20, 1, "…aaa; rm x; bbbbbbbbb…", "      ^^^^"},
		{"window at the end", strings.Repeat("a", 50) + "; rm x", 52, 4, 20, 1, "…" + strings.Repeat("a", 14) + "; rm x", strings.Repeat(" ", 17) + "^^^^"},
		{"bidi override", "echo \u202ehi; rm x", 12, 4, 0, 1, `echo \u202ehi; rm x`, "               ^^^^"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, src, carets := caretLines(tc.command, tc.off, tc.n, tc.cols)
			if line != tc.line || src != tc.src || carets != tc.wantCarets {
				t.Errorf("caretLines(%q, %d, %d) =\n %d %q\n   %q\nwant\n %d %q\n   %q", tc.command, tc.off, tc.n, line, src, carets, tc.line, tc.src, tc.wantCarets)
			}
		})
	}
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"ls -la":           "ls -la",
		"ls\r":             `ls\r`,
		"a\x1b[2Kb":        `a\x1b[2Kb`,
		"x\u200by":         `x\u200by`,
		"\ufeffhi":         `\ufeffhi`,
		"a\u00a0b":         `a\u00a0b`,
		"caf\u00e9 \u65e5": "caf\u00e9 \u65e5",
		"bad\xffutf8":      `bad\xffutf8`,
		"del\x7f":          `del\x7f`,
		"nel\u0085":        `nel\u0085`,
	} {
		if got := visible(in); got != want {
			t.Errorf("visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolvePlace(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "src", "pkg")
	wt := filepath.Join(root, "worktree")
	plain := filepath.Join(root, "plain")
	for _, d := range []string{filepath.Join(repo, ".git"), sub, wt, plain} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A linked worktree (or submodule) has a .git file, not a directory.
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+repo+"/.git/worktrees/w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, procWd, workspace, cwd string
		wantWS, wantCwd              string
	}{
		{"git top-level from a subdirectory", sub, "", "", repo, sub},
		{"worktree .git file", wt, "", "", wt, wt},
		{"no repository", plain, "", "", plain, plain},
		{"explicit workspace containing the cwd", sub, repo + "/src/", "", repo + "/src", sub},
		{"explicit workspace elsewhere", plain, repo, "", repo, repo},
		{"relative workspace and cwd", repo, "src/../src", "pkg/..", repo + "/src", repo},
		{"explicit cwd outside", sub, repo, "/tmp", repo, "/tmp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, cwd := resolvePlace(tc.procWd, tc.workspace, tc.cwd)
			if ws != tc.wantWS || cwd != tc.wantCwd {
				t.Errorf("resolvePlace(%q, %q, %q) = %q, %q; want %q, %q", tc.procWd, tc.workspace, tc.cwd, ws, cwd, tc.wantWS, tc.wantCwd)
			}
		})
	}
}

func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", maxCommandBytes+10)
	r := bufio.NewReaderSize(strings.NewReader("a\r\n\n"+long+"\nb\nlast"), 64<<10)
	type res struct {
		line string
		err  error
	}
	var got []res
	for {
		l, err := readLine(r)
		if errors.Is(err, io.EOF) && l == nil {
			break
		}
		got = append(got, res{string(l), err})
		if errors.Is(err, io.EOF) {
			break
		}
	}
	want := []res{{"a\r", nil}, {"", nil}, {"", errLineTooLong}, {"b", nil}, {"last", io.EOF}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readLine: got %v, want %v", got, want)
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
		want  []string
	}{
		{"", 10, []string{""}},
		{"one two three", 20, []string{"one two three"}},
		{"one two three", 7, []string{"one two", "three"}},
		{"a verylongword b", 5, []string{"a", "verylongword", "b"}},
		{"x  y", 1, []string{"x", "y"}},
	} {
		if got := wrap(tc.s, tc.width); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.s, tc.width, got, tc.want)
		}
	}
}

// TestCardColour checks that a colouring palette paints the decision words and the caret
// line, and that the plain palette writes no escape sequence at all.
func TestCardColour(t *testing.T) {
	v := safety.Verdict{Decision: safety.Deny, Findings: []safety.Finding{
		{Rule: "destructive.rm-root", Decision: safety.Deny, Command: "rm -rf /", Offset: 9, Message: "no"},
		{Rule: "a.b", Decision: safety.Ask, Command: "echo ok", Offset: 0, Message: "m"},
	}}
	var plain, colour bytes.Buffer
	if err := writeCard(&plain, "echo ok; rm -rf /", v, palette{}, 80); err != nil {
		t.Fatal(err)
	}
	if err := writeCard(&colour, "echo ok; rm -rf /", v, palette{on: true}, 80); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b") {
		t.Errorf("plain card holds an escape sequence:\n%s", plain.String())
	}
	for _, want := range []string{ansiBold + ansiRed + "deny" + ansiReset, ansiYellow + "ask" + ansiReset, ansiBold + ansiRed + "^^^^^^^^" + ansiReset} {
		if !strings.Contains(colour.String(), want) {
			t.Errorf("coloured card lacks %q:\n%q", want, colour.String())
		}
	}
	// Colour changes nothing but the escape sequences.
	stripped := colour.String()
	for _, code := range []string{ansiReset, ansiBold, ansiDim, ansiRed, ansiGreen, ansiYellow} {
		stripped = strings.ReplaceAll(stripped, code, "")
	}
	if stripped != plain.String() {
		t.Errorf("coloured card differs from the plain one beyond colour:\n%s\n---\n%s", stripped, plain.String())
	}
}
