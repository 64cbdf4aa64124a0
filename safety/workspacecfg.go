package safety

import "strings"

// Programs whose behaviour the workspace configures, and probes that are not probes.
//
// Some programs run code named by a configuration file they find in the workspace, whatever
// the subcommand: yarn runs the release file named by yarnPath in .yarnrc.yml (yarn-path in
// .yarnrc for yarn 1) for every invocation, its version query included; cargo runs the
// compiler (build.rustc, build.rustc-wrapper, target.<triple>.runner and linker of
// .cargo/config.toml) for metadata and tree too; npm and pnpm run every script, lifecycle
// script and exec through the script-shell of the workspace's .npmrc; direnv allow trusts
// .envrc, which then runs whenever a shell enters the directory. Running such a program in
// a workspace is running workspace code (exec.workspace-code), as make and npm test are.
// The variables that point such programs at another configuration file are environment
// injection (configInjection).

// configInjectionExact lists variables naming a configuration file or options that make a
// program run code: ripgrep's RIPGREP_CONFIG_PATH (its --pre=COMMAND), bat's
// BAT_CONFIG_PATH and BAT_PAGER, fzf's FZF_DEFAULT_COMMAND (run with $SHELL -c), direnv's
// DIRENV_CONFIG (direnv.toml whitelists directories whose .envrc runs unasked), yarn's
// YARN_RC_FILENAME, cargo's RUSTC_WORKSPACE_WRAPPER, RUSTDOC and CARGO_BUILD_RUSTDOC, and
// the JVM options of build tools (MAVEN_OPTS, GRADLE_OPTS, ANT_OPTS, SBT_OPTS, JAVA_OPTS:
// -javaagent loads code), and the configuration files or directories of tools that run
// what they name: ack's ACKRC (--pager), psql's PSQLRC (\! commands), irb's IRBRC,
// IPython's IPYTHONDIR and Jupyter's JUPYTER_CONFIG_DIR (startup scripts), Julia's
// JULIA_LOAD_PATH and JULIA_DEPOT_PATH (startup.jl), R's R_ENVIRON and R_ENVIRON_USER,
// Terraform's TF_CLI_CONFIG_FILE (provider dev_overrides run any binary), Docker's
// DOCKER_CONFIG (credHelpers run docker-credential-* programs), Ansible's ANSIBLE_CONFIG
// (plugin paths) and Vagrant's VAGRANT_VAGRANTFILE (Ruby code).
var configInjectionExact = map[string]bool{
	"ACKRC": true, "PSQLRC": true, "IRBRC": true, "IPYTHONDIR": true, "JUPYTER_CONFIG_DIR": true,
	"JULIA_LOAD_PATH": true, "JULIA_DEPOT_PATH": true, "R_ENVIRON": true, "R_ENVIRON_USER": true,
	"TF_CLI_CONFIG_FILE": true, "DOCKER_CONFIG": true, "ANSIBLE_CONFIG": true,
	"VAGRANT_VAGRANTFILE": true,
	"RIPGREP_CONFIG_PATH": true, "BAT_CONFIG_PATH": true, "BAT_PAGER": true,
	"FZF_DEFAULT_COMMAND": true, "DIRENV_CONFIG": true, "YARN_RC_FILENAME": true,
	"RUSTC_WORKSPACE_WRAPPER": true, "RUSTDOC": true, "CARGO_BUILD_RUSTDOC": true,
	"MAVEN_OPTS": true, "GRADLE_OPTS": true, "ANT_OPTS": true, "SBT_OPTS": true,
	"JAVA_OPTS": true, "DELTA_PAGER": true, "MANOPT": true,
}

// configInjection reports whether the variable name points a program at configuration or
// programs that run code (beyond injectionExact): the exact names above, yarn's YARN_*
// settings that name code (YARN_YARN_PATH, YARN_PLUGINS, YARN_RC_FILENAME, per yarnrc(5) every
// setting has a YARN_ variable), and cargo's CARGO_TARGET_<TRIPLE>_RUNNER and _LINKER
// (cargo(1) "Environment variables": target.<triple>.runner and linker).
func configInjection(name string) bool {
	if configInjectionExact[name] {
		return true
	}
	switch {
	case strings.HasPrefix(name, "YARN_"):
		l := strings.ToLower(name)
		return strings.Contains(l, "path") || strings.Contains(l, "plugin") || strings.Contains(l, "shell") || strings.Contains(l, "rc_filename") || strings.Contains(l, "node_options")
	case strings.HasPrefix(name, "CARGO_TARGET_"):
		return strings.HasSuffix(name, "_RUNNER") || strings.HasSuffix(name, "_LINKER") || strings.HasSuffix(name, "_RUSTFLAGS")
	case strings.HasPrefix(name, "CARGO_BUILD_"):
		return strings.HasSuffix(name, "_RUSTC") || strings.HasSuffix(name, "_RUSTC_WRAPPER") || strings.HasSuffix(name, "_RUSTC_WORKSPACE_WRAPPER") || strings.HasSuffix(name, "_RUSTDOC")
	}
	return false
}

// configuredRuns wraps the handler of a program that runs code named by workspace
// configuration for the subcommands runs accepts (nil: every invocation), adding
// exec.workspace-code to the handler's own findings.
func configuredRuns(name, why string, runs func(argv []arg) bool) {
	h := commands[name]
	commands[name] = func(a *analyzer, argv []arg, c *callInfo) eff {
		if runs == nil || runs(argv) {
			a.find(c, "exec.workspace-code", Ask, why)
		}
		if h == nil {
			return 0
		}
		return h(a, argv, c)
	}
}

// firstWord returns the first argument of argv that is not an option, or "".
func firstWord(argv []arg) string {
	for _, x := range argv[1:] {
		if !strings.HasPrefix(x.s, "-") {
			return x.s
		}
	}
	return ""
}

func init() {
	configuredRuns("yarn", "yarn runs the yarn release the workspace names (yarnPath in .yarnrc.yml), whatever the subcommand", nil)
	configuredRuns("cargo", "cargo runs the compiler, wrapper or runner that .cargo/config.toml names", func(argv []arg) bool {
		switch firstWord(argv) {
		case "metadata", "tree", "fix", "clippy", "fmt", "doc", "rustc", "rustdoc":
			return true
		}
		return false
	})
	npmScripts := func(argv []arg) bool {
		switch firstWord(argv) {
		case "exec", "x", "dlx", "install", "i", "ci", "add", "rebuild", "update", "up", "link", "ln", "pack", "publish", "restart", "stop":
			return true
		}
		return false
	}
	configuredRuns("npm", "npm runs scripts with the script-shell of the workspace's .npmrc", npmScripts)
	configuredRuns("pnpm", "pnpm runs scripts with the script-shell of the workspace's .npmrc and loads .pnpmfile.cjs", npmScripts)
	commands["direnv"] = hDirenv
	for _, n := range []string{"ruff", "black", "isort", "staticcheck", "pyright"} {
		h := commands[n]
		commands[n] = readOnlyLinter(h)
	}
}

// hDirenv judges direnv(1): allow/permit/grant trust .envrc (which then runs whenever a
// shell enters the directory), export, exec, reload and edit run it; status, version, help,
// deny and stdlib run nothing.
func hDirenv(a *analyzer, argv []arg, c *callInfo) eff {
	sub := firstWord(argv)
	switch sub {
	case "", "status", "version", "--version", "help", "--help", "deny", "revoke", "disallow", "stdlib", "dump", "show_dump", "fetchurl", "hook", "prune":
		if sub == "fetchurl" {
			a.find(c, "network.access", Ask, "")
			return effNetwork
		}
		return 0
	case "allow", "permit", "grant":
		a.find(c, "exec.workspace-code", Ask, "direnv allow trusts .envrc, which then runs whenever a shell enters the directory")
		return 0
	case "exec":
		a.find(c, "exec.workspace-code", Ask, "direnv exec runs .envrc and then the command")
		for i, x := range argv {
			if x.s == "exec" && i+2 < len(argv) {
				return a.judge(argv[i+2:], c) // direnv exec DIR COMMAND…
			}
		}
		return 0
	case "edit":
		a.find(c, "exec.tool-exec", Ask, "direnv edit opens an editor and then trusts .envrc")
		return 0
	}
	a.find(c, "exec.workspace-code", Ask, "direnv "+sub+" runs .envrc from the workspace")
	return 0
}

// readOnlyLinter wraps the handler of a linter that loads no code from the workspace (ruff,
// black, isort, staticcheck and pyright read configuration files only): a check that writes nothing
// is read-only (ruff check without --fix, black --check, isort --check-only); any other
// run is judged by h.
func readOnlyLinter(h handler) handler {
	return func(a *analyzer, argv []arg, c *callInfo) eff {
		if linterReadOnly(argv) {
			return 0
		}
		return h(a, argv, c)
	}
}

// linterReadOnly reports whether argv only checks: ruff check/format --check, black
// --check/--diff, isort --check-only/--diff, staticcheck; none of the options that write
// (--fix, --output-file, --watch, --add-noqa, --cache-dir …) or change configuration.
func linterReadOnly(argv []arg) bool {
	name := argv[0].s
	for _, x := range argv[1:] {
		if x.dyn || x.net || x.proc {
			return false
		}
		s := x.s
		switch {
		case s == "--fix" || s == "--unsafe-fixes" || strings.HasPrefix(s, "--fix=") || s == "--add-noqa" || s == "--watch",
			strings.HasPrefix(s, "--output-file") || s == "-o" || strings.HasPrefix(s, "--cache-dir"),
			s == "--write" || strings.HasPrefix(s, "-debug."):
			return false
		}
	}
	has := func(opts ...string) bool {
		for _, x := range argv[1:] {
			for _, o := range opts {
				if x.s == o {
					return true
				}
			}
		}
		return false
	}
	switch name {
	case "ruff":
		switch firstWord(argv) {
		case "check":
			return true
		case "format":
			return has("--check", "--diff")
		case "rule", "version", "linter", "config":
			return true
		}
		return false
	case "black":
		return has("--check", "--diff")
	case "isort":
		return has("--check-only", "--check", "-c", "--diff")
	case "staticcheck":
		return true
	case "pyright":
		return !has("--createstub", "--writebaseline", "--watch", "-w")
	}
	return false
}

// notProbes lists, per program, the lone arguments that look like a version or help query
// but are not one (from each program's manual): for test and task runners they run the
// suite or a target (pytest -v runs every test verbosely; make help, just help and rake
// help run a target the workspace defines; ctest -V runs the tests verbosely); for
// interpreters and shells "help" and "version" are script names and -v starts a verbose
// interpreter reading standard input; build tools that boot the project (sbt, bazel, mill)
// load workspace code for every query.
var notProbes = map[string]string{
	"pytest": "-v help version", "py.test": "-v help version",
	"make": "help version -V", "gmake": "help version -V", "bmake": "help version -V",
	"just": "-v help version", "task": "-v help version", "rake": "-v help version",
	"ant": "-v help version", "ninja": "-v help version", "gradle": "help version",
	"mvn": "help version", "tox": "-v help version", "nox": "-v help version",
	"jest": "help version", "vitest": "help version", "mocha": "-v help version",
	"phpunit": "-v help version", "rspec": "help version", "ctest": "-V -v help version",
	"behave": "-v help version", "nosetests": "-v help version", "nose2": "-v help version",
	"trial": "-v help version", "tsc": "help version", "vite": "help version",
	"snakemake": "help version", "scons": "-h help version", "invoke": "help version",
	"inv": "help version", "fab": "help version", "mage": "-v help version",
	"cmake": "help version", "meson": "version", "rails": "-v help version -h",
	"sbt": "-v -h help version -V --version --help", "mill": "-v -h help version -V --version --help", "bazel": "-h help version",
	"bazelisk": "-h help version -v --version", "lein": "help version", "mix": "help version",
	"yarn": "-v -h help version -V", "bun": "version", "deno": "help version", "java": "help version",
	"bash": "-v -h help version", "sh": "-v -h help version", "dash": "-v -h help version",
	"zsh": "-v -h help version", "ksh": "-v -h help version", "fish": "-v help version",
	"node": "help version", "perl": "help version", "ruby": "help version", "php": "help version",
	"lua": "help version", "Rscript": "help version", "julia": "help version",
}

// notProbe reports whether the lone argument w of program name is not a version or help
// query (notProbes; every python and pypy: "help" and "version" are scripts, -v is verbose
// mode reading standard input).
func notProbe(name, w string) bool {
	ws, ok := notProbes[name]
	if !ok && (strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy")) {
		ws, ok = "-v help version", true
	}
	if !ok {
		return false
	}
	for _, x := range strings.Fields(ws) {
		if x == w {
			return true
		}
	}
	return false
}
