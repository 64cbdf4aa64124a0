package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/s-code-dev/s-code/safety"
)

// palette is the ANSI colouring of a verdict card; the zero value prints plain text.
type palette struct {
	on bool
}

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
)

// colorFor returns a colouring palette when w is a terminal and NO_COLOR
// (https://no-color.org) is unset, else the plain one.
func colorFor(w io.Writer) palette {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return palette{}
	}
	return palette{on: term.IsTerminal(int(f.Fd()))}
}

func (p palette) paint(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return code + s + ansiReset
}

// decision paints a decision word: green allow, yellow ask, bold red deny.
func (p palette) decision(d safety.Decision) string {
	switch d {
	case safety.Allow:
		return p.paint(ansiGreen, d.String())
	case safety.Ask:
		return p.paint(ansiYellow, d.String())
	default:
		return p.paint(ansiBold+ansiRed, d.String())
	}
}

// writeCard writes the readable verdict card for command: a header with the decision,
// then each finding with its decision, rule id and message, and the line of the command
// that holds the finding's offset with a caret line under the part the finding is about.
// Messages are wrapped at width columns. Control, invisible and bidi characters of the
// command and the messages are shown as escapes (\r, \u202e, …), so the card cannot be
// rewritten by the text it shows.
func writeCard(w io.Writer, command string, v safety.Verdict, p palette, width int) error {
	var b strings.Builder
	switch n := len(v.Findings); n {
	case 0:
		fmt.Fprintf(&b, "%s: no findings\n", p.decision(v.Decision))
	case 1:
		fmt.Fprintf(&b, "%s: 1 finding\n", p.decision(v.Decision))
	default:
		fmt.Fprintf(&b, "%s: %d findings\n", p.decision(v.Decision), n)
	}
	for _, f := range v.Findings {
		b.WriteByte('\n')
		fmt.Fprintf(&b, "  %s  %s\n", p.decision(f.Decision), p.paint(ansiBold, visible(f.Rule)))
		for _, ml := range strings.Split(f.Message, "\n") {
			for _, wl := range wrap(visible(ml), width-4) {
				fmt.Fprintf(&b, "    %s\n", wl)
			}
		}
		lineNo, src, carets := caretLines(command, f.Offset, len(f.Command), width-8)
		num := fmt.Sprintf("%d", lineNo)
		fmt.Fprintf(&b, "    %s | %s\n", p.paint(ansiDim, num), src)
		marks := strings.TrimLeft(carets, " ")
		fmt.Fprintf(&b, "    %s | %s%s\n", strings.Repeat(" ", len(num)), carets[:len(carets)-len(marks)], p.paint(ansiBold+ansiRed, marks))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// caretLines returns the 1-based number of the line of command that holds byte offset
// off, that line shown with visible escapes, and a caret line marking n bytes from off
// (at least one caret; cut at the end of the line). An offset outside the command marks
// the end of the last line. When the shown line is wider than maxCols runes (and maxCols is
// positive), only a window of maxCols runes around the start of the mark is shown, with "…"
// where the line was cut.
func caretLines(command string, off, n, maxCols int) (lineNo int, src, carets string) {
	if off < 0 || off > len(command) {
		off = len(command)
	}
	start := strings.LastIndexByte(command[:off], '\n') + 1
	end := len(command)
	if i := strings.IndexByte(command[off:], '\n'); i >= 0 {
		end = off + i
	}
	lineNo = strings.Count(command[:start], "\n") + 1
	stop := off + n
	if stop > end {
		stop = end
	}
	pre := []rune(visible(command[start:off]))
	mark := []rune(visible(command[off:stop]))
	line := append(append(pre[:len(pre):len(pre)], mark...), []rune(visible(command[stop:end]))...)
	cs, ce := len(pre), len(pre)+max(len(mark), 1)
	a, b := 0, len(line)
	if maxCols > 0 && len(line) > maxCols {
		a = max(cs-maxCols/4, 0)
		b = a + maxCols
		if b > len(line) {
			b = len(line)
			a = max(b-maxCols, 0)
		}
	}
	var sb strings.Builder
	lead := 0
	if a > 0 {
		sb.WriteString("…")
		lead = 1
	}
	sb.WriteString(string(line[a:b]))
	if b < len(line) {
		sb.WriteString("…")
	}
	width := max(min(ce, max(b, cs+1))-cs, 1)
	return lineNo, sb.String(), strings.Repeat(" ", lead+cs-a) + strings.Repeat("^", width)
}

// visible returns s with every byte or rune that a terminal would not show as itself
// (control characters including tab, invisible format characters such as zero-width
// spaces and bidi overrides, line and paragraph separators, invalid UTF-8) replaced by a
// Go-style escape, so that each displayed rune takes one column.
func visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x80 && !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && (!unicode.IsPrint(r) || unicode.Is(unicode.Cf, r)):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// cardWidth returns the column width to wrap a card's messages at: the terminal's width,
// at most 100, or 80 when w is not a terminal; never less than 40.
func cardWidth(w io.Writer) int {
	n := terminalWidth(w)
	switch {
	case n <= 0:
		return 80
	case n > 100:
		return 100
	case n < 40:
		return 40
	}
	return n
}

// wrap splits s at spaces into lines of at most width runes; a word longer than width
// stays whole on its own line.
func wrap(s string, width int) []string {
	words := strings.Fields(s)
	if len(words) == 0 {
		return []string{""}
	}
	var lines []string
	cur := words[0]
	for _, w := range words[1:] {
		if utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w) > width {
			lines = append(lines, cur)
			cur = w
			continue
		}
		cur += " " + w
	}
	return append(lines, cur)
}
