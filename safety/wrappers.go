package safety

import (
	"path"
	"strconv"
	"strings"
)

// wrapSpec is the grammar of a command that runs another command: its options, how many
// operands come before the command (timeout's duration, flock's lock file), and what it
// adds itself.
type wrapSpec struct {
	opts  optSpec
	skip  int    // operands before the command
	note  string // rule id recorded for the wrapper itself ("" for none)
	nodet string // detail of the note
	// noCmd names options after which there is no command (the wrapper acts on a pid).
	noCmd []string
}

// wrappers lists commands that only change how the command after them runs; the inner
// command is judged as if it stood alone. Sources: the man pages of each tool.
var wrappers = map[string]*wrapSpec{
	"nice":             {opts: optSpec{arg: "n", long: []string{"adjustment"}, stop: true}},
	"ionice":           {opts: optSpec{arg: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}, stop: true}, noCmd: []string{"p", "P", "u", "--pid", "--pgid", "--uid"}},
	"timeout":          {opts: optSpec{arg: "ks", long: []string{"kill-after", "signal"}, stop: true}, skip: 1},
	"gtimeout":         {opts: optSpec{arg: "ks", long: []string{"kill-after", "signal"}, stop: true}, skip: 1},
	"nohup":            {opts: optSpec{stop: true}},
	"stdbuf":           {opts: optSpec{arg: "ioe", long: []string{"input", "output", "error"}, stop: true}},
	"time":             {opts: optSpec{arg: "fo", long: []string{"format", "output"}, stop: true}},
	"gtime":            {opts: optSpec{arg: "fo", long: []string{"format", "output"}, stop: true}},
	"strace":           {opts: optSpec{arg: "oepPsuEabIOSX", long: []string{"output", "expr", "pid", "string-limit", "user", "env", "trace", "signal", "status"}, stop: true}, noCmd: []string{"p", "--pid"}},
	"ltrace":           {opts: optSpec{arg: "oepuEaAlLnsx", long: []string{"output", "pid", "user"}, stop: true}, noCmd: []string{"p", "--pid"}},
	"setsid":           {opts: optSpec{stop: true}, note: "background.job", nodet: "setsid runs the command in a new session that outlives this one"},
	"unbuffer":         {opts: optSpec{stop: true}},
	"taskset":          {opts: optSpec{stop: true}, skip: 1, noCmd: []string{"p", "--pid"}},
	"chrt":             {opts: optSpec{arg: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"}, stop: true}, skip: 1, noCmd: []string{"p", "--pid"}},
	"caffeinate":       {opts: optSpec{arg: "tw", stop: true}},
	"dbus-launch":      {opts: optSpec{arg: "", long: []string{"config-file"}, stop: true}},
	"dbus-run-session": {opts: optSpec{long: []string{"config-file", "dbus-daemon"}, stop: true}},
	"xvfb-run":         {opts: optSpec{arg: "fnpse", long: []string{"auth-file", "server-num", "xauth-protocol", "server-args", "error-file"}, stop: true}},
	"eatmydata":        {opts: optSpec{stop: true}},
	"fakeroot":         {opts: optSpec{arg: "is", long: []string{"lib", "faked"}, stop: true}},
	"faketime":         {opts: optSpec{arg: "", stop: true}, skip: 1},
	"ccache":           {opts: optSpec{stop: true}},
	"proxychains":      {opts: optSpec{arg: "f", stop: true}, note: "network.access"},
	"proxychains4":     {opts: optSpec{arg: "f", stop: true}, note: "network.access"},
	"torsocks":         {opts: optSpec{arg: "uPpa", stop: true}, note: "network.access"},
	"tsocks":           {opts: optSpec{stop: true}, note: "network.access"},
	"ssh-agent":        {opts: optSpec{arg: "aEPt", stop: true}},
	"catchsegv":        {opts: optSpec{stop: true}},
	"valgrind":         {opts: optSpec{stop: true}},
	"nocorrect":        {opts: optSpec{stop: true}},
	"noglob":           {opts: optSpec{stop: true}},
	"firejail":         {opts: optSpec{stop: true}},
	"chronic":          {opts: optSpec{stop: true}},
	"ifne":             {opts: optSpec{stop: true}},
	"rlwrap":           {opts: optSpec{arg: "abcfHlpPsStz", stop: true}},
	"unshare":          {opts: optSpec{long: []string{"mount", "uts", "ipc", "net", "pid", "user", "cgroup", "time", "setuid", "setgid", "root", "wd", "map-user", "map-group"}, stop: true}, note: "exec.tool-exec", nodet: "unshare runs the command in new namespaces"},
	"setpriv":          {opts: optSpec{long: []string{"reuid", "regid", "groups", "inh-caps", "ambient-caps", "bounding-set", "securebits", "selinux-label", "apparmor-profile", "ruid", "euid", "rgid", "egid", "pdeathsig"}, stop: true}},
	"chpst":            {opts: optSpec{arg: "ugUeb/nlLmdofcpr", stop: true}},
	"softlimit":        {opts: optSpec{arg: "mdsalofcprt", stop: true}},
	"envdir":           {opts: optSpec{stop: true}, skip: 1, note: "exec.tool-exec", nodet: "envdir sets the environment from the files of a directory"},
	"setuidgid":        {opts: optSpec{stop: true}, skip: 1},
	"gosu":             {opts: optSpec{stop: true}, skip: 1},
	"su-exec":          {opts: optSpec{stop: true}, skip: 1},
	"numactl":          {opts: optSpec{arg: "iNmCpP", long: []string{"interleave", "cpunodebind", "membind", "physcpubind", "preferred", "localalloc"}, stop: true}},
	"prlimit":          {opts: optSpec{arg: "p", long: []string{"pid", "output"}, stop: true}},
	"cgexec":           {opts: optSpec{arg: "g", stop: true}},
	"tini":             {opts: optSpec{arg: "pe", stop: true}},
	"dumb-init":        {opts: optSpec{arg: "r", long: []string{"rewrite"}, stop: true}},
	"nocache":          {opts: optSpec{arg: "nD", stop: true}},
	"trickle":          {opts: optSpec{arg: "udwtlLn", stop: true}, note: "network.access"},
	"torify":           {opts: optSpec{stop: true}, note: "network.access"},
	"distcc":           {opts: optSpec{stop: true}},
	"icecc":            {opts: optSpec{stop: true}},
	"sccache":          {opts: optSpec{stop: true}},
	"tsp":              {opts: optSpec{arg: "LDnNf", stop: true}, note: "background.job", nodet: "tsp queues the command to run later"},
	"systemd-inhibit":  {opts: optSpec{long: []string{"what", "who", "why", "mode"}, stop: true}},
}

func init() {
	for name := range wrappers {
		commands[name] = hWrapper
	}
	commands["script"] = hScript
	commands["flock"] = hFlock
	commands["bwrap"] = hBwrap
	commands["perf"] = hPerf
	commands["gdb"] = hGdb
	commands["lldb"] = hGdb
	commands["hyperfine"] = hHyperfine
	commands["entr"] = hEntr
	for _, t := range []string{"xterm", "gnome-terminal", "konsole", "alacritty", "kitty", "terminator", "xfce4-terminal", "st", "foot", "urxvt", "tilix", "wezterm"} {
		commands[t] = hTerminal
	}
	commands["unshare"] = hWrapper
}

// hWrapper unwraps a command from wrappers and judges it.
func hWrapper(a *analyzer, argv []arg, c *callInfo) eff {
	sp := wrappers[argv[0].s]
	p := parseArgs(argv, &sp.opts)
	if sp.note != "" {
		a.find(c, sp.note, ruleDecision(sp.note), sp.nodet)
	}
	for _, n := range sp.noCmd {
		if p.has(n) {
			a.find(c, "system.kill", Ask, argv[0].s+" acts on a running process")
			return 0
		}
	}
	switch argv[0].s {
	case "time", "gtime":
		if o, ok := p.get("o", "--output"); ok && o.has {
			a.writeTarget(o.val, "write", c.pos, c.end)
		}
	case "strace", "ltrace":
		if o, ok := p.get("o", "--output"); ok && o.has {
			a.writeTarget(o.val, "write", c.pos, c.end)
		}
		for _, o := range p.all("E", "--env") {
			if k, _, ok := strings.Cut(o.val.s, "="); ok {
				a.envName(k, c)
			}
		}
	}
	i := p.rest + sp.skip
	if i >= len(argv) {
		return 0
	}
	return a.judge(argv[i:], c)
}

// bwrapArgs gives the number of arguments each bubblewrap option takes (bwrap(1)).
var bwrapArgs = map[string]int{
	"--bind": 2, "--ro-bind": 2, "--dev-bind": 2, "--bind-try": 2, "--ro-bind-try": 2,
	"--dev-bind-try": 2, "--symlink": 2, "--setenv": 2, "--file": 2, "--bind-data": 2,
	"--ro-bind-data": 2, "--chmod": 2, "--tmpfs": 1, "--proc": 1, "--dev": 1, "--dir": 1,
	"--unsetenv": 1, "--chdir": 1, "--uid": 1, "--gid": 1, "--hostname": 1, "--remount-ro": 1,
	"--seccomp": 1, "--exec-label": 1, "--file-label": 1, "--lock-file": 1, "--sync-fd": 1,
	"--info-fd": 1, "--json-status-fd": 1, "--block-fd": 1, "--userns-block-fd": 1,
	"--args": 1, "--cap-add": 1, "--cap-drop": 1, "--perms": 1, "--size": 1, "--userns": 1,
	"--userns2": 1, "--pidns": 1, "--argv0": 1, "--mqueue": 1, "--overlay-src": 1,
	"--tmp-overlay": 1, "--ro-overlay": 1, "--overlay": 3,
}

// hBwrap judges bubblewrap: its options (some take two or three arguments) and then the
// command, which is judged as if it ran unconfined.
func hBwrap(a *analyzer, argv []arg, c *callInfo) eff {
	var chdir arg
	hasChdir := false
	i := 1
	for i < len(argv) {
		s := argv[i].s
		if s == "--" {
			i++
			break
		}
		if !strings.HasPrefix(s, "--") {
			break
		}
		if s == "--setenv" && i+1 < len(argv) {
			a.envName(argv[i+1].s, c)
		}
		if s == "--chdir" && i+1 < len(argv) {
			chdir, hasChdir = argv[i+1], true
		}
		i += 1 + bwrapArgs[s]
	}
	if i >= len(argv) {
		return 0
	}
	if hasChdir {
		return a.inDir(chdir, false, func() eff { return a.judge(argv[i:], c) })
	}
	return a.judge(argv[i:], c)
}

// hFlock judges flock(1): "flock [options] FILE COMMAND…" or "flock [options] FILE -c
// SCRIPT" (options may also follow the file).
func hFlock(a *analyzer, argv []arg, c *callInfo) eff {
	file := false
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		switch {
		case s == "-c" || s == "--command":
			if i+1 < len(argv) {
				return a.nested(argv[i+1], POSIX, c)
			}
			return 0
		case strings.HasPrefix(s, "--command="):
			return a.nested(subArg(argv[i], s[len("--command="):]), POSIX, c)
		case s == "-w" || s == "--wait" || s == "--timeout" || s == "-E" || s == "--conflict-exit-code":
			i++
		case strings.HasPrefix(s, "-") && len(s) > 1:
		case !file:
			file = true
		default:
			return a.judge(argv[i:], c)
		}
	}
	return 0
}

// hScript judges script(1): -c runs a shell command; otherwise it starts an interactive
// shell; the operand is the typescript file it writes.
func hScript(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "cEIOBTm", long: []string{"command", "echo", "log-in", "log-out", "log-io", "log-timing", "logging-format", "output-limit"}, lopt: []string{"timing"}})
	for _, x := range p.ops {
		a.writeTarget(x, "write", c.pos, c.end)
	}
	if o, ok := p.get("c", "--command"); ok && o.has {
		return a.nested(o.val, POSIX, c)
	}
	a.find(c, "exec.shell-stdin", Ask, "script starts an interactive shell")
	return 0
}

var shellSpec = optSpec{arg: "oO", long: []string{"rcfile", "init-file"}, plus: true}

// hShell judges a shell: -c SCRIPT is judged recursively; a script file is workspace code;
// without either it runs commands from stdin (a here-document body is judged).
func hShell(a *analyzer, argv []arg, c *callInfo) eff {
	d := Bash
	switch argv[0].s {
	case "sh", "dash", "ash", "posh", "yash":
		d = POSIX
	}
	if onlyVersion(argv) {
		return 0
	}
	cmd := -1
	stdinMode := false
	i := 1
	for ; i < len(argv); i++ {
		s := argv[i].s
		if argv[i].dyn && strings.HasPrefix(s, dyn) {
			break
		}
		if s == "--" || s == "-" {
			i++
			if s == "-" {
				stdinMode = true
			}
			break
		}
		if len(s) < 2 || (s[0] != '-' && s[0] != '+') {
			break
		}
		if strings.HasPrefix(s, "--") {
			if s == "--rcfile" || s == "--init-file" {
				a.find(c, "exec.source", Ask, "The shell reads a startup file")
				i++
			}
			continue
		}
		for j := 1; j < len(s); j++ {
			switch s[j] {
			case 'c':
				cmd = 0
			case 's':
				stdinMode = true
			case 'o', 'O':
				i++
			}
		}
	}
	if cmd == 0 {
		if i >= len(argv) {
			a.find(c, "parse.error", Ask, "The shell's -c option has no script")
			return 0
		}
		if i+1 < len(argv) {
			// sh -c SCRIPT NAME ARG…: $0, $1 … of the script.
			a.params = make(map[string]string, len(argv)-i-1)
			for n, x := range argv[i+1:] {
				v := x.s
				if x.dyn {
					v = dyn
				}
				a.params[strconv.Itoa(n)] = v
				if n > 0 {
					if a.params["@"] != "" {
						a.params["@"] += " "
					}
					a.params["@"] += v
				}
			}
		}
		e := a.nested(argv[i], d, c)
		a.params = nil
		return e
	}
	if i < len(argv) && !stdinMode {
		x := argv[i]
		if x.proc && x.net {
			a.find(c, "network.pipe-to-shell", Deny, "A shell runs a downloaded script")
			return 0
		}
		if x.s == "/dev/stdin" || x.s == "/proc/self/fd/0" {
			return a.stdinCode(c, d, true)
		}
		if isDevTCP(x.s) {
			a.find(c, "network.pipe-to-shell", Deny, "The shell runs code read from a network connection")
			return 0
		}
		if a.runsFetched(x, c) {
			return 0
		}
		if a.runsWritten(x, d, c) || a.runsProcText(x, d, c) {
			return 0
		}
		a.find(c, "exec.workspace-code", Ask, "The shell runs the script "+display(x.s))
		return 0
	}
	return a.stdinCode(c, d, true)
}

// stdinCode judges a shell or interpreter that runs code from stdin: a literal here-document
// or here-string is judged (for shells) and otherwise a person must approve.
func (a *analyzer) stdinCode(c *callInfo, d Dialect, shell bool) eff {
	in := &c.in
	if in.hasInput {
		if in.net {
			a.find(c, "network.pipe-to-shell", Deny, "Downloaded or decoded content is fed to a shell or interpreter")
			return effShellStdin
		}
		if in.literal && shell {
			a.nestedText(in.body, in.mapBase, d, c)
			return effShellStdin
		}
		if !in.literal {
			a.find(c, "dynamic.script", Ask, "The script fed on stdin is only known at run time")
			return effShellStdin | effStdinCode
		}
	}
	if shell && !in.hasInput && a.pipeKnown {
		text := a.pipeText
		a.pipeText, a.pipeKnown = "", false
		a.nestedText(text, -1, d, c)
		return effShellStdin
	}
	if shell {
		if !in.hasInput {
			a.find(c, "exec.shell-stdin", Ask, "")
		}
	} else {
		a.find(c, "exec.shell-stdin", Ask, "")
	}
	return effShellStdin | effStdinCode
}

// joinArgs joins argument values with spaces, as eval and watch do, keeping run-time marks.
func joinArgs(xs []arg) arg {
	if len(xs) == 1 {
		return xs[0]
	}
	var b strings.Builder
	out := arg{}
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.s)
		out.dyn = out.dyn || x.dyn
		out.net = out.net || x.net
	}
	out.s = b.String()
	return out
}

// hEval judges eval: its joined arguments are judged as a script.
func hEval(a *analyzer, argv []arg, c *callInfo) eff {
	if len(argv) < 2 {
		return 0
	}
	return a.evalNested(joinArgs(argv[1:]), c)
}

// dialect returns the dialect of the current shell.
func (a *analyzer) dialect() Dialect { return a.curDialect }

// hSource judges source and '.': they run a file's commands in this shell.
func hSource(a *analyzer, argv []arg, c *callInfo) eff {
	if len(argv) < 2 {
		return 0
	}
	x := argv[1]
	if x.net {
		a.find(c, "network.pipe-to-shell", Deny, "The shell runs a downloaded script")
		return 0
	}
	if x.s == "/dev/stdin" || x.s == "/proc/self/fd/0" {
		return a.stdinCode(c, a.dialect(), true)
	}
	if isDevTCP(x.s) {
		a.find(c, "network.pipe-to-shell", Deny, "The shell runs code read from a network connection")
		return 0
	}
	if a.runsFetched(x, c) {
		return 0
	}
	if a.runsWritten(x, a.dialect(), c) || a.runsProcText(x, a.dialect(), c) {
		return 0
	}
	a.find(c, "exec.source", Ask, "")
	return 0
}

// hTrap judges trap: the handler body is judged as a script.
func hTrap(a *analyzer, argv []arg, c *callInfo) eff {
	ops := argv[1:]
	if len(ops) > 0 && ops[0].s == "--" {
		ops = ops[1:]
	}
	if len(ops) < 2 || strings.HasPrefix(ops[0].s, "-") && !ops[0].dyn {
		return 0
	}
	return a.nested(ops[0], a.dialect(), c)
}

// hAlias judges alias definitions: the value is judged as a command, and a name that is a
// command is shadowing.
func hAlias(a *analyzer, argv []arg, c *callInfo) eff {
	var e eff
	for _, x := range argv[1:] {
		name, val, ok := strings.Cut(x.s, "=")
		if !ok {
			continue
		}
		if shadows(name) {
			a.find(c, "function.shadow", Ask, "The alias "+name+" has the name of a command")
		}
		y := subArg(x, val)
		e |= a.nested(y, a.dialect(), c)
	}
	return e
}

// hExec judges exec: with a command it replaces the shell with it.
func hExec(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "a", stop: true})
	if p.rest >= len(argv) {
		return 0
	}
	return a.judge(argv[p.rest:], c)
}

// hCommand judges command: -v and -V only look names up; otherwise the command runs
// (bypassing functions).
func hCommand(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{stop: true})
	if p.has("v", "V") || p.rest >= len(argv) {
		return 0
	}
	funcs := a.funcs
	a.funcs = nil
	e := a.judge(argv[p.rest:], c)
	a.funcs = funcs
	return e
}

// hBuiltin judges builtin: the builtin named runs.
func hBuiltin(a *analyzer, argv []arg, c *callInfo) eff {
	if len(argv) < 2 {
		return 0
	}
	funcs := a.funcs
	a.funcs = nil
	e := a.judge(argv[1:], c)
	a.funcs = funcs
	return e
}

var xargsSpec = optSpec{arg: "adEILnPs", opt: "eil", long: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}, lopt: []string{"replace", "eof", "max-lines"}, stop: true}

// hXargs judges xargs: its command runs with arguments only known at run time.
func hXargs(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &xargsSpec)
	if p.rest >= len(argv) {
		return 0
	}
	sub := append(append([]arg(nil), argv[p.rest:]...), arg{s: a.cwdOrDyn() + "/" + dyn, dyn: true})
	repl := ""
	if o, ok := p.get("I", "i", "--replace"); ok {
		repl = "{}"
		if o.has && o.val.s != "" {
			repl = o.val.s
		}
		sub = sub[:len(sub)-1]
		for i := 0; i < len(sub); i++ {
			if strings.Contains(sub[i].s, repl) {
				sub[i] = arg{s: strings.ReplaceAll(sub[i].s, repl, dyn), dyn: true}
			}
		}
	}
	e := a.judge(sub, c)
	if _, fromFile := p.get("a", "--arg-file"); !fromFile {
		e |= a.xargsKnownInput(argv[p.rest:], repl, c)
	}
	return e
}

// maxXargsItems is the most input items of xargs judged one by one.
const maxXargsItems = 16

// xargsKnownInput judges cmd once more with the items of xargs's input when that input is
// known text (echo / | xargs rm -rf, xargs rm -rf <<< ~): items split at blanks, quotes
// removed, as xargs(1) reads them; with repl (-I) each item replaces repl in its own run.
func (a *analyzer) xargsKnownInput(cmd []arg, repl string, c *callInfo) eff {
	text, ok := "", false
	switch {
	case c.in.hasInput && c.in.literal:
		text, ok = c.in.body, true
	case !c.in.hasInput && a.pipeKnown:
		text, ok = a.pipeText, true
	}
	if !ok || strings.Contains(text, dyn) {
		return 0
	}
	items := strings.Fields(strings.NewReplacer(`"`, "", `'`, "", `\`, "").Replace(text))
	if len(items) == 0 || len(items) > maxXargsItems {
		return 0
	}
	if repl == "" {
		run := append([]arg(nil), cmd...)
		for _, it := range items {
			run = append(run, lit(it))
		}
		return a.judge(run, c)
	}
	var e eff
	for _, it := range items {
		run := make([]arg, len(cmd))
		for i, x := range cmd {
			run[i] = x
			if strings.Contains(x.s, repl) && !x.dyn {
				run[i] = lit(strings.ReplaceAll(x.s, repl, it))
			}
		}
		e |= a.judge(run, c)
	}
	return e
}

// hWatch judges watch: without -x it joins its arguments and runs them with sh -c.
func hWatch(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &optSpec{arg: "nq", long: []string{"interval", "equexit"}, lopt: []string{"differences"}, stop: true})
	if p.rest >= len(argv) {
		return 0
	}
	if p.has("x", "--exec") {
		return a.judge(argv[p.rest:], c)
	}
	return a.nested(joinArgs(argv[p.rest:]), POSIX, c)
}

// hBusybox judges busybox and toybox: the applet named runs.
func hBusybox(a *analyzer, argv []arg, c *callInfo) eff {
	if len(argv) < 2 || strings.HasPrefix(argv[1].s, "-") {
		return 0
	}
	return a.judge(argv[1:], c)
}

var envSpec = optSpec{arg: "uCSP", long: []string{"unset", "chdir", "split-string", "block-signal", "default-signal", "ignore-signal"}, stop: true}

// hEnv judges env: NAME=VALUE operands set the environment (injection rules), -C changes
// directory, -S splits a string into arguments; the command after them is judged.
func hEnv(a *analyzer, argv []arg, c *callInfo) eff {
	p := parseArgs(argv, &envSpec)
	rest := argv[p.rest:]
	cwd := a.cwd
	defer func() { a.cwd = cwd }()
	for _, o := range p.opts {
		switch o.name {
		case "C", "--chdir":
			if q, ok := a.resolve(o.val); ok && !strings.Contains(q, dyn) {
				a.cwd = q
			} else {
				a.cwd = ""
			}
		case "S", "--split-string":
			if o.val.dyn {
				a.find(c, "dynamic.command", Ask, "env -S splits a string only known at run time")
				return effShellStdin
			}
			words, ok := splitEnvString(o.val.s)
			if !ok {
				a.find(c, "parse.error", Ask, "env -S has an unclosed quote")
				return 0
			}
			var split []arg
			for _, f := range words {
				split = append(split, lit(f))
			}
			rest = append(split, rest...)
		}
	}
	if len(rest) > 0 && rest[0].s == "-" && !rest[0].dyn {
		rest = rest[1:] // env - is env -i (POSIX)
	}
	for len(rest) > 0 {
		k, v, ok := strings.Cut(rest[0].s, "=")
		if !ok || k == "" || strings.HasPrefix(k, "-") {
			break
		}
		if rest[0].dyn && strings.HasPrefix(rest[0].s, dyn) {
			a.find(c, "env.dynamic", Ask, "")
		} else {
			if !a.workspaceEnvAssign(k, v, !rest[0].dyn, nil, c) {
				a.envName(k, c)
			}
			a.envFile(k, v, !strings.Contains(v, dyn), c)
		}
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return effCredRead // env prints the environment, which holds tokens
	}
	return a.judge(rest, c)
}

// suSpec is the option grammar of su and runuser (util-linux): options with an argument,
// then the user and the shell's arguments.
var suSpec = optSpec{arg: "ugGsCwc", long: []string{"user", "group", "supp-group", "shell", "command", "session-command", "whitelist-environment"}, stop: true}

// isShellName reports whether p names a shell by its base name.
func isShellName(p string) bool {
	switch path.Base(p) {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "yash", "ash", "nologin", "false", "true":
		return true
	}
	return false
}

var sudoSpec = optSpec{arg: "ugCDhprtTUc", long: []string{"user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "command-timeout", "other-user", "login-class", "preserve-env-list"}, stop: true}

// hSudo judges sudo, doas, su, pkexec and run0: in user context privilege escalation is
// denied (admin work goes through s-code run --root); in root context the command is judged.
func hSudo(a *analyzer, argv []arg, c *callInfo) eff {
	name := argv[0].s
	if a.ctx.Role != RoleRoot {
		if (name == "sudo" || name == "doas") && len(argv) == 2 && (argv[1].s == "-l" || argv[1].s == "-V" || argv[1].s == "-k" || argv[1].s == "-K" || argv[1].s == "--version") {
			return 0
		}
		a.find(c, "privilege.escalation", Deny, "")
		return 0
	}
	switch name {
	case "su", "runuser", "ksu", "sg":
		login := false
		for i := 1; i < len(argv); i++ {
			if argv[i].s == "-" || argv[i].s == "-l" || argv[i].s == "--login" {
				login = true // a login shell starts in the user's home directory
			}
			if (argv[i].s == "-c" || argv[i].s == "--command") && i+1 < len(argv) {
				x := argv[i+1]
				return a.inDir(arg{}, login, func() eff { return a.nested(x, Bash, c) })
			}
		}
		p := parseArgs(argv, &suSpec)
		if u, ok := p.get("u", "--user"); ok && u.has && name == "runuser" && p.rest < len(argv) {
			return a.judge(argv[p.rest:], c) // runuser -u USER [--] COMMAND runs COMMAND directly
		}
		if sh, ok := p.get("s", "--shell"); ok && sh.has && !isShellName(sh.val.s) {
			// su -s /bin/rm root -- -rf /: the "shell" runs with the arguments after the user.
			args := argv[p.rest:]
			if len(args) > 0 && !strings.HasPrefix(args[0].s, "-") {
				args = args[1:] // the user
			}
			if len(args) > 0 && args[0].s == "--" {
				args = args[1:]
			}
			return a.judge(append([]arg{sh.val}, args...), c)
		}
		a.find(c, "exec.shell-stdin", Ask, "This starts an interactive root shell")
		return 0
	case "sudoedit":
		a.find(c, "root.change", Ask, "sudoedit edits files as root")
		return 0
	}
	p := parseArgs(argv, &sudoSpec)
	if p.has("e", "--edit") {
		a.find(c, "root.change", Ask, "sudo -e edits files as root")
		return 0
	}
	if p.rest >= len(argv) {
		if p.has("i", "s", "--login", "--shell") {
			a.find(c, "exec.shell-stdin", Ask, "This starts an interactive shell")
		}
		return 0
	}
	rest := argv[p.rest:]
	for len(rest) > 0 {
		k, _, ok := strings.Cut(rest[0].s, "=")
		if !ok || k == "" || strings.HasPrefix(k, "-") {
			break
		}
		a.envName(k, c)
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return 0
	}
	// sudo -D DIR runs the command in DIR; -i in the target user's home directory.
	if d, ok := p.get("D", "--chdir"); ok && d.has {
		return a.inDir(d.val, false, func() eff { return a.judge(rest, c) })
	}
	if p.has("i", "--login") {
		return a.inDir(arg{}, true, func() eff { return a.judge(rest, c) })
	}
	return a.judge(rest, c)
}

// hDisown: disown, bg and fg manage background jobs.
func hDisown(a *analyzer, argv []arg, c *callInfo) eff {
	a.find(c, "background.job", Ask, argv[0].s+" manages background jobs")
	return 0
}

// hPerf judges perf: stat, record and trace run a command.
func hPerf(a *analyzer, argv []arg, c *callInfo) eff {
	a.find(c, "exec.tool-exec", Ask, "perf profiles programs and writes perf.data")
	if len(argv) < 3 {
		return 0
	}
	switch argv[1].s {
	case "stat", "record", "trace", "mem", "c2c", "kmem", "lock", "sched", "kvm":
	default:
		return 0
	}
	i := 2
	for i < len(argv) && strings.HasPrefix(argv[i].s, "-") {
		s := argv[i].s
		i++
		if s == "--" {
			break
		}
		if len(s) == 2 && strings.ContainsRune("eopptCFcrGIuxmnd", rune(s[1])) {
			i++
		}
	}
	if i >= len(argv) {
		return 0
	}
	return a.judge(argv[i:], c)
}

// hGdb judges gdb and lldb: --args runs the program that follows; -ex and -batch commands can
// run shell commands.
func hGdb(a *analyzer, argv []arg, c *callInfo) eff {
	a.find(c, "exec.tool-exec", Ask, argv[0].s+" runs and controls a program")
	if argv[0].s == "gdb" {
		a.optionPayload(argv, optionPayloads["gdb"], c)
	}
	for i, x := range argv[1:] {
		if x.s == "--args" || x.s == "--" && argv[0].s == "lldb" {
			if i+2 < len(argv) {
				return a.judge(argv[i+2:], c)
			}
		}
	}
	return 0
}

// hHyperfine judges hyperfine: each command operand, and --prepare, --setup, --cleanup and
// --conclude, is a shell command.
func hHyperfine(a *analyzer, argv []arg, c *callInfo) eff {
	a.find(c, "exec.tool-exec", Ask, "hyperfine runs commands repeatedly")
	var e eff
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		switch {
		case s == "-p" || s == "--prepare" || s == "-s" || s == "--setup" || s == "-c" || s == "--cleanup" || s == "--conclude":
			if i+1 < len(argv) {
				e |= a.nested(argv[i+1], POSIX, c)
				i++
			}
		case strings.HasPrefix(s, "--export-") || s == "--output":
			if i+1 < len(argv) {
				a.writeTarget(argv[i+1], "write", c.pos, c.end)
				i++
			}
		case s == "-S" || s == "--shell":
			a.find(c, "exec.tool-exec", Ask, "hyperfine --shell picks the program that runs the commands")
			i++
		case len(s) == 2 && s[0] == '-' && strings.ContainsRune("wrmMLnu", rune(s[1])):
			i++
			if s == "-L" {
				i++
			}
		case strings.HasPrefix(s, "-"):
		default:
			e |= a.nested(argv[i], POSIX, c)
		}
	}
	return e
}

// hEntr judges entr: it runs its utility when files change; -s runs it with the shell.
func hEntr(a *analyzer, argv []arg, c *callInfo) eff {
	shell := false
	i := 1
	for ; i < len(argv) && strings.HasPrefix(argv[i].s, "-"); i++ {
		if strings.Contains(argv[i].s, "s") {
			shell = true
		}
	}
	if i >= len(argv) {
		return 0
	}
	a.find(c, "background.job", Ask, "entr keeps running the command whenever files change")
	if shell {
		return a.nested(joinArgs(argv[i:]), POSIX, c)
	}
	return a.judge(argv[i:], c)
}

// hTerminal judges terminal emulators started with a command (xterm -e, gnome-terminal --).
func hTerminal(a *analyzer, argv []arg, c *callInfo) eff {
	a.find(c, "background.job", Ask, argv[0].s+" opens a terminal window")
	for i, x := range argv[1:] {
		if x.s == "-e" || x.s == "-x" || x.s == "--" || x.s == "--command" || x.s == "--execute" {
			rest := argv[i+2:]
			if len(rest) == 1 {
				return a.nested(rest[0], POSIX, c)
			}
			if len(rest) > 0 {
				return a.judge(rest, c)
			}
		}
	}
	return 0
}

// tmuxCommandVerbs are tmux commands whose last operand is a shell command.
var tmuxCommandVerbs = map[string]bool{
	"new": true, "new-session": true, "new-window": true, "neww": true, "split-window": true,
	"splitw": true, "respawn-pane": true, "respawnp": true, "respawn-window": true,
	"respawnw": true, "run-shell": true, "run": true, "if-shell": true, "if": true,
	"pipe-pane": true, "pipep": true, "display-popup": true, "popup": true,
}

// tmuxCommand judges tmux and screen commands that start a shell command (the command is
// judged) or type keys into a session (ask); it reports whether argv was such a command.
func (a *analyzer) tmuxCommand(argv []arg, c *callInfo) (eff, bool) {
	for i, x := range argv[1:] {
		if x.s == "send-keys" || x.s == "send" || x.s == "stuff" {
			a.find(c, "exec.tool-exec", Ask, "Typing keys into a terminal session runs whatever they spell")
			return 0, true
		}
		if tmuxCommandVerbs[x.s] {
			rest := argv[i+2:]
			var ops []arg
			for j := 0; j < len(rest); j++ {
				s := rest[j].s
				if strings.HasPrefix(s, "-") && len(s) > 1 {
					if strings.ContainsAny(s[len(s)-1:], "cntFeslxyLPStTw") && j+1 < len(rest) {
						j++
					}
					continue
				}
				ops = append(ops, rest[j])
			}
			if len(ops) == 0 {
				return 0, true
			}
			if len(ops) == 1 {
				return a.nested(ops[0], POSIX, c), true
			}
			return a.judge(ops, c), true
		}
	}
	return 0, false
}
