package safety

import "strings"

// This file judges interpreters, build tools and package managers.

// interp returns a handler for an interpreter whose inline-code options are the letters in
// inline (also in clusters such as perl -ne), whose options taking an argument are in
// argOpts, and whose module options (python -m, node -r) are in mod.
func interp(inline, argOpts, mod string) handler {
	return func(a *analyzer, argv []arg, c *callInfo) eff {
		if onlyVersion(argv) {
			return 0
		}
		a.inPlace(argv, c)
		for i := 1; i < len(argv); i++ {
			x := argv[i]
			s := x.s
			if s == "--" {
				break
			}
			if s == "-" {
				return a.stdinCode(c, Bash, false)
			}
			if len(s) < 2 || s[0] != '-' {
				if x.proc && x.net {
					a.find(c, "network.pipe-to-shell", Deny, "An interpreter runs downloaded code")
					return 0
				}
				if a.runsFetched(x, c) {
					return 0
				}
				a.find(c, "exec.workspace-code", Ask, argv[0].s+" runs the script "+display(s))
				return 0
			}
			if s == "--eval" || s == "--print" || s == "--command" || strings.HasPrefix(s, "--eval=") || s == "-Command" || s == "-EncodedCommand" {
				return a.inlineCode(argv, i+1, c)
			}
			if strings.HasPrefix(s, "--") {
				continue
			}
			for j := 1; j < len(s); j++ {
				ch := s[j]
				if strings.IndexByte(inline, ch) >= 0 {
					if j+1 < len(s) {
						if ch == 'c' && pythonProbe(argv[0].s, argv[1:i], s[1:j], subArg(x, s[j+1:])) {
							return 0
						}
						return a.inlineCode([]arg{subArg(x, s[j+1:])}, 0, c)
					}
					if ch == 'c' && i+1 < len(argv) && pythonProbe(argv[0].s, argv[1:i], s[1:j], argv[i+1]) {
						return 0
					}
					return a.inlineCode(argv, i+1, c)
				}
				if strings.IndexByte(mod, ch) >= 0 {
					a.find(c, "exec.workspace-code", Ask, argv[0].s+" runs a module")
					return 0
				}
				if strings.IndexByte(argOpts, ch) >= 0 {
					if j+1 == len(s) {
						i++
					}
					break
				}
			}
		}
		return a.stdinCode(c, Bash, false)
	}
}

// inPlace judges perl -i and ruby -i: the operands after the script are written.
func (a *analyzer) inPlace(argv []arg, c *callInfo) {
	name := argv[0].s
	if name != "perl" && name != "ruby" {
		return
	}
	inplace, script := false, false
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		if len(s) > 1 && s[0] == '-' && !strings.HasPrefix(s, "--") {
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'i':
					inplace = true
				case 'e', 'E':
					if j+1 == len(s) {
						i++
					}
					script = true
					j = len(s)
				}
			}
			continue
		}
		if !script {
			script = true
			continue
		}
		if inplace {
			a.writeTarget(argv[i], "write", c.pos, c.end)
		}
	}
}

// inlineCode judges inline interpreter code at argv[i].
func (a *analyzer) inlineCode(argv []arg, i int, c *callInfo) eff {
	if i < len(argv) && argv[i].net {
		a.find(c, "network.pipe-to-shell", Deny, "An interpreter runs downloaded or decoded code")
		return 0
	}
	a.find(c, "exec.interpreter-inline", Ask, "")
	return 0
}

// hDeno judges deno and bun: eval runs inline code, run/test/task run code, x fetches and
// runs packages.
func hDeno(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) || len(argv) < 2 {
		return 0
	}
	switch argv[1].s {
	case "eval", "-e", "--eval", "-p", "--print", "repl":
		a.find(c, "exec.interpreter-inline", Ask, "")
	case "x", "dlx", "create":
		a.find(c, "exec.remote-package", Ask, "")
	case "install", "add", "i", "update", "upgrade", "remove", "rm", "uninstall", "link", "pm", "publish":
		a.find(c, "package.install", Ask, "")
	case "fmt", "lint", "check", "info", "doc", "--help", "help", "outdated":
		if argv[1].s == "fmt" {
			a.writeTarget(lit(a.cwdOrDyn()+"/"+dyn), "write", c.pos, c.end)
		}
	default:
		a.find(c, "exec.workspace-code", Ask, "")
	}
	return 0
}

// outputFlag judges the output file of a compiler or build tool (-o FILE, -oFILE,
// --output FILE, --output=FILE, --out-dir DIR).
func (a *analyzer) outputFlag(argv []arg, c *callInfo) {
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		switch {
		case (s == "-o" || s == "--output" || s == "--out-dir" || s == "--outdir" || s == "--target-dir") && i+1 < len(argv):
			a.writeTarget(argv[i+1], "write", c.pos, c.end)
			i++
		case strings.HasPrefix(s, "--output=") || strings.HasPrefix(s, "--out-dir=") || strings.HasPrefix(s, "--outdir=") || strings.HasPrefix(s, "--target-dir="):
			_, v, _ := strings.Cut(s, "=")
			a.writeTarget(subArg(argv[i], v), "write", c.pos, c.end)
		case strings.HasPrefix(s, "-o") && len(s) > 2 && !strings.HasPrefix(s, "-o=") && argv[0].s != "java":
			a.writeTarget(subArg(argv[i], s[2:]), "write", c.pos, c.end)
		}
	}
}

// hRunWorkspace judges build tools, test runners and compilers: they run code from the
// workspace (Makefiles, build scripts, tests, plugins).
func hRunWorkspace(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) {
		return 0
	}
	switch argv[0].s {
	case "gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "tsc", "esbuild", "swiftc", "zig", "nasm", "as", "ld", "javac", "kotlinc", "ghc", "protoc", "sass", "lessc", "pandoc":
		a.outputFlag(argv, c)
	}
	for i := 1; i < len(argv); i++ {
		if (argv[i].s == "-C" || argv[i].s == "--directory") && i+1 < len(argv) && (argv[0].s == "make" || argv[0].s == "gmake" || argv[0].s == "ninja") {
			if p, ok := a.resolve(argv[i+1]); ok {
				if pc := a.classify(p); pc != pcWorkspace && pc != pcDynamic {
					a.find(c, "exec.workspace-code", Ask, argv[0].s+" runs code from "+display(p))
					return 0
				}
			}
		}
	}
	a.find(c, "exec.workspace-code", Ask, argv[0].s+" runs code from the workspace (build files, scripts, tests)")
	return 0
}

// hNpm judges npm, yarn and pnpm.
func hNpm(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) {
		return 0
	}
	sub := ""
	for _, x := range argv[1:] {
		if !strings.HasPrefix(x.s, "-") {
			sub = x.s
			break
		}
	}
	if sub == "config" || sub == "set" || sub == "get" {
		return a.npmConfig(argv, c)
	}
	switch sub {
	case "ls", "list", "ll", "la", "why", "explain", "help", "root", "prefix", "bin", "version", "-v", "--version", "fund", "doctor":
		return 0
	case "view", "info", "show", "search", "outdated", "audit", "ping", "whoami", "owner", "dist-tag", "access":
		a.find(c, "network.access", Ask, "")
		return effNetwork
	case "install", "i", "add", "ci", "update", "up", "upgrade", "remove", "rm", "uninstall", "un", "link", "ln", "dedupe", "prune", "rebuild", "publish", "unpublish", "deprecate", "import", "patch", "set", "config", "login", "logout", "adduser", "pack", "init", "create", "setup":
		a.find(c, "package.install", Ask, "")
		return effNetwork
	case "exec", "x", "dlx", "npx":
		a.find(c, "exec.remote-package", Ask, "")
		for i, x := range argv {
			if x.s == sub {
				return a.runInner(argv[i+1:], c)
			}
		}
		return 0
	}
	a.find(c, "exec.workspace-code", Ask, argv[0].s+" runs package scripts from the workspace")
	return 0
}

// npmConfig judges npm/pnpm/yarn config (and npm set/get): reading is allowed; setting a
// key that runs programs is denied; other changes ask.
func (a *analyzer) npmConfig(argv []arg, c *callInfo) eff {
	var words []arg
	for _, x := range argv[1:] {
		if !strings.HasPrefix(x.s, "-") {
			words = append(words, x)
		}
	}
	verb := words[0].s
	rest := words[1:]
	if verb == "config" {
		if len(rest) == 0 {
			return 0
		}
		verb, rest = rest[0].s, rest[1:]
	}
	switch verb {
	case "get", "list", "ls", "current":
		return 0
	case "set":
		for _, x := range rest {
			k, _, _ := strings.Cut(x.s, "=")
			if x.dyn || npmExecKey(k) {
				a.find(c, "tool.config-exec", Deny, argv[0].s+" config set "+display(k))
				return 0
			}
			break
		}
	}
	a.find(c, "tool.config-set", Ask, argv[0].s+" config changes the package manager's configuration")
	return 0
}

// hRemotePkg judges npx, uvx, pipx run and similar: they fetch and run packages.
func hRemotePkg(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) {
		return 0
	}
	if argv[0].s == "pipx" && len(argv) > 1 && argv[1].s != "run" {
		switch argv[1].s {
		case "list", "environment", "--help":
			return 0
		}
		a.find(c, "package.install", Ask, "")
		return effNetwork
	}
	a.find(c, "exec.remote-package", Ask, "")
	rest := argv[1:]
	if argv[0].s == "pipx" && len(rest) > 0 {
		rest = rest[1:]
	}
	return effNetwork | a.runInner(rest, c)
}

// hGo judges the go command.
func hGo(a *analyzer, argv []arg, c *callInfo) eff {
	if len(argv) < 2 {
		return 0
	}
	for _, x := range argv[2:] {
		if strings.HasPrefix(x.s, "-toolexec") || strings.HasPrefix(x.s, "-exec") || strings.HasPrefix(x.s, "-vettool") || strings.HasPrefix(x.s, "-overlay") {
			a.find(c, "exec.tool-exec", Ask, "This go flag runs another program")
		}
	}
	switch argv[1].s {
	case "version", "help", "doc", "list":
		return 0
	case "env":
		w := false
		for _, x := range argv[2:] {
			switch {
			case x.s == "-w":
				w = true
			case x.s == "-u":
				a.find(c, "tool.config-set", Ask, "go env -u changes the Go configuration")
			case w:
				k, _, _ := strings.Cut(x.s, "=")
				if x.dyn || goExecEnv(k) {
					a.find(c, "tool.config-exec", Deny, "go env -w "+display(k))
				} else {
					a.find(c, "tool.config-set", Ask, "go env -w changes the Go configuration")
				}
			}
		}
		return 0
	case "fmt":
		a.writeTarget(lit(a.cwdOrDyn()+"/"+dyn), "write", c.pos, c.end)
		return 0
	case "get", "install", "mod", "work", "clean":
		if argv[1].s == "mod" && len(argv) > 2 && (argv[2].s == "graph" || argv[2].s == "why" || argv[2].s == "verify" || argv[2].s == "edit" && len(argv) > 3 && argv[3].s == "-json") {
			return 0
		}
		a.find(c, "package.install", Ask, "")
		return effNetwork
	case "build", "vet":
		a.outputFlag(argv[1:], c)
		a.find(c, "exec.workspace-code", Ask, "go "+argv[1].s+" compiles the workspace (cgo and build tools may run code)")
		return 0
	}
	a.find(c, "exec.workspace-code", Ask, "go "+argv[1].s+" runs code from the workspace")
	return 0
}

// goExecEnv reports whether a Go environment setting names a program or flags that later
// go commands run (go help environment).
func goExecEnv(k string) bool {
	switch k {
	case "CC", "CXX", "FC", "AR", "PKG_CONFIG", "GOFLAGS", "GOTOOLCHAIN", "GOROOT", "GOENV",
		"GOTOOLDIR", "GOPROXY", "GONOSUMDB", "GONOSUMCHECK", "GOSUMDB", "GOINSECURE",
		"GONOPROXY", "GOEXPERIMENT", "GOAUTH", "GOCACHEPROG", "GOGCCFLAGS":
		return true
	}
	return strings.HasPrefix(k, "CGO_")
}

// npmExecKey reports whether an npm, pnpm or yarn configuration key names a program, a
// shell, Node options or code that later runs execute.
func npmExecKey(k string) bool {
	switch strings.ToLower(strings.TrimLeft(k, "-")) {
	case "script-shell", "node-options", "shell", "editor", "browser", "git", "yarnpath",
		"yarn-path", "init-module", "onload-script", "globalconfig", "userconfig", "prefix",
		"ignore-scripts", "node-gyp", "npm-path", "nodelinker-script", "plugins", "registry",
		"unsafe-perm", "scripts-prepend-node-path", "package-import-method":
		return true
	}
	return false
}

// hCargo judges cargo and rustup.
func hCargo(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) || len(argv) < 2 {
		return 0
	}
	switch argv[1].s {
	case "--list", "help", "metadata", "tree", "search", "locate-project", "pkgid", "read-manifest", "verify-project", "show", "which":
		return 0
	case "install", "add", "remove", "update", "publish", "login", "owner", "yank", "uninstall", "fetch", "toolchain", "target", "component", "default", "self", "override", "set":
		a.find(c, "package.install", Ask, "")
		return effNetwork
	}
	a.outputFlag(argv[1:], c)
	a.find(c, "exec.workspace-code", Ask, argv[0].s+" "+argv[1].s+" runs build scripts and code from the workspace")
	return 0
}

// hPip judges pip.
func hPip(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) || len(argv) < 2 {
		return 0
	}
	switch argv[1].s {
	case "list", "show", "freeze", "check", "help", "debug", "inspect", "hash":
		return 0
	}
	a.find(c, "package.install", Ask, "")
	return effNetwork
}

// hPkg judges system package managers: queries are read-only; installs and removals change
// the system.
func hPkg(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) {
		return 0
	}
	name := argv[0].s
	var sub string
	for _, x := range argv[1:] {
		if !strings.HasPrefix(x.s, "-") {
			sub = x.s
			break
		}
	}
	switch name {
	case "dpkg":
		for _, x := range argv[1:] {
			switch x.s {
			case "-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search", "-p", "--print-avail", "--get-selections", "--print-architecture", "-c", "--contents", "-I", "--info", "--audit", "-C":
				return 0
			}
		}
	case "rpm":
		for _, x := range argv[1:] {
			if strings.HasPrefix(x.s, "-q") || x.s == "--query" || x.s == "-V" || x.s == "--verify" {
				return 0
			}
		}
	case "pacman", "yay", "paru":
		for _, x := range argv[1:] {
			if strings.HasPrefix(x.s, "-Q") || strings.HasPrefix(x.s, "-Ss") || strings.HasPrefix(x.s, "-Si") || strings.HasPrefix(x.s, "-F") {
				return 0
			}
		}
	case "apt-cache":
		return 0
	}
	switch sub {
	case "list", "show", "policy", "search", "info", "depends", "rdepends", "madison", "showpkg", "changelog", "history", "leaves", "deps", "uses", "desc", "outdated", "doctor", "config", "--prefix", "repolist", "provides", "whatprovides", "query", "showhold", "check":
		return 0
	}
	a.find(c, "package.install", Ask, "")
	return effNetwork
}

// hDocker judges container and cluster tools: queries are read-only; privileged containers
// and host mounts of system paths escape every boundary.
func hDocker(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) || len(argv) < 2 {
		return 0
	}
	var words []string
	for _, x := range argv[1:] {
		if !strings.HasPrefix(x.s, "-") {
			words = append(words, x.s)
		}
	}
	sub := ""
	if len(words) > 0 {
		sub = words[0]
	}
	readVerb := func(v string) bool {
		switch v {
		case "ps", "images", "inspect", "logs", "version", "info", "top", "stats", "port", "diff", "history", "search", "get", "describe", "explain", "api-resources", "cluster-info", "events", "ls", "list", "df", "du", "config", "api-versions":
			return true
		}
		return false
	}
	if readVerb(sub) && sub != "config" {
		return 0
	}
	switch sub {
	case "compose", "container", "image", "network", "volume", "context", "node", "service", "system", "buildx", "secret", "plugin", "stack", "swarm", "manifest", "builder", "trust":
		if len(words) > 1 && readVerb(words[1]) && words[1] != "config" {
			return 0
		}
	}
	for _, x := range argv[1:] {
		s := x.s
		if s == "--privileged" || strings.HasPrefix(s, "--pid=host") || strings.HasPrefix(s, "/:") || strings.Contains(s, "=/,") || strings.HasPrefix(s, "/var/run/docker.sock") || strings.HasPrefix(s, "--cap-add=ALL") || strings.HasPrefix(s, "--cap-add=SYS_ADMIN") {
			a.find(c, "privilege.escalation", Deny, "A privileged container or a host mount of / gives root on the host")
			return 0
		}
	}
	a.find(c, "exec.tool-exec", Ask, argv[0].s+" "+sub+" runs or changes containers or cluster resources")
	return effNetwork
}

// runnerArgOpts are options of package runners that take an argument.
var runnerArgOpts = map[string]bool{
	"-p": true, "--package": true, "-n": true, "--name": true, "--with": true, "--from": true,
	"-e": true, "--env": true, "--python": true, "--project": true, "--directory": true,
	"--group": true, "--extra": true, "--env-file": true, "-w": true, "--workspace": true,
	"--filter": true, "-F": true, "--prefix": true, "--spec": true, "--index-url": true,
}

// runInner judges the command a package or environment runner runs: "-c SCRIPT" or
// "--call SCRIPT" as a shell script, otherwise the words after the runner's options.
func (a *analyzer) runInner(rest []arg, c *callInfo) eff {
	for i := 0; i < len(rest); i++ {
		s := rest[i].s
		switch {
		case s == "--":
			if i+1 < len(rest) {
				return a.judge(rest[i+1:], c)
			}
			return 0
		case s == "-c" || s == "--call" || s == "--command" || s == "--run":
			if i+1 < len(rest) {
				if s == "--command" && len(rest) > i+2 {
					return a.judge(rest[i+1:], c)
				}
				return a.nested(rest[i+1], Bash, c)
			}
			return 0
		case strings.HasPrefix(s, "--call=") || strings.HasPrefix(s, "--run="):
			_, v, _ := strings.Cut(s, "=")
			return a.nested(subArg(rest[i], v), Bash, c)
		case strings.HasPrefix(s, "-"):
			if runnerArgOpts[s] {
				i++
			}
		default:
			return a.judge(rest[i:], c)
		}
	}
	return 0
}

// hEnvRunner judges environment managers (uv, poetry, pipenv, pdm, hatch, rye, conda,
// bundle, mise, asdf, direnv, nix-shell, nix): "run"/"exec" run a command, which is judged;
// other subcommands run workspace code or install packages.
func hEnvRunner(a *analyzer, argv []arg, c *callInfo) eff {
	if onlyVersion(argv) || len(argv) < 2 {
		return hRunWorkspace(a, argv, c)
	}
	name := argv[0].s
	if name == "nix-shell" {
		a.find(c, "exec.workspace-code", Ask, "nix-shell builds an environment from the workspace")
		return a.runInner(argv[1:], c)
	}
	sub := argv[1].s
	switch sub {
	case "run", "exec", "x", "develop", "shell":
		rest := argv[2:]
		if name == "direnv" && sub == "exec" && len(rest) > 0 {
			rest = rest[1:]
		}
		if name == "uv" && sub == "tool" {
			rest = rest[1:]
		}
		a.find(c, "exec.workspace-code", Ask, name+" "+sub+" runs a command in a project environment")
		if len(rest) == 0 {
			return 0
		}
		return a.runInner(rest, c)
	case "add", "install", "remove", "sync", "lock", "update", "pip", "tool", "self", "venv", "init", "new", "build", "publish", "use", "plugin", "global", "local", "allow":
		a.find(c, "package.install", Ask, "")
		return effNetwork
	case "list", "show", "info", "env-list", "current", "where", "which", "version", "--version", "help", "status":
		return 0
	}
	return hRunWorkspace(a, argv, c)
}
