package audit

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/s-code-dev/s-code/internal/redact"
)

// MinSecretLen is the shortest secret value Options.Secrets accepts, in bytes
// (redact.MinSecretLen).
const MinSecretLen = redact.MinSecretLen

// ErrSecretTooShort is returned by Open for a registered secret shorter than MinSecretLen.
var ErrSecretTooShort = redact.ErrSecretTooShort

// redactor replaces secrets (internal/redact) and escapes control characters in the strings
// of a record.
type redactor struct {
	r *redact.Redactor
}

func newRedactor(secrets []string) (*redactor, error) {
	r, err := redact.New(secrets)
	if err != nil {
		return nil, fmt.Errorf("audit: Options.Secrets: %w", err)
	}
	return &redactor{r: r}, nil
}

// clean returns s with secrets replaced and then control characters escaped.
func (r *redactor) clean(s string) string {
	if s == "" {
		return s
	}
	return Escape(r.r.String(s))
}

// record redacts and escapes every caller-supplied string of rec in place.
func (r *redactor) record(rec *Record) {
	rec.RequestID = r.clean(rec.RequestID)
	rec.Helper = r.clean(rec.Helper)
	rec.Command = r.clean(rec.Command)
	rec.Cwd = r.clean(rec.Cwd)
	rec.Workspace = r.clean(rec.Workspace)
	rec.Reason = r.clean(rec.Reason)
	rec.Signal = r.clean(rec.Signal)
	rec.Kind = Kind(r.clean(string(rec.Kind)))
	if rec.Peer != nil {
		p := *rec.Peer
		p.Exe = r.clean(p.Exe)
		rec.Peer = &p
	}
	if rec.Quarantined != nil {
		q := make([]string, len(rec.Quarantined))
		for i, p := range rec.Quarantined {
			q[i] = r.clean(p)
		}
		rec.Quarantined = q
	}
	if rec.ChildCalls != nil {
		cc := make([]ChildCall, len(rec.ChildCalls))
		for i, c := range rec.ChildCalls {
			c.Tool, c.Arguments, c.Error = r.clean(c.Tool), r.clean(c.Arguments), r.clean(c.Error)
			cc[i] = c
		}
		rec.ChildCalls = cc
	}
	rec.Client = r.verdict(rec.Client)
	rec.Mode = r.clean(rec.Mode)
	rec.PlanDigest = r.clean(rec.PlanDigest)
	if rec.ExtraWritable != nil {
		ew := make([]string, len(rec.ExtraWritable))
		for i, p := range rec.ExtraWritable {
			ew[i] = r.clean(p)
		}
		rec.ExtraWritable = ew
	}
	rec.Turn = r.clean(rec.Turn)
	if rec.Applied != nil {
		ap := make([]string, len(rec.Applied))
		for i, p := range rec.Applied {
			ap[i] = r.clean(p)
		}
		rec.Applied = ap
	}
	if rec.Approval != nil {
		a := *rec.Approval
		a.Channel, a.Digest, a.Nonce = r.clean(a.Channel), r.clean(a.Digest), r.clean(a.Nonce)
		rec.Approval = &a
	}
	rec.Verdict = r.verdict(rec.Verdict)
	if rec.Env != nil {
		env := make([]string, len(rec.Env))
		for i, kv := range rec.Env {
			env[i] = Escape(r.r.EnvPair(kv))
		}
		rec.Env = env
	}
}

func (r *redactor) verdict(v *VerdictSummary) *VerdictSummary {
	if v == nil {
		return nil
	}
	c := VerdictSummary{Decision: r.clean(v.Decision)}
	for _, id := range v.Rules {
		c.Rules = append(c.Rules, r.clean(id))
	}
	return &c
}

// RedactText returns s as the audit log would write it: known secret patterns (tokens,
// keys, passwords in URLs) replaced by markers and control characters escaped (Escape). The
// approval card uses it, so a card shows what the log will show.
func RedactText(s string) string {
	r, err := newRedactor(nil)
	if err != nil {
		return Escape(s)
	}
	return r.clean(s)
}

// Escape returns s with every byte or rune that a terminal or a log reader could take for
// something other than text written as a visible escape: C0 controls (ESC, CR, BS …), DEL
// and C1 controls as \xNN, invalid UTF-8 bytes as \xNN, and Unicode format characters
// (bidirectional overrides, zero-width characters; CVE-2021-42574) and line or paragraph
// separators as \u{NNNN}. Tab and newline are escaped too (\t, \n), so a record is one line
// on a terminal. Other text, backslashes included, is kept as it is. This is the defence
// against log and terminal injection of the class of sudo's CVE-2023-28486/28487.
func Escape(s string) string {
	if isPrintableASCII(s) {
		return s
	}
	clean := true
	for _, c := range s {
		if needsEscape(c) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, c)
		case needsEscape(c):
			fmt.Fprintf(&b, `\u{%04x}`, c)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(c rune) bool {
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == utf8.RuneError ||
		c == '\u2028' || c == '\u2029' || unicode.Is(unicode.Cf, c)
}

// isPrintableASCII reports whether s holds only the bytes 0x20 to 0x7e (nothing to escape).
func isPrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
