package execrun

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/s-code-dev/s-code/safety"
)

// SafePath is the PATH a helper gives its commands unless configured otherwise.
const SafePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

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

// CheckEnvName returns why an environment addition named name is refused, and whether it
// is: this package's own list, then every name ShellSafety treats as injection
// (safety.EnvInjection), so the helper refuses at least what the verdict function denies. Names are compared case-sensitively except for the npm and yarn families, whose
// tools read them in any case.
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

// checkEnvValue returns why value is refused for name, if it is.
func checkEnvValue(name, value string) (string, bool) {
	switch {
	case len(value) > MaxEnvValueLen:
		return fmt.Sprintf("value longer than %d bytes", MaxEnvValueLen), true
	case strings.IndexByte(value, 0) >= 0:
		return "value contains a NUL byte", true
	case (name == "LANG" || name == "LANGUAGE" || strings.HasPrefix(name, "LC_")) && !localeValueRE.MatchString(value):
		return "locale value must be a locale name, not a path", true
	case name == "TERM" && !termValueRE.MatchString(value):
		return "terminal value must be a terminal name, not a path", true
	case name == "TZ" && value != "" && (!tzValueRE.MatchString(value) || strings.Contains(value, "..")):
		return "time zone must be a zone name, not a path", true
	}
	return "", false
}

// BuildEnv returns the complete environment for a command: base, then the requested
// additions in name order. It fails with *EnvError, listing every refused addition, when
// any addition is refused by CheckEnvName or by its value's rule, or when there are more
// than MaxEnvVars of them; nothing is stripped silently.
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
		if r, bad := CheckEnvName(n); bad {
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
