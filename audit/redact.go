package audit

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MinSecretLen is the shortest secret value Options.Secrets accepts, in bytes: shorter values
// would blank out ordinary words of every record.
const MinSecretLen = 4

// ErrSecretTooShort is returned by Open for a registered secret shorter than MinSecretLen.
var ErrSecretTooShort = errors.New("registered secret value is shorter than 4 bytes")

// redactPattern is one class of secret found by its shape.
type redactPattern struct {
	name   string
	marker []string // cheap pre-check: the pattern can only match if one of these occurs (lower case)
	re     *regexp.Regexp
	repl   string // replacement, may name groups
}

// redactPatterns are the secrets found by shape. Sources: the formats GitHub, GitLab, Slack
// and AWS document for their credentials, RFC 6750 (bearer tokens), RFC 3986 userinfo.
var redactPatterns = []redactPattern{
	{"private-key", []string{"private key-----"}, regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|$)`), "[REDACTED:private-key]"},
	{"aws-access-key", []string{"akia", "asia"}, regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), "[REDACTED:aws-access-key]"},
	{"github-token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`), "[REDACTED:github-token]"},
	{"github-pat", []string{"github_pat_"}, regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), "[REDACTED:github-token]"},
	{"gitlab-token", []string{"glpat-"}, regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`), "[REDACTED:gitlab-token]"},
	{"slack-token", []string{"xox"}, regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{8,}`), "[REDACTED:slack-token]"},
	{"bearer", []string{"bearer"}, regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{6,}`), "${1}[REDACTED]"},
	{"url-password", []string{"://"}, regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]*:)[^/\s@'"]+@`), "${1}[REDACTED]@"},
	{"assignment", []string{"pass", "pwd", "token", "secret", "key"}, regexp.MustCompile(`(?i)\b((?:--?)?(?:password|passwd|passphrase|pwd|token|secret|api[_-]?key|access[_-]?key|secret[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token)\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s&;'"]+)`), "${1}[REDACTED]"},
	{"password-flag", []string{"--pass", "--token", "--secret"}, regexp.MustCompile(`(?i)(--(?:password|passwd|token|secret)\s+)("[^"]*"|'[^']*'|\S+)`), "${1}[REDACTED]"},
}

// redactor replaces secrets and escapes control characters in the strings of a record.
type redactor struct {
	secrets []string // registered exact values, longest first
}

func newRedactor(secrets []string) (*redactor, error) {
	r := &redactor{}
	for _, s := range secrets {
		if len(s) < MinSecretLen {
			return nil, fmt.Errorf("audit: Options.Secrets: %w", ErrSecretTooShort)
		}
		r.secrets = append(r.secrets, s)
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r, nil
}

// clean returns s with secrets replaced and then control characters escaped.
func (r *redactor) clean(s string) string {
	if s == "" {
		return s
	}
	return Escape(r.redact(s))
}

// redact replaces the registered secret values and the secrets found by shape.
func (r *redactor) redact(s string) string {
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "[REDACTED:registered]")
		}
	}
	lower := strings.ToLower(s)
	for _, p := range redactPatterns {
		hit := false
		for _, m := range p.marker {
			if strings.Contains(lower, m) {
				hit = true
				break
			}
		}
		if hit {
			s = p.re.ReplaceAllString(s, p.repl)
			lower = strings.ToLower(s)
		}
	}
	return s
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
	if rec.Approval != nil {
		a := *rec.Approval
		a.Channel, a.Digest, a.Nonce = r.clean(a.Channel), r.clean(a.Digest), r.clean(a.Nonce)
		rec.Approval = &a
	}
	rec.Verdict = r.verdict(rec.Verdict)
	if rec.Env != nil {
		env := make([]string, len(rec.Env))
		for i, kv := range rec.Env {
			env[i] = r.clean(redactEnvValue(kv))
		}
		rec.Env = env
	}
}

// secretEnvWords are the parts of a variable's name that mark its value as a secret.
var secretEnvWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "API_KEY", "APIKEY", "PRIVATE", "AUTH"}

// redactEnvValue returns the NAME=value pair kv with its value replaced by a marker when the
// name says it holds a secret (GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, …).
func redactEnvValue(kv string) string {
	name, _, ok := strings.Cut(kv, "=")
	if !ok {
		return kv
	}
	upper := strings.ToUpper(name)
	for _, w := range secretEnvWords {
		if strings.Contains(upper, w) {
			return name + "=[REDACTED:env-secret]"
		}
	}
	return kv
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
