package safety

import "strings"

// Payloads: options and operands whose value is a command that the tool runs. The value is
// judged with the same walker, in the tool's working directory, as the shell would run it;
// its findings join the tool's own (such as exec.tool-exec), so the stricter verdict wins:
// tar --to-command='rm -rf ~' is denied like rm -rf ~.

// payloadShell judges x, the value of an option that a tool runs with /bin/sh -c (or the
// user's shell, or by splitting it into words itself, which judges no more leniently).
func (a *analyzer) payloadShell(x arg, c *callInfo) eff {
	if strings.TrimSpace(x.s) == "" && !x.dyn {
		return 0
	}
	return a.nested(x, POSIX, c)
}

// tarPayload judges the program-running options of tar (GNU tar(1) "External programs"):
// --to-command, -I/--use-compress-program, --rsh-command, --rmt-command, -F/--info-script,
// --new-volume-script and --checkpoint-action=exec=COMMAND run COMMAND with /bin/sh -c,
// in the directory tar works in (-C DIR, when given).
func (a *analyzer) tarPayload(p parsed, o opt, c *callInfo) {
	if !o.has {
		return
	}
	cwd := a.cwd
	defer func() { a.cwd = cwd }()
	if d, ok := p.get("C", "--directory"); ok && d.has {
		if q, ok := a.resolve(d.val); ok && !strings.Contains(q, dyn) {
			a.cwd = q
		} else {
			a.cwd = ""
		}
	}
	switch o.name {
	case "I", "--use-compress-program", "--to-command", "--rsh-command", "--rmt-command", "F", "--info-script", "--new-volume-script":
		a.payloadShell(o.val, c)
	case "--checkpoint-action":
		if v, ok := strings.CutPrefix(o.val.s, "exec="); ok {
			a.payloadShell(subArg(o.val, v), c)
		}
	}
}

// sshCommandOptions are the ssh_config(5) keywords whose value is a command ssh runs
// locally with the user's shell: ProxyCommand, LocalCommand (with PermitLocalCommand),
// KnownHostsCommand. The value of an -o option may follow "=" or a blank.
var sshCommandOptions = []string{"proxycommand", "localcommand", "knownhostscommand"}

// sshOptionPayload returns the command of an ssh -o value that runs a local command, and
// whether it is one.
func sshOptionPayload(x arg) (arg, bool) {
	s := strings.TrimLeft(x.s, " \t")
	for _, k := range sshCommandOptions {
		if len(s) > len(k) && strings.EqualFold(s[:len(k)], k) {
			rest := s[len(k):]
			t := strings.TrimLeft(rest, " \t")
			if strings.HasPrefix(t, "=") {
				t = t[1:]
			} else if t == rest {
				continue // ProxyCommandX: another keyword
			}
			return subArg(x, strings.TrimLeft(t, " \t")), true
		}
	}
	return arg{}, false
}

// sshPayloads judges the local commands of ssh, scp and sftp options: -o KEYWORD=COMMAND
// (attached, -oProxyCommand=…, or the next word).
func (a *analyzer) sshPayloads(argv []arg, c *callInfo) {
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		var v arg
		switch {
		case s == "-o" && i+1 < len(argv):
			i++
			v = argv[i]
		case strings.HasPrefix(s, "-o") && len(s) > 2:
			v = subArg(argv[i], s[2:])
		default:
			continue
		}
		if cmd, ok := sshOptionPayload(v); ok && strings.TrimSpace(cmd.s) != "none" {
			a.payloadShell(cmd, c)
		}
	}
}

// parallelSpec is the option grammar of GNU parallel (parallel(1)): options that take an
// argument, so that the command is found after them.
var parallelSpec = optSpec{arg: "ajSdEIClLnNPsJ", long: []string{
	"arg-file", "jobs", "sshlogin", "sshloginfile", "slf", "delimiter", "eof", "replace",
	"colsep", "max-lines", "max-args", "max-replace-args", "max-procs", "max-chars",
	"profile", "timeout", "delay", "results", "res", "joblog", "tmpdir", "workdir", "wd",
	"halt", "halt-on-error", "retries", "env", "tag-string", "tagstring", "block", "block-size",
	"recstart", "recend", "memfree", "load", "nice", "basefile", "bf", "return",
	"transferfile", "tf", "id", "header", "limit", "ssh", "rpl", "parens", "filter",
	"termseq", "shuf", "resume-failed", "arg-sep", "arg-file-sep", "seqreplace", "cleanup",
	"semaphorename", "semaphore-timeout", "st", "fifo", "cat", "plus", "tmux", "ctag", "csv", "colour-failed", "sqlmaster", "sqlworker", "sqlandworker", "wait", "rsync-opt", "template", "bar-width", "sshdelay", "ssh-delay", "memsuspend", "process-slot-var",
}, stop: true}

// parallelFlags are long options of parallel that take no argument although a prefix of
// a listed option would read them as one.
var parallelFlags = map[string]bool{
	"--cat": true, "--fifo": true, "--plus": true, "--tmux": true, "--ctag": true, "--csv": true,
	"--shuf": true, "--resume-failed": true, "--cleanup": true, "--colour-failed": true, "--wait": true,
}

// maxParallelItems is the most ::: arguments of parallel judged one by one.
const maxParallelItems = 16

// hParallelCmd judges GNU parallel and sem: the command (joined with blanks, run by the
// shell) is judged with every replacement string ({}, {.}, {/}, {1} …) unknown, and once
// more for each argument given after ::: (parallel(1)); without a command the input lines
// are the commands.
func hParallelCmd(a *analyzer, argv []arg, c *callInfo) eff {
	// Rewrite flags that parallelSpec would read as taking an argument.
	av := make([]arg, 0, len(argv))
	for i, x := range argv {
		if i > 0 && parallelFlags[x.s] {
			continue
		}
		av = append(av, x)
	}
	p := parseArgs(av, &parallelSpec)
	if d, ok := p.get("--workdir", "--wd"); ok && d.has && d.val.s != "." && d.val.s != "..." {
		// --workdir DIR: the jobs run in DIR ("..." is a temporary directory of its own).
		return a.inDir(d.val, false, func() eff { return parallelJobs(a, av, p, c) })
	}
	return parallelJobs(a, av, p, c)
}

// parallelJobs judges the jobs of a parsed parallel command line.
func parallelJobs(a *analyzer, av []arg, p parsed, c *callInfo) eff {
	var cmd []arg
	var items []arg
	i := p.rest
	for ; i < len(av); i++ {
		if s := av[i].s; s == ":::" || s == "::::" || s == ":::+" || s == "::::+" {
			break
		}
		cmd = append(cmd, av[i])
	}
	fromFile := false
	for ; i < len(av); i++ {
		switch av[i].s {
		case ":::", ":::+":
		case "::::", "::::+":
			fromFile = true
		default:
			items = append(items, av[i])
		}
	}
	if len(cmd) == 0 {
		if len(items) > 0 && !fromFile {
			// parallel ::: 'rm -rf ~' 'ls': each argument is a command.
			var e eff
			for _, x := range items {
				e |= a.payloadShell(x, c)
			}
			return e
		}
		a.find(c, "exec.shell-stdin", Ask, "parallel runs its input lines as commands")
		return effShellStdin
	}
	if p.has("q", "--quote") {
		// -q: the command is not given to the shell; its words are the argv.
		e := a.judge(append(append([]arg(nil), cmd...), arg{s: a.cwdOrDyn() + "/" + dyn, dyn: true}), c)
		if !fromFile && len(items) <= maxParallelItems {
			for _, it := range items {
				if !it.dyn {
					e |= a.judge(append(append([]arg(nil), cmd...), it), c)
				}
			}
		}
		return e
	}
	text := joinArgs(cmd)
	hasRepl := parallelRepl(text.s)
	// parallel quotes each argument it puts into the command, so an argument is one word,
	// never code: an unknown one is a placeholder word, a known one its quoted value.
	run := func(item string) eff {
		t := text
		if hasRepl {
			t.s = replaceParallel(t.s, item)
		} else {
			t.s += " " + item
		}
		t.w = nil
		return a.payloadShell(t, c)
	}
	e := run("__dyn__")
	if !fromFile && len(items) > 0 && len(items) <= maxParallelItems {
		for _, it := range items {
			if !it.dyn {
				e |= run(shellQuoteWord(it.s))
			}
		}
	}
	return e
}

// parallelRepl reports whether s holds one of parallel's replacement strings.
func parallelRepl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return false
		}
		if isParallelRepl(s[i+1 : i+j]) {
			return true
		}
	}
	return false
}

// isParallelRepl reports whether {in} is a replacement string: {}, {.}, {/}, {//}, {/.},
// {#}, {%}, or a positional form ({1}, {1.}, {-1/}).
func isParallelRepl(in string) bool {
	switch in {
	case "", ".", "/", "//", "/.", "#", "%":
		return true
	}
	in = strings.TrimPrefix(in, "-")
	n := 0
	for n < len(in) && in[n] >= '0' && in[n] <= '9' {
		n++
	}
	if n == 0 {
		return false
	}
	switch in[n:] {
	case "", ".", "/", "//", "/.":
		return true
	}
	return false
}

// replaceParallel replaces every replacement string of s with v (a whole-argument value:
// the forms that strip an extension or a directory are judged as the whole value, which
// names the same tree or more).
func replaceParallel(s, v string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '{' {
			if j := strings.IndexByte(s[i:], '}'); j >= 0 && isParallelRepl(s[i+1:i+j]) {
				b.WriteString(v)
				i += j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// moreWrappers are commands that run the command after their options (and a fixed number
// of operands), not listed in wrappers.go: setarch(8) and its personality aliases,
// cpulimit(1), hwloc-bind(1), systemd-cat(1), lckdo(1), setlock(8), runcon(1),
// schedtool(8) -e, retry(1), mpirun(1).
var moreWrappers = map[string]*wrapSpec{
	"cpulimit":    {opts: optSpec{arg: "lpemc", long: []string{"limit", "pid", "exe", "path", "cpu"}, stop: true}, noCmd: []string{"p", "e", "P", "--pid", "--exe", "--path"}},
	"hwloc-bind":  {opts: optSpec{arg: "p", long: []string{"pid", "tid", "get", "membind", "cpubind"}, stop: true}, skip: 1},
	"systemd-cat": {opts: optSpec{arg: "tp", long: []string{"identifier", "priority", "stderr-priority", "level-prefix", "namespace"}, stop: true}},
	"lckdo":       {opts: optSpec{arg: "E", stop: true}, skip: 1},
	"setlock":     {opts: optSpec{stop: true}, skip: 1},
	"runcon":      {opts: optSpec{arg: "turl", long: []string{"type", "user", "role", "range"}, stop: true}},
	"retry":       {opts: optSpec{arg: "tdmx", long: []string{"times", "delay", "min", "max", "until"}, stop: true}},
	"mpirun":      {opts: optSpec{arg: "nNHx", long: []string{"np", "host", "hostfile", "machinefile", "map-by", "bind-to", "x"}, stop: true}},
	"mpiexec":     {opts: optSpec{arg: "nNHx", long: []string{"np", "host", "hostfile", "machinefile", "map-by", "bind-to", "x"}, stop: true}},
}

func init() {
	for name, sp := range moreWrappers {
		if wrappers[name] == nil {
			wrappers[name] = sp
		}
		commands[name] = hWrapper
	}
	commands["parallel"] = hParallelCmd
	commands["sem"] = hParallelCmd
	for _, n := range []string{"setarch", "linux32", "linux64", "i386", "x86_64"} {
		commands[n] = hSetarch
	}
	commands["schedtool"] = hSchedtool
	commands["capsh"] = hCapsh
}

// hSetarch judges setarch(8) and its aliases (linux32, linux64, i386, x86_64): personality
// flags (which take no argument) may come before and after the architecture, which only
// setarch names; then the command runs (without one, the user's shell starts).
func hSetarch(a *analyzer, argv []arg, c *callInfo) eff {
	i := 1
	archDone := argv[0].s != "setarch"
	for ; i < len(argv); i++ {
		s := argv[i].s
		if s == "--" {
			i++
			break
		}
		if strings.HasPrefix(s, "-") && len(s) > 1 && !argv[i].dyn {
			if s == "--list" {
				return 0
			}
			continue
		}
		if !archDone {
			archDone = true
			continue
		}
		break
	}
	if i >= len(argv) {
		a.find(c, "exec.shell-stdin", Ask, argv[0].s+" without a command starts an interactive shell")
		return 0
	}
	return a.judge(argv[i:], c)
}

// hSchedtool judges schedtool(8): -e COMMAND… runs a command; otherwise it acts on pids.
func hSchedtool(a *analyzer, argv []arg, c *callInfo) eff {
	for i, x := range argv[1:] {
		if x.s == "-e" {
			if i+2 < len(argv) {
				return a.judge(argv[i+2:], c)
			}
			return 0
		}
	}
	a.find(c, "system.kill", Ask, "schedtool changes the scheduling of running processes")
	return 0
}

// hCapsh judges capsh(1): the arguments after "--" are given to /bin/bash (so -c SCRIPT is a
// script); --shell=PROG names that shell. Capabilities it drops or keeps are not judged.
func hCapsh(a *analyzer, argv []arg, c *callInfo) eff {
	a.find(c, "exec.tool-exec", Ask, "capsh runs a shell with changed capabilities")
	shell := "bash"
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		if v, ok := strings.CutPrefix(s, "--shell="); ok {
			shell = v
		}
		if s == "--" || s == "==" {
			rest := append([]arg{{s: shell}}, argv[i+1:]...)
			return a.judge(rest, c)
		}
	}
	return 0
}

// wrappedPrograms are the programs an unknown wrapper is assumed to run when one of them
// appears among its operands with arguments of its own: shells, privilege tools and the
// commands that delete or overwrite files (sudo is left out: "searchsploit sudo 1.8" names it). Subcommand names that are also program names
// (init, reboot, passwd, mount) are left out: "adb reboot" and "borg init" name a verb of
// the tool, not a program it runs.
var wrappedPrograms = map[string]bool{
	"rm": true, "rmdir": true, "shred": true, "srm": true, "dd": true, "mv": true,
	"chmod": true, "chown": true, "chgrp": true, "truncate": true, "unlink": true,
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
	"fish": true, "eval": true, "xargs": true,
	"find": true, "env": true,
}

// wrappedCommand judges the command an unknown program may run: the first operand that is
// one of wrappedPrograms, with at least one argument, starts it (setarch-like wrappers not
// listed, such as "foo --opt rm -rf ~"). The unknown program itself asks; this only adds
// the inner command's findings, so that a destructive inner command is denied.
func (a *analyzer) wrappedCommand(argv []arg, c *callInfo) eff {
	for i := 1; i+1 < len(argv); i++ {
		x := argv[i]
		if x.dyn || x.s == "" || strings.HasPrefix(x.s, "-") {
			continue
		}
		name := x.s
		if j := strings.LastIndexByte(name, '/'); j >= 0 {
			if !systemBinDir(name[:j]) {
				continue
			}
			name = name[j+1:]
		}
		if !wrappedPrograms[name] || a.funcs[name] {
			continue
		}
		return a.judge(argv[i:], c)
	}
	return 0
}

// shellQuoteWord quotes s as one word for a POSIX shell.
func shellQuoteWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// optionPayloads are, per program, the options whose value is a command the program runs:
// "sh" a shell command (run with sh -c), "prog" a program run with arguments of its own
// choosing (judged with a run-time argument). Sources: sort(1) --compress-program, split(1)
// --filter, rg(1) --pre and --hostname-bin, fzf(1) --preview, wget(1) --use-askpass,
// vim(1) -c and --cmd (an Ex command; "!cmd" runs a shell command), gdb(1) -ex/-iex
// ("shell cmd" and "!cmd").
var optionPayloads = map[string]map[string]string{
	"sort":  {"--compress-program": "prog"},
	"split": {"--filter": "sh"},
	"rg":    {"--pre": "prog", "--hostname-bin": "prog"},
	"fzf":   {"--preview": "sh"},
	"sk":    {"--preview": "sh"},
	"wget":  {"--use-askpass": "prog"},
	"vim":   {"-c": "ex", "--cmd": "ex"}, "vi": {"-c": "ex", "--cmd": "ex"}, "nvim": {"-c": "ex", "--cmd": "ex"},
	"view": {"-c": "ex", "--cmd": "ex"}, "vimdiff": {"-c": "ex", "--cmd": "ex"}, "ex": {"-c": "ex", "--cmd": "ex"},
	"gdb": {"-ex": "gdb", "--ex": "gdb", "-iex": "gdb", "--eval-command": "gdb", "--init-eval-command": "gdb"},
}

func init() {
	for name, opts := range optionPayloads {
		h := commands[name]
		if h == nil {
			continue
		}
		opts := opts
		commands[name] = func(a *analyzer, argv []arg, c *callInfo) eff {
			e := h(a, argv, c)
			a.optionPayload(argv, opts, c)
			return e
		}
	}
}

// optionPayload judges the values of the payload options opts of argv (--opt VALUE,
// --opt=VALUE, and for vim +CMD).
func (a *analyzer) optionPayload(argv []arg, opts map[string]string, c *callInfo) {
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		if s == "--" {
			break
		}
		name, val, eq := strings.Cut(s, "=")
		how, ok := opts[name]
		var v arg
		switch {
		case ok && eq:
			v = subArg(argv[i], val)
		case ok && i+1 < len(argv):
			i++
			v = argv[i]
		case strings.HasPrefix(s, "+") && len(s) > 1 && opts["-c"] == "ex":
			how, v = "ex", subArg(argv[i], s[1:])
		default:
			continue
		}
		switch how {
		case "sh":
			a.payloadShell(v, c)
		case "prog":
			a.judge([]arg{v, {s: a.cwdOrDyn() + "/" + dyn, dyn: true}}, c)
		case "ex":
			// vim: "!cmd", ":!cmd", "silent !cmd", "r !cmd", "w !cmd": the text after "!".
			if j := strings.IndexByte(v.s, '!'); j >= 0 {
				a.payloadShell(subArg(v, v.s[j+1:]), c)
			}
		case "gdb":
			// gdb: "shell cmd" and "!cmd" run cmd with the shell.
			t := strings.TrimLeft(v.s, " \t")
			if r, ok := strings.CutPrefix(t, "shell "); ok {
				a.payloadShell(subArg(v, r), c)
			} else if r, ok := strings.CutPrefix(t, "!"); ok {
				a.payloadShell(subArg(v, r), c)
			}
		}
	}
}

// inDir judges fn with the working directory set to dir (resolved against the current one;
// unknown when dir is only known at run time), as a tool that changes directory before it
// runs its command does (sudo -D, systemd-run --working-directory, bwrap --chdir, nsenter
// --wd, parallel --workdir). An empty dir.s with unknown set means the directory is not known
// (a login shell's home directory, the root of a chroot).
func (a *analyzer) inDir(dir arg, unknown bool, fn func() eff) eff {
	cwd := a.cwd
	defer func() { a.cwd = cwd }()
	switch {
	case unknown:
		a.cwd = ""
	default:
		if q, ok := a.resolve(dir); ok && !strings.Contains(q, dyn) {
			a.cwd = q
		} else {
			a.cwd = ""
		}
	}
	return fn()
}

// systemdRunDir returns the directory systemd-run's command runs in (systemd.exec(5)
// WorkingDirectory=): --working-directory DIR, the current one with -d/--same-dir, else the
// root directory for the system manager and the home directory for the user manager.
func systemdRunDir(a *analyzer, p parsed) arg {
	if d, ok := p.get("--working-directory"); ok && d.has {
		return d.val
	}
	if p.has("d", "--same-dir") {
		return lit(a.cwdOrDyn())
	}
	if p.has("--user") {
		if a.ctx.Home == "" {
			return arg{s: dyn, dyn: true}
		}
		return lit(a.ctx.Home)
	}
	return lit("/")
}
