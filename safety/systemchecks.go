package safety

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Smaller classes: signals that send nothing, configuration checks that write nothing,
// shells started through machine and namespace managers, visudo on drop-ins, paths computed
// from the repository, and root-context messages.

// rootMessages replaces, in the root context, the message of rules whose user-context
// message advises working inside the workspace: admin work through the root helper has no
// workspace to point to. TestRootMessages keeps every deny rule's root wording free of it.
var rootMessages = map[string]string{
	"destructive.rm-root":        "This deletes the root directory or a system directory, which destroys the system; delete only the specific files that must go, by their full paths." + retry,
	"destructive.rm-home":        "This deletes a home directory or all of its contents; delete only the specific files that must go, by their full paths." + retry,
	"destructive.rm-workspace":   "This deletes a whole project directory; delete only the specific files or build directories that must go." + retry,
	"write.outside-workspace":    "This changes files outside the directories this command may change; make the change by hand." + retry,
	"redirect.outside-workspace": "This redirection writes outside the directories this command may change; write the file by hand." + retry,
	"write.system":               "This changes a system directory in a way that is never allowed from here; make the change by hand." + retry,
	"redirect.system":            "This redirection writes to a system file in a way that is never allowed from here; make the change by hand." + retry,
	"network.pipe-to-shell":      "This runs downloaded or decoded content as code without anyone reading it. Download the file, read it, then run it as a separate command." + retry,
}

// ruleMessage returns the message of rule id in the analyzer's context.
func (a *analyzer) ruleMessage(id string) string {
	if a.ctx.Role == RoleRoot {
		if m, ok := rootMessages[id]; ok {
			return m
		}
	}
	return rules[id].message
}

func init() {
	for _, n := range []string{"kill", "pkill", "killall"} {
		h := commands[n]
		commands[n] = func(a *analyzer, argv []arg, c *callInfo) eff {
			if killZero(argv) {
				return 0
			}
			return h(a, argv, c)
		}
	}
	for _, n := range []string{"sshd", "nginx", "apachectl", "apache2ctl", "httpd", "haproxy", "named-checkconf", "named-checkzone", "caddy", "promtool", "amtool", "unbound-checkconf", "dnsmasq", "exim", "squid", "php-fpm", "lighttpd", "varnishd", "keepalived", "chronyd", "dhcpd", "kea-dhcp4", "smbd", "testparm", "systemd-analyze"} {
		h := commands[n]
		if h == nil {
			h = func(a *analyzer, argv []arg, c *callInfo) eff {
				a.find(c, "unknown.command", Ask, "The program "+argv[0].s+" is not known")
				return 0
			}
		}
		commands[n] = configCheck(h)
	}
	commands["machinectl"] = hMachinectl
	nsenter := commands["nsenter"]
	commands["nsenter"] = func(a *analyzer, argv []arg, c *callInfo) eff {
		if a.ctx.Role != RoleRoot {
			a.find(c, "privilege.escalation", Deny, "nsenter enters the namespaces of another process, such as the host's as root")
			return 0
		}
		return nsenter(a, argv, c)
	}
	for _, n := range []string{"systemd-nspawn", "chroot"} {
		h := commands[n]
		commands[n] = func(a *analyzer, argv []arg, c *callInfo) eff {
			if a.ctx.Role != RoleRoot {
				a.find(c, "privilege.escalation", Deny, argv[0].s+" needs root and runs a shell in another root")
				return 0
			}
			if h == nil {
				a.find(c, "root.change", Ask, argv[0].s+" runs a command in another root")
				return 0
			}
			return h(a, argv, c)
		}
	}
	visudo := commands["visudo"]
	commands["visudo"] = func(a *analyzer, argv []arg, c *callInfo) eff {
		return hVisudo(a, argv, c, visudo)
	}
}

// killZero reports whether kill(1), pkill(1) or killall(1) sends signal 0, which only
// checks that the processes exist (kill(2): "If sig is 0, then no signal is sent"): kill -0
// PID, kill -s 0, kill -n 0, pkill -0 PATTERN, killall -0 NAME; -0 as the signal, followed
// by the processes and nothing else (an option after it may be pkill's -signal form).
func killZero(argv []arg) bool {
	if len(argv) < 3 {
		return false
	}
	s := argv[1].s
	pids := argv[2:]
	switch {
	case s == "-0":
	case (s == "-s" || s == "-n" || s == "--signal") && argv[2].s == "0":
		pids = argv[3:]
	case s == "--signal=0":
	default:
		return false
	}
	if len(pids) > 0 && pids[0].s == "--" {
		pids = pids[1:]
	}
	if len(pids) == 0 {
		return false
	}
	for _, p := range pids {
		if p.dyn && !strings.HasPrefix(p.s, dyn) {
			return false
		}
		if strings.HasPrefix(p.s, "-") && !isDigits(p.s[1:]) {
			return false // an option after the signal
		}
	}
	return true
}

// configCheck wraps the handler of a daemon whose test mode only parses its configuration
// and reports (sshd -t/-T, nginx -t/-T, apachectl configtest, haproxy -c, named-checkconf,
// caddy validate, promtool check, testparm -s, systemd-analyze verify …): such a run writes
// nothing and starts nothing. nginx with -c, -g or -p reads configuration the command names,
// which can load modules (load_module runs code), so it is judged by h.
func configCheck(h handler) handler {
	return func(a *analyzer, argv []arg, c *callInfo) eff {
		if configCheckOnly(argv) {
			return 0
		}
		return h(a, argv, c)
	}
}

// configCheckOnly reports whether argv runs a daemon's configuration test only.
func configCheckOnly(argv []arg) bool {
	name := argv[0].s
	has := func(flags ...string) bool {
		for _, x := range argv[1:] {
			for _, f := range flags {
				if x.s == f {
					return true
				}
			}
		}
		return false
	}
	first := firstWord(argv)
	for _, x := range argv[1:] {
		if x.dyn || x.proc {
			return false
		}
	}
	switch name {
	case "sshd":
		// sshd -t / -T (-T prints the effective configuration); -f, -C, -o and -h only
		// choose what is tested. -D, -d or -e would run the daemon too.
		return has("-t", "-T") && !has("-D", "-d", "-e", "-i")
	case "nginx":
		return has("-t", "-T") && !has("-c", "-g", "-p", "-s", "-e")
	case "apachectl", "apache2ctl":
		return first == "configtest" || first == "-t" || has("-t") && len(argv) == 2 || first == "-S" || first == "-M" || first == "-v" || first == "-V"
	case "httpd":
		return (has("-t") || has("-S") || has("-M")) && !has("-f", "-C", "-c", "-d", "-k")
	case "haproxy":
		return has("-c") && !has("-D", "-W", "-Ws", "-sf", "-st")
	case "named-checkconf", "named-checkzone", "unbound-checkconf", "testparm":
		return !has("-z", "-D", "-w", "-o") || name == "testparm"
	case "caddy":
		return first == "validate" || first == "version" || first == "list-modules" || first == "fmt" && !has("--overwrite", "-w")
	case "promtool":
		return first == "check"
	case "amtool":
		return first == "check-config"
	case "dnsmasq":
		return has("--test")
	case "exim":
		return has("-bV")
	case "squid":
		return has("-k") && argIs(argv, "-k", "parse")
	case "php-fpm":
		return has("-t", "--test")
	case "lighttpd":
		return has("-t", "-tt") && !has("-D", "-f") || has("-t") && has("-f") && !has("-D")
	case "varnishd":
		return has("-C")
	case "keepalived":
		return has("-t", "--config-test")
	case "chronyd":
		return has("-p")
	case "dhcpd":
		return has("-t", "-T")
	case "kea-dhcp4":
		return has("-t")
	case "smbd":
		return has("-b", "--build-options")
	case "systemd-analyze":
		switch first {
		case "verify", "cat-config", "calendar", "timespan", "timestamp", "time", "blame", "critical-chain", "dot", "dump", "unit-paths", "security", "syscall-filter", "filesystems", "condition", "exit-status", "capability", "plot":
			return !has("--man=yes") && !has("--generators=yes")
		}
	}
	return false
}

// argIs reports whether option o of argv is followed by v.
func argIs(argv []arg, o, v string) bool {
	for i := 1; i+1 < len(argv); i++ {
		if argv[i].s == o && argv[i+1].s == v {
			return true
		}
	}
	return false
}

// hMachinectl judges machinectl(1): shell and login start a shell in a machine, by default
// the host itself as root ("machinectl shell root@"): a privilege change in a user session;
// in the root context the command of shell is judged. Listing and status are read-only;
// other verbs change machines or images.
func hMachinectl(a *analyzer, argv []arg, c *callInfo) eff {
	var ops []arg
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		if strings.HasPrefix(s, "-") {
			switch s {
			case "-M", "--machine", "-H", "--host", "-p", "--property", "-o", "--output", "-n", "--lines", "-s", "--signal", "--kill-whom", "--uid", "-E", "--setenv", "--format", "--max-addresses":
				i++
			}
			continue
		}
		ops = append(ops, argv[i])
	}
	verb := ""
	if len(ops) > 0 {
		verb = ops[0].s
	}
	switch verb {
	case "", "list", "status", "show", "list-images", "image-status", "show-image":
		return 0
	case "shell", "login":
		if a.ctx.Role != RoleRoot {
			a.find(c, "privilege.escalation", Deny, "machinectl "+verb+" opens a shell in a machine, by default the host as root")
			return 0
		}
		if verb == "shell" && len(ops) > 1 {
			// machinectl [options] shell [MACHINE [COMMAND [ARG…]]]: the command's own
			// options follow the machine.
			for i, x := range argv {
				if x.s == ops[1].s && i > 0 && argv[i-1].s != "-M" && argv[i-1].s != "--machine" && i+1 < len(argv) && x.s != "shell" {
					a.find(c, "root.change", Ask, "machinectl shell runs a command in a machine")
					return a.judge(argv[i+1:], c)
				}
			}
		}
		a.find(c, "exec.shell-stdin", Ask, "machinectl "+verb+" starts an interactive shell")
		return 0
	}
	a.sysChange(c, "machinectl "+verb+" changes machines or images")
	return 0
}

// hVisudo judges visudo(8): -c checks and writes nothing; otherwise it edits the sudoers
// file, or with -f the file named (a drop-in under /etc/sudoers.d): writing sudoers is
// persistence, denied in the root context as every sudoers write is; in a user session
// visudo needs root (h judges it).
func hVisudo(a *analyzer, argv []arg, c *callInfo, h handler) eff {
	p := parseArgs(argv, &optSpec{arg: "f", long: []string{"file"}})
	if p.has("c", "--check") || p.has("V", "--version") || p.has("h", "--help") {
		return 0
	}
	if a.ctx.Role != RoleRoot {
		return h(a, argv, c)
	}
	target := lit("/etc/sudoers")
	if o, ok := p.get("f", "--file"); ok && o.has {
		target = o.val
	} else if len(p.ops) > 0 {
		target = p.ops[0] // visudo [file] (sudo 1.9)
	}
	a.writeTarget(target, "write", c.pos, c.end)
	if q, ok := a.resolve(target); !ok || !a.persistencePath(q) {
		a.find(c, "root.change", Ask, "visudo edits "+display(target.s))
	}
	return 0
}

// persistencePath reports whether p is a sudoers file (sudoers(5): /etc/sudoers and the
// files of /etc/sudoers.d, also under /private/etc on macOS), whose change visudo makes.
func (a *analyzer) persistencePath(p string) bool {
	for _, d := range []string{"/etc", "/private/etc", "/usr/local/etc"} {
		if p == d+"/sudoers" || within(p, d+"/sudoers.d") && p != d+"/sudoers.d" {
			return true
		}
	}
	return false
}

// repoPathOutput returns what a command substitution prints when it is a path query of the
// repository or of known paths ($(git rev-parse --show-toplevel), $(dirname DIR),
// $(realpath DIR), $(cd DIR && pwd)), so that a destructive path computed from the
// repository is judged by where it lands. The repository's top level is taken to be the
// workspace (when the working directory is inside it): git(1) finds the repository from the
// working directory upwards, so the top level is the workspace or a directory above it, and
// paths computed from either land the same side of the workspace for ".." and for the top
// level itself.
func repoPathOutput(a *analyzer, stmts []*syntax.Stmt) (string, bool) {
	if len(stmts) != 1 || len(stmts[0].Redirs) > 0 || stmts[0].Background || stmts[0].Negated {
		return "", false
	}
	if b, ok := stmts[0].Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.AndStmt {
		// $(cd DIR && pwd)
		l, lok := b.X.Cmd.(*syntax.CallExpr)
		r, rok := b.Y.Cmd.(*syntax.CallExpr)
		if lok && rok && len(l.Args) == 2 && l.Args[0].Lit() == "cd" && len(r.Args) == 1 && r.Args[0].Lit() == "pwd" && len(b.X.Redirs) == 0 && len(b.Y.Redirs) == 0 {
			if d, ok := a.knownPath(l.Args[1]); ok {
				return d, true
			}
		}
		return "", false
	}
	call, ok := stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) < 2 {
		return "", false
	}
	words := make([]string, len(call.Args))
	for i, w := range call.Args {
		words[i] = w.Lit()
	}
	ws, cwd := a.ctx.Workspace, a.cwd
	inRepo := ws != "" && cwd != "" && within(cwd, ws)
	switch words[0] {
	case "git":
		if len(words) != 3 || words[1] != "rev-parse" || !inRepo {
			return "", false
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(cwd, ws), "/")
		switch words[2] {
		case "--show-toplevel":
			return ws, true
		case "--absolute-git-dir":
			return ws + "/.git", true
		case "--git-dir", "--git-common-dir":
			if rel == "" {
				return ".git", true
			}
			return ws + "/.git", true
		case "--show-cdup":
			if rel == "" {
				return "", true
			}
			return strings.Repeat("../", strings.Count(rel, "/")+1), true
		case "--show-prefix":
			if rel == "" {
				return "", true
			}
			return rel + "/", true
		}
	case "dirname", "realpath", "readlink":
		args := call.Args[1:]
		if words[0] == "readlink" {
			if len(args) != 2 || words[1] != "-f" && words[1] != "-e" && words[1] != "-m" {
				return "", false
			}
			args = args[1:]
		}
		if len(args) != 1 {
			return "", false
		}
		p, ok := a.knownPath(args[0])
		if !ok {
			return "", false
		}
		if words[0] == "dirname" {
			return path.Dir(p), true
		}
		return p, true
	}
	return "", false
}

// knownPath returns the absolute, cleaned path a word names when its value is known.
func (a *analyzer) knownPath(w *syntax.Word) (string, bool) {
	var buf [2]arg
	vs := a.word(buf[:0], w, false)
	if len(vs) != 1 || vs[0].dyn || vs[0].glob {
		return "", false
	}
	p, ok := a.resolve(vs[0])
	if !ok || strings.Contains(p, dyn) {
		return "", false
	}
	return p, true
}
