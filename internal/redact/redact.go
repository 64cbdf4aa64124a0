package redact

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// MinSecretLen is the shortest registered secret value New accepts, in bytes: shorter values
// would blank out ordinary words.
const MinSecretLen = 4

// ErrSecretTooShort is returned by New for a registered secret shorter than MinSecretLen.
var ErrSecretTooShort = errors.New("registered secret value is shorter than 4 bytes")

// Markers that replace what was removed. Each names the class of secret, never its value.
const (
	MarkRegistered = "[REDACTED:registered]" // a value registered with New
	MarkEnvSecret  = "[REDACTED:env-secret]" // the value of a variable whose name says secret
	Mark           = "[REDACTED]"            // the value part of an assignment, flag or header
)

// pattern is one class of secret found by its shape. A pattern matches the secret and, at
// most, the word that introduces it (kept through a group): never text after the secret, so
// a redacted command keeps every other word. No pattern can run to the end of the string
// unless the secret does.
type pattern struct {
	name   string
	marker []string // cheap pre-check: the pattern can only match if one of these occurs (lower case)
	re     *regexp.Regexp
	repl   string // replacement, may name groups
}

// value is the value of an assignment or a flag: a quoted string up to its closing quote, or,
// when the quote is not closed, the rest of that word; else the word up to a shell
// separator.
const value = `("[^"]*"|'[^']*'|"[^"\s]*|'[^'\s]*|[^\s&;|<>()'"]+)`

// patterns are the secrets found by shape. Sources: the formats GitHub, GitLab, Slack and
// AWS document for their credentials, RFC 7468 (PEM private keys), RFC 6750 (bearer tokens),
// RFC 3986 userinfo. They are compiled on first use (compiling them is about a million
// instructions, which every s-code process would otherwise pay at start, `s-code version`
// included).
var patterns = sync.OnceValue(func() []pattern {
	return []pattern{
		// A whole PEM block when its END line is there; else the BEGIN line and the base64
		// body after it (letters, digits, + / =, line breaks, and \n escapes), which ends at
		// the first other byte (a quote, a space, a redirection).
		{"private-key", []string{"private key-----"}, regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:(?s:.*?)-----END[A-Z0-9 ]*PRIVATE KEY-----|(?:[A-Za-z0-9+/=\r\n]|\\[nr])*)`), "[REDACTED:private-key]"},
		{"aws-access-key", []string{"akia", "asia"}, regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), "[REDACTED:aws-access-key]"},
		{"github-token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`), "[REDACTED:github-token]"},
		{"github-pat", []string{"github_pat_"}, regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), "[REDACTED:github-token]"},
		{"gitlab-token", []string{"glpat-"}, regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`), "[REDACTED:gitlab-token]"},
		{"slack-token", []string{"xox"}, regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{8,}`), "[REDACTED:slack-token]"},
		{"bearer", []string{"bearer"}, regexp.MustCompile(`(?i)\b(bearer[ \t]+)[A-Za-z0-9._~+/=-]{6,}`), "${1}" + Mark},
		{"url-password", []string{"://"}, regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]*:)[^/\s@'"]+@`), "${1}" + Mark + "@"},
		{"assignment", []string{"pass", "pwd", "token", "secret", "key"}, regexp.MustCompile(`(?i)\b((?:--?)?(?:password|passwd|passphrase|pwd|token|secret|api[_-]?key|access[_-]?key|secret[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token)[ \t]*[=:][ \t]*)` + value), "${1}" + Mark},
		{"password-flag", []string{"--pass", "--token", "--secret"}, regexp.MustCompile(`(?i)(--(?:password|passwd|token|secret)[ \t]+)` + value), "${1}" + Mark},
		// An HTTP Authorization header: the credentials after the scheme (Basic, Token, Digest
		// …; RFC 9110 11.6.2). Bearer is the pattern above.
		{"authorization", []string{"authorization"}, regexp.MustCompile(`(?i)\b(authorization[ \t]*:[ \t]*[A-Za-z][A-Za-z0-9_-]*[ \t]+)[^\s'"]+`), "${1}" + Mark},
		// curl's and wget's user:password (-u, --user, --proxy-user): the password.
		{"user-password", []string{"-u", "--user", "--proxy-user"}, regexp.MustCompile(`(^|[ \t])((?:-u|--user|--proxy-user)(?:[ \t]+|=)?['"]?[^\s:'"@]+:)[^\s'"]+`), "${1}${2}" + Mark},
	}
})

// shellAssignment is a NAME=value word (a shell assignment, export NAME=value, env
// NAME=value): its value is a secret when the name says so (SecretName), as for the
// environment (EnvPair). \b alone would not do: GITHUB_TOKEN holds no word boundary
// before TOKEN, so the assignment pattern misses it.
var shellAssignment = regexp.MustCompile(`(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=` + value)

// Redactor replaces secrets in text: registered exact values and the secrets found by
// shape. Its methods are safe for concurrent use. The zero value redacts by shape only.
type Redactor struct {
	secrets []string // registered exact values, longest first
}

// New returns a Redactor that also replaces each of secrets (exact values) with
// MarkRegistered. It fails with ErrSecretTooShort for a value shorter than MinSecretLen.
func New(secrets []string) (*Redactor, error) {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) < MinSecretLen {
			return nil, fmt.Errorf("redact: %w", ErrSecretTooShort)
		}
		r.secrets = append(r.secrets, s)
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r, nil
}

// String returns s with the registered values and the secrets found by shape replaced by
// markers. Everything else of s is kept byte for byte.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	if r != nil {
		for _, v := range r.secrets {
			if strings.Contains(s, v) {
				s = strings.ReplaceAll(s, v, MarkRegistered)
			}
		}
	}
	lower := strings.ToLower(s)
	for _, p := range patterns() {
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
	if strings.IndexByte(s, '=') >= 0 {
		s = shellAssignment.ReplaceAllStringFunc(s, func(m string) string {
			i := strings.IndexByte(m, '=')
			name := strings.TrimLeft(m[:i], " \t\n\r;&|(")
			if !SecretName(name) || strings.HasPrefix(m[i+1:], "[REDACTED") {
				return m
			}
			return m[:i+1] + MarkEnvSecret
		})
	}
	return s
}

// secretEnvWords are the parts of a variable's name that mark its value as a secret.
var secretEnvWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "API_KEY", "APIKEY", "PRIVATE", "AUTH"}

// SecretName reports whether a variable's name says its value is a secret (GITHUB_TOKEN,
// AWS_SECRET_ACCESS_KEY, DB_PASSWORD, …).
func SecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, w := range secretEnvWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return false
}

// EnvPair returns the NAME=value pair kv with its value replaced by MarkEnvSecret when
// SecretName(NAME), and otherwise with the secrets in it redacted (String).
func (r *Redactor) EnvPair(kv string) string {
	name, _, ok := strings.Cut(kv, "=")
	if ok && SecretName(name) {
		return name + "=" + MarkEnvSecret
	}
	return r.String(kv)
}
