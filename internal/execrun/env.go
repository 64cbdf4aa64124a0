package execrun

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/s-code-dev/s-code/safety"
)

// SafePath is the PATH a helper gives its commands unless configured otherwise.
const SafePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// RuleEnvNotAllowed is the rule id of a refused environment addition: a name off the
// allowlist, a name no policy may admit, or a value its name's rule refuses. The helper's
// Denied reply and audit record carry it, and the reason names each refused variable.
const RuleEnvNotAllowed = "env.not-allowed"

// defaultEnvAllow are the names a request may always add: the terminal, locale and time zone
// (a trailing "*" matches any rest of the name). Their values are checked by checkEnvValue.
// LANGUAGE and COLORTERM are the client's forwarded locale and terminal variables
// (helperclient.ForwardedEnv).
var defaultEnvAllow = []string{
	"TERM", "COLORTERM", "LANG", "LANGUAGE", "LC_*", "TZ", "COLUMNS", "LINES",
	"NO_COLOR", "CLICOLOR*", "CI",
}

// DefaultEnvAllow returns the allowlist every helper applies before its policy's names: TERM,
// COLORTERM, LANG, LANGUAGE, LC_*, TZ, COLUMNS, LINES, NO_COLOR, CLICOLOR*, CI (a fresh copy).
func DefaultEnvAllow() []string { return slices.Clone(defaultEnvAllow) }

// MatchEnvAllow reports whether name matches one of patterns: a pattern is a variable name,
// or a prefix followed by "*", which matches every name that starts with the prefix.
func MatchEnvAllow(patterns []string, name string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if prefix != "" && strings.HasPrefix(name, prefix) {
				return true
			}
		} else if p == name {
			return true
		}
	}
	return false
}

// ValidateEnvAllow checks a policy's allowlist patterns: each a variable name, or a non-empty
// name prefix followed by "*"; it names the first bad pattern.
func ValidateEnvAllow(patterns []string) error {
	for _, p := range patterns {
		name, _ := strings.CutSuffix(p, "*")
		if name == "" || len(name) > MaxEnvNameLen || !envNameRE.MatchString(name) {
			return fmt.Errorf("environment allowlist pattern %q is not a variable name or a name prefix followed by *", p)
		}
	}
	return nil
}

// Limits on requested environment additions.
const (
	MaxEnvVars     = 64
	MaxEnvNameLen  = 128
	MaxEnvValueLen = 32 << 10
)

// Base is the part of a command's environment the helper sets itself; a request cannot
// change it.
type Base struct {
	Path  string // PATH, e.g. SafePath
	Home  string // HOME: the home of the user the command runs as
	User  string // USER and LOGNAME
	Shell string // SHELL: the absolute path of the shell running the command
	// Allow are the names, beyond DefaultEnvAllow, that the helper's policy lets a request
	// add (see MatchEnvAllow); names CheckEnvName refuses stay refused.
	Allow []string
}

// RefusedVar is one environment addition the helper will not pass, and why.
type RefusedVar struct {
	Name   string
	Reason string
}

// EnvError lists the requested environment additions that were refused. A request with any
// refused addition runs nothing.
type EnvError struct {
	Refused []RefusedVar
}

// Error lists each refused name with its reason.
func (e *EnvError) Error() string {
	parts := make([]string, len(e.Refused))
	for i, r := range e.Refused {
		parts[i] = r.Name + " (" + r.Reason + ")"
	}
	return "refused environment: " + strings.Join(parts, "; ")
}

// ValidatePath checks a PATH value for children: every entry absolute and clean, none empty
// (an empty entry means the working directory).
func ValidatePath(p string) error {
	if p == "" {
		return fmt.Errorf("PATH is empty")
	}
	for _, d := range strings.Split(p, ":") {
		if d == "" || !filepath.IsAbs(d) || filepath.Clean(d) != d {
			return fmt.Errorf("PATH entry %q is not an absolute clean directory", d)
		}
	}
	return nil
}

var (
	envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// Values of the locale, terminal and time-zone variables: names only, no paths that a
	// library would open (glibc loads a locale or zone file from a value with a slash).
	localeValueRE = regexp.MustCompile(`^[A-Za-z0-9_.@+-]*$`)
	termValueRE   = regexp.MustCompile(`^[A-Za-z0-9_.+-]*$`)
	sizeValueRE   = regexp.MustCompile(`^[0-9]{1,5}$`)
	languageRE    = regexp.MustCompile(`^[A-Za-z0-9_.@+-]*(:[A-Za-z0-9_.@+-]*)*$`) // gettext's LANGUAGE list
	tzValueRE     = regexp.MustCompile(`^:?[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*([+-]?[0-9:,.A-Za-z<>]*)?$`)
)

// refusedExact names variables that make a program load code, run a command or change
// what the helper itself set. Sources: ld.so(8), glibc's unsecvars.h (the variables it
// strips for setuid programs), bash(1) INVOCATION and Shell Variables, git(1) ENVIRONMENT
// VARIABLES, perlrun(1), python(1), node(1), the JVM's launcher, CVE-2014-6271
// (Shellshock: BASH_FUNC_), CVE-2023-4911 (GLIBC_TUNABLES), CVE-2021-4034 (GCONV_PATH).
var refusedExact = map[string]string{
	"PATH": "set by the helper", "HOME": "set by the helper", "USER": "set by the helper",
	"LOGNAME": "set by the helper", "SHELL": "set by the helper",
	"BASH_ENV": "bash runs this file first", "ENV": "sh runs this file first",
	"SHELLOPTS": "changes shell behaviour", "BASHOPTS": "changes shell behaviour",
	"PS4": "expanded by xtrace", "PROMPT_COMMAND": "run by the shell", "IFS": "changes word splitting",
	"CDPATH": "changes cd", "GLOBIGNORE": "changes globbing", "EXECIGNORE": "changes command lookup",
	"BASH_XTRACEFD": "shell file descriptor", "INPUTRC": "readline init file", "HISTFILE": "shell history file",
	"POSIXLY_CORRECT": "changes shell and tool behaviour", "BASH_COMPAT": "changes shell behaviour",
	"GCONV_PATH": "loads code (CVE-2021-4034)", "GETCONF_DIR": "glibc unsecure variable",
	"GLIBC_TUNABLES": "loader tunables (CVE-2023-4911)", "HOSTALIASES": "glibc unsecure variable",
	"LOCALDOMAIN": "glibc unsecure variable", "LOCPATH": "loads locale files", "NIS_PATH": "glibc unsecure variable",
	"NLSPATH": "loads message catalogs", "RESOLV_HOST_CONF": "glibc unsecure variable",
	"RES_OPTIONS": "glibc unsecure variable", "TMPDIR": "glibc unsecure variable", "TZDIR": "loads zone files",
	"PERL5LIB": "loads code", "PERL5OPT": "interpreter options", "PERLLIB": "loads code", "PERL5DB": "runs code",
	"RUBYOPT": "interpreter options", "RUBYLIB": "loads code",
	"NODE_OPTIONS": "interpreter options", "NODE_PATH": "loads code", "NODE_REPL_EXTERNAL_MODULE": "loads code",
	"JAVA_TOOL_OPTIONS": "JVM options", "_JAVA_OPTIONS": "JVM options", "JDK_JAVA_OPTIONS": "JVM options",
	"CLASSPATH": "loads code", "LUA_PATH": "loads code", "LUA_CPATH": "loads code", "LUA_INIT": "runs code",
	"OPENSSL_CONF": "loads engines", "OPENSSL_ENGINES": "loads code",
	"EDITOR": "a command tools run", "VISUAL": "a command tools run", "PAGER": "a command tools run",
	"MANPAGER": "a command tools run", "BROWSER": "a command tools run", "LESSOPEN": "a command less runs",
	"LESSCLOSE": "a command less runs", "SSH_ASKPASS": "a command ssh runs", "SUDO_ASKPASS": "a command sudo runs",
	"SSH_AUTH_SOCK": "the user's SSH agent", "PROMPT_DIRTRIM": "changes shell behaviour",
	"CC": "a compiler command build tools run", "CXX": "a compiler command build tools run",
	"RUSTC_WRAPPER": "a command cargo runs", "RUSTC": "a command cargo runs", "MAKEFLAGS": "changes make",
	"GOFLAGS": "changes go", "GOTOOLCHAIN": "downloads and runs a toolchain", "CGO_LDFLAGS": "linker flags",
	"XDG_CONFIG_HOME": "git reads its config (core.fsmonitor, core.pager) below it",
	"XDG_CONFIG_DIRS": "programs read their config below it", "KUBECONFIG": "exec credential plugins run programs",
	"AWS_CONFIG_FILE": "credential_process runs a program", "GOENV": "a go env file (GOFLAGS=-toolexec)",
	"ZDOTDIR": "zsh runs its startup files", "PS0": "bash runs its command substitutions",
	"PS1": "bash runs its command substitutions", "PS2": "bash runs its command substitutions",
	"LESS": "less start-up commands (+!cmd)", "LESSKEY": "a lesskey file sets LESSOPEN",
	"LESSKEYIN": "a lesskey file sets LESSOPEN", "LESSEDIT": "a command less runs",
	"SYSTEMD_PAGER": "a command tools run", "GIT_PAGER": "a command tools run", "FCEDIT": "a command the shell runs",
	"SUDO_EDITOR": "a command tools run", "TERMINAL": "a command tools run", "EMACSLOADPATH": "loads code",
	"VIMINIT": "runs editor commands", "EXINIT": "runs editor commands", "MYVIMRC": "runs editor commands",
	"WGETRC": "wget config (use_askpass)", "CURL_HOME": "curl config", "GEM_PATH": "loads code",
	"GEM_HOME": "loads code", "BUNDLE_GEMFILE": "runs a Gemfile", "PHPRC": "php config (auto_prepend_file)",
	"PHP_INI_SCAN_DIR": "php config (auto_prepend_file)", "TCLLIBPATH": "loads code",
	"R_PROFILE": "runs code", "R_PROFILE_USER": "runs code",
}

// refusedPrefixes are whole families of variables with the same risk.
var refusedPrefixes = []struct{ prefix, reason string }{
	{"LD_", "dynamic loader injection (ld.so(8))"},
	{"DYLD_", "dynamic loader injection (dyld(1))"},
	{"BASH_FUNC_", "exported shell function (CVE-2014-6271)"},
	{"MALLOC_", "glibc unsecure variable"},
	{"GIT_", "git runs commands or reads config from these (git(1))"},
	{"PYTHON", "interpreter options and module paths (python(1))"},
	{"PERL", "interpreter options (perlrun(1))"},
	{"RUBY", "interpreter options"},
	{"NPM_CONFIG_", "npm runs scripts through these"},
	{"YARN_", "yarn runs scripts through these"},
}

// allowedPrefixExceptions are benign members of a refused family.
var allowedPrefixExceptions = map[string]bool{
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONIOENCODING": true, "PYTHONUTF8": true,
	"PYTHONHASHSEED": true,
}

// CheckEnvName returns why an environment addition named name can never be admitted, and
// whether it is so refused: an invalid name, this package's own list, then every name
// ShellSafety treats as injection (safety.EnvInjection), so the helper refuses at least what
// the verdict function denies. It is the floor under the allowlist: no policy can admit a name
// it refuses (see CheckEnvAddition). Names are compared case-sensitively except for the npm
// and yarn families, whose tools read them in any case.
func CheckEnvName(name string) (reason string, refused bool) {
	if len(name) > MaxEnvNameLen || !envNameRE.MatchString(name) {
		return "not a valid variable name", true
	}
	if r, ok := refusedExact[name]; ok {
		return r, true
	}
	if allowedPrefixExceptions[name] {
		return "", false
	}
	upper := strings.ToUpper(name)
	for _, p := range refusedPrefixes {
		if strings.HasPrefix(name, p.prefix) || ((p.prefix == "NPM_CONFIG_" || p.prefix == "YARN_") && strings.HasPrefix(upper, p.prefix)) {
			return p.reason, true
		}
	}
	if safety.EnvInjection(name) {
		return "ShellSafety's env.injection rule: it can make a program load or run other code", true
	}
	return "", false
}

// CheckEnvAddition returns why a request may not add the variable name, and whether it is
// refused: a name CheckEnvName refuses, or a name that matches neither DefaultEnvAllow nor one
// of the patterns of allow (the helper's policy: see MatchEnvAllow). Programs read options and
// commands from many variables (archivers, pagers, editors, interpreters' startup files, git):
// an allowlist closes that class instead of chasing its names.
func CheckEnvAddition(name string, allow []string) (reason string, refused bool) {
	if r, bad := CheckEnvName(name); bad {
		return r, true
	}
	if MatchEnvAllow(defaultEnvAllow, name) || MatchEnvAllow(allow, name) {
		return "", false
	}
	return "not on the allowlist (terminal, locale and time zone variables, and the names the helper's policy adds)", true
}

// checkEnvValue returns why value is refused for name, if it is.
func checkEnvValue(name, value string) (string, bool) {
	switch {
	case len(value) > MaxEnvValueLen:
		return fmt.Sprintf("value longer than %d bytes", MaxEnvValueLen), true
	case strings.IndexByte(value, 0) >= 0:
		return "value contains a NUL byte", true
	case name == "LANGUAGE" && !languageRE.MatchString(value):
		return "locale value must be a list of locale names, not paths", true
	case (name == "LANG" || strings.HasPrefix(name, "LC_")) && !localeValueRE.MatchString(value):
		return "locale value must be a locale name, not a path", true
	case (name == "TERM" || name == "COLORTERM") && !termValueRE.MatchString(value):
		return "terminal value must be a terminal name, not a path", true
	case (name == "COLUMNS" || name == "LINES") && !sizeValueRE.MatchString(value):
		return "terminal size must be a number", true
	case strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "value contains a control character", true
	case name == "TZ" && value != "" && (!tzValueRE.MatchString(value) || strings.Contains(value, "..")):
		return "time zone must be a zone name, not a path", true
	}
	return "", false
}

// BuildEnv returns the complete environment for a command: base, then the requested
// additions in name order. It fails with *EnvError (rule RuleEnvNotAllowed), listing every
// refused addition, when any addition is refused by CheckEnvAddition (with base.Allow) or by
// its value's rule, or when there are more than MaxEnvVars of them; nothing is stripped
// silently. PATH is not an addition: it is base.Path (see MergePath).
func BuildEnv(base Base, additions map[string]string) ([]string, error) {
	if err := ValidatePath(base.Path); err != nil {
		return nil, fmt.Errorf("execrun: base environment: %w", err)
	}
	env := []string{"PATH=" + base.Path, "HOME=" + base.Home, "USER=" + base.User, "LOGNAME=" + base.User, "SHELL=" + base.Shell}
	names := make([]string, 0, len(additions))
	for n := range additions {
		names = append(names, n)
	}
	sort.Strings(names)
	var refused []RefusedVar
	if len(names) > MaxEnvVars {
		refused = append(refused, RefusedVar{Name: fmt.Sprintf("(%d variables)", len(names)), Reason: fmt.Sprintf("more than %d additions", MaxEnvVars)})
	}
	for _, n := range names {
		if r, bad := CheckEnvAddition(n, base.Allow); bad {
			refused = append(refused, RefusedVar{Name: n, Reason: r})
			continue
		}
		if r, bad := checkEnvValue(n, additions[n]); bad {
			refused = append(refused, RefusedVar{Name: n, Reason: r})
			continue
		}
		env = append(env, n+"="+additions[n])
	}
	if len(refused) > 0 {
		return nil, &EnvError{Refused: refused}
	}
	return env, nil
}
