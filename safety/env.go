package safety

import "strings"

// injectionExact lists environment variables that make programs load or run other code.
// Sources: ld.so(8) LD_*, bash(1) BASH_ENV/ENV/PROMPT_COMMAND/PS4/SHELLOPTS, node(1)
// NODE_OPTIONS, python(1) PYTHONSTARTUP/PYTHONPATH, perlrun(1) PERL5OPT/PERL5LIB, ruby(1)
// RUBYOPT, the JVM's JAVA_TOOL_OPTIONS, git(1) GIT_*, less(1) LESSOPEN, LESS (+cmd and
// !cmd start-up commands), LESSKEY and LESSKEYIN (a lesskey file's #env section sets
// LESSOPEN) and LESSEDIT, bash(1) PS0-PS2 (prompts run their command substitutions).
var injectionExact = map[string]bool{
	"PATH": true, "BASH_ENV": true, "ENV": true, "PROMPT_COMMAND": true, "PS4": true,
	"SHELLOPTS": true, "BASHOPTS": true, "NODE_OPTIONS": true, "NODE_PATH": true,
	"RUBYOPT": true, "RUBYLIB": true, "JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true,
	"JDK_JAVA_OPTIONS": true, "PAGER": true, "MANPAGER": true, "EDITOR": true, "VISUAL": true,
	"LESSOPEN": true, "LESSCLOSE": true, "SYSTEMD_PAGER": true, "BROWSER": true,
	"ZDOTDIR": true, "SHELL": true, "LUA_INIT": true, "LUA_PATH": true, "LUA_CPATH": true,
	"RUSTC_WRAPPER": true, "RUSTC": true, "CARGO_BUILD_RUSTC_WRAPPER": true, "GOFLAGS": true,
	"TCLLIBPATH": true, "R_PROFILE": true, "R_PROFILE_USER": true, "PERLLIB": true,
	"GEM_PATH": true, "GEM_HOME": true, "BUNDLE_GEMFILE": true, "PHPRC": true,
	"PHP_INI_SCAN_DIR": true, "CLASSPATH": true, "HISTCONTROL": false, "GCONV_PATH": true,
	"LOCPATH": false, "MALLOC_CHECK_": false, "NLSPATH": true, "HOSTALIASES": true,
	"RESOLV_HOST_CONF": true, "XDG_CONFIG_HOME": true, "GLIBC_TUNABLES": true,
	"PYTHONWARNINGS": true, "EMACSLOADPATH": true, "VIMINIT": true, "EXINIT": true,
	"MYVIMRC": true, "GVIMINIT": true, "WGETRC": true, "CURL_HOME": true, "NPM_CONFIG_PREFIX": false,
	"CDPATH": false, "TERMINAL": true, "FCEDIT": true, "SUDO_EDITOR": true, "DIFFPROG": true,
	"PS0": true, "PS1": true, "PS2": true, "LESS": true, "LESSKEY": true, "LESSKEYIN": true,
	"LESSKEY_SYSTEM": true, "LESSKEYIN_SYSTEM": true, "LESSEDIT": true,
	// Where programs find their configuration, which names programs to run: git reads
	// $HOME/.gitconfig and $XDG_CONFIG_HOME/git/config (core.fsmonitor, core.pager),
	// kubectl a kubeconfig's exec credential plugins, the AWS CLI credential_process, go a
	// GOENV file's GOFLAGS, cargo $CARGO_HOME/config.toml; GOTOOLCHAIN downloads and runs a
	// Go toolchain.
	"HOME": true, "XDG_CONFIG_DIRS": true, "KUBECONFIG": true, "AWS_CONFIG_FILE": true,
	"GOENV": true, "CARGO_HOME": true, "GOTOOLCHAIN": true,
}

// safeGit lists GIT_* variables that only change identity, output or tracing.
var safeGit = map[string]bool{
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
	"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true,
	"GIT_TERMINAL_PROMPT": true, "GIT_MERGE_AUTOEDIT": true, "GIT_OPTIONAL_LOCKS": true,
	"GIT_FLUSH": true, "GIT_TRACE": true, "GIT_TRACE2": false, "GIT_CURL_VERBOSE": true,
	"GIT_PAGER_IN_USE": false, "GIT_LFS_SKIP_SMUDGE": true, "GIT_ADVICE": true,
}

// safePython lists PYTHON* variables that do not load code.
var safePython = map[string]bool{
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONIOENCODING": true,
	"PYTHONHASHSEED": true, "PYTHONUTF8": true, "PYTHONFAULTHANDLER": true,
	"PYTHONOPTIMIZE": true, "PYTHONNOUSERSITE": true, "PYTHONLEGACYWINDOWSSTDIO": true,
}

// EnvInjection reports whether setting the environment variable name can make a program
// load or run other code: the names behind ShellSafety's env.injection rule (LD_* and
// DYLD_* per ld.so(8) and dyld(1), BASH_ENV, ENV and BASH_FUNC_* per bash(1) and
// CVE-2014-6271, PERL5*, PYTHON*, NODE_OPTIONS, GIT_* that name programs or
// configuration, *_ASKPASS, pagers and editors, …). The helpers refuse such names in a
// request's environment additions with this same list, so the two layers cannot drift
// apart. Values are not considered: a name in the list is refused whatever its value.
func EnvInjection(name string) bool { return injectionVar(name) }

// injectionVar reports whether setting the environment variable name can make a program
// load or run other code.
func injectionVar(name string) bool {
	if v, ok := injectionExact[name]; ok {
		return v
	}
	if configInjection(name) {
		return true
	}
	switch {
	case strings.HasPrefix(name, "LD_"), strings.HasPrefix(name, "DYLD_"),
		strings.HasPrefix(name, "BASH_FUNC_"), strings.HasPrefix(name, "PERL5"),
		strings.HasSuffix(name, "_ASKPASS"), name == "ASKPASS":
		return true
	case strings.HasPrefix(name, "GIT_"):
		return !safeGit[name] && !strings.HasPrefix(name, "GIT_TRACE")
	case strings.HasPrefix(name, "PYTHON"):
		return !safePython[name]
	case strings.HasPrefix(name, "NPM_CONFIG_") || strings.HasPrefix(name, "npm_config_"):
		l := strings.ToLower(name)
		return strings.Contains(l, "script") || strings.Contains(l, "shell") || strings.Contains(l, "node_options") || strings.Contains(l, "prefix") || strings.Contains(l, "userconfig") || strings.Contains(l, "globalconfig")
	}
	return false
}
