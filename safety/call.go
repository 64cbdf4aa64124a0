package safety

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// callInfo is the simple command being judged: its source range in the current source and
// what its redirections feed to its standard input.
type callInfo struct {
	pos, end int
	in       stdin
}

// newCall returns a callInfo from the analyzer's free list (so that judging allocates
// little); release it with freeCall when the call is judged.
func (a *analyzer) newCall(pos, end int) *callInfo {
	var c *callInfo
	if n := len(a.free); n > 0 {
		c = a.free[n-1]
		a.free = a.free[:n-1]
		*c = callInfo{}
	} else {
		c = new(callInfo)
	}
	c.pos, c.end = pos, end
	return c
}

func (a *analyzer) freeCall(c *callInfo) { a.free = append(a.free, c) }

// find records a finding about the simple command c.
func (a *analyzer) find(c *callInfo, id string, d Decision, detail string) {
	a.add(id, d, c.pos, c.end, detail)
}

// handler judges one command (argv[0] is its name, already resolved) and returns its effects.
type handler func(a *analyzer, argv []arg, c *callInfo) eff

// call judges a simple command: its assignments, its words and then its argv.
func (a *analyzer) call(x *syntax.CallExpr, in *stdin) eff {
	c := a.newCall(int(x.Pos().Offset()), int(x.End().Offset()))
	defer a.freeCall(c)
	c.in = *in
	readPrefix, ifsVal := a.ev.readPrefix, a.ev.prefixIFSVal
	a.ev.readPrefix = len(x.Args) > 0 && x.Args[0].Lit() == "read"
	a.ev.prefixIFSVal = nil
	for _, as := range x.Assigns {
		a.assign(as, c, len(x.Args) == 0)
	}
	a.ev.readPrefix = false
	defer func() { a.ev.readPrefix, a.ev.prefixIFSVal = readPrefix, ifsVal }()
	if len(x.Args) == 0 {
		return 0
	}
	start := len(a.argStack)
	for _, w := range x.Args {
		a.argStack = a.word(a.argStack, w, false)
	}
	argv := a.argStack[start:len(a.argStack):len(a.argStack)]
	defer func() { a.argStack = a.argStack[:start] }()
	if len(argv) == 0 || a.over {
		return 0
	}
	prefixIFS := a.ev.prefixIFS
	for _, as := range x.Assigns { // sticky: IFS=, eval 'read a b <<< …' splits on commas
		a.ev.prefixIFS = a.ev.prefixIFS || as.Name != nil && as.Name.Value == "IFS"
	}
	e := a.judge(argv, c)
	a.judgeAlternative(x, c)
	a.ev.prefixIFS = prefixIFS
	if in.cred && e&effNetwork != 0 {
		a.find(c, "exfil.credential", Deny, "A credential file is redirected into a network command")
	}
	if in.cred {
		e |= effCredRead // tr a b < ~/.ssh/id_rsa | curl -d @- URL: filters pass it on
	}
	if in.net && e&effShellStdin != 0 {
		a.find(c, "network.pipe-to-shell", Deny, "Downloaded or decoded content is fed to a shell or interpreter")
	}
	return e
}

// assign judges one assignment (a prefix of a command, a bare assignment or a declare
// argument) and, when bare, remembers a literal value.
func (a *analyzer) assign(as *syntax.Assign, c *callInfo, bare bool) {
	val, known := "", true
	if as.Index != nil {
		a.arith(as.Index)
	}
	var taint eff
	if as.Value != nil {
		var buf [2]arg
		vs := a.word(buf[:0], as.Value, true)
		if len(vs) == 1 && !vs[0].dyn {
			val = vs[0].s
		} else {
			known = false
		}
		for _, v := range vs {
			if v.net {
				taint |= effFetch
			}
			if v.cred {
				taint |= effCredRead
			}
		}
	}
	var elems []string
	elemsOK := false
	if as.Array != nil {
		known = false
		elems, elemsOK = a.arrayElems(as.Array)
	}
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	if !a.workspaceEnvAssign(name, val, known, as.Value, c) {
		a.envName(name, c)
	}
	a.assignRef(name, c)
	a.envFile(name, val, known, c)
	if name == "CDPATH" {
		// Sticky: a CDPATH set anywhere in the command makes every later cd DIR uncertain.
		switch {
		case !known:
			a.cdpath = dyn
		case val != "" && !strings.Contains(a.cdpath, dyn):
			a.cdpath = strings.Trim(a.cdpath+":"+val, ":")
		}
	}
	if bare && (taint != 0 || a.taint[name] != 0) {
		if a.taint == nil {
			a.taint = map[string]eff{}
		}
		a.taint[name] = taint
	}
	if bare {
		a.storeAssign(as, name, val, known, elems, elemsOK)
	}
}

// envName judges setting the variable name (for the shell or a command's environment).
func (a *analyzer) envName(name string, c *callInfo) {
	if name == "IFS" {
		a.find(c, "env.ifs", Ask, "")
		return
	}
	if injectionVar(name) {
		a.find(c, "env.injection", Deny, "Setting "+name+" changes which code programs run")
	}
}

// envFile judges the value of an environment variable that names a file a program writes:
// Git appends its traces to the absolute path in GIT_TRACE* (git(1) "GIT_TRACE"), and an
// interactive bash writes its history to HISTFILE when it exits (bash(1)).
func (a *analyzer) envFile(name, val string, known bool, c *callInfo) {
	switch {
	case strings.HasPrefix(name, "GIT_TRACE"):
		if !known {
			a.find(c, "write.dynamic-path", Ask, name+" names a trace file only known at run time")
		} else if strings.HasPrefix(val, "/") {
			a.writeTarget(lit(val), "write", c.pos, c.end)
		}
	case name == "HISTFILE":
		if !known {
			a.find(c, "write.dynamic-path", Ask, name+" names a history file only known at run time")
		} else if val != "" {
			a.writeTarget(lit(val), "write", c.pos, c.end)
		}
	}
}

// nameref records that ref is a name reference (declare -n ref=target; target.s is "" when
// it is not given yet): the values of both names are unknown from now on, setting the
// reference sets the target (judged as such), and a reference whose target is only known at
// run time may set any variable.
func (a *analyzer) nameref(ref string, target arg, c *callInfo) {
	if a.aliased == nil {
		a.aliased = map[string]bool{}
	}
	a.aliased[ref] = true
	a.forget(ref)
	name := target.s
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	if target.dyn || !validName(name) {
		if target.dyn {
			a.find(c, "env.dynamic", Ask, "declare -n refers to a variable named only at run time")
		}
		if a.refOpen == nil {
			a.refOpen = map[string]bool{}
		}
		a.refOpen[ref] = true
		return
	}
	a.envName(name, c)
	a.aliased[name] = true
	a.forget(name)
}

// assignRef judges setting name when it is a name reference whose target is not known:
// the assignment may set any variable.
func (a *analyzer) assignRef(name string, c *callInfo) {
	if a.refOpen[name] {
		a.find(c, "env.dynamic", Ask, "Setting the name reference "+name+" sets a variable named only at run time")
	}
}

// decl judges declare, typeset, export, local, readonly and nameref.
func (a *analyzer) decl(x *syntax.DeclClause) {
	c := a.newCall(int(x.Pos().Offset()), int(x.End().Offset()))
	defer a.freeCall(c)
	nameref := x.Variant != nil && x.Variant.Value == "nameref"
	for _, as := range x.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			if l := as.Value.Lit(); strings.HasPrefix(l, "-") && strings.Contains(l, "n") {
				nameref = true
			}
		}
		if !nameref || as.Name == nil {
			continue
		}
		// declare -n ref=PATH: assigning ref later assigns PATH, and $ref is PATH's value.
		var target arg
		if as.Value != nil && !as.Naked {
			var buf [2]arg
			if vs := a.word(buf[:0], as.Value, false); len(vs) == 1 {
				target = vs[0]
			} else {
				target = arg{s: dyn, dyn: true}
			}
		}
		a.nameref(as.Name.Value, target, c)
	}
	a.declAttrs(x)
	for _, as := range x.Args {
		if as.Naked && as.Name == nil {
			var buf [2]arg
			vs := a.word(buf[:0], as.Value, false)
			for _, v := range vs {
				if v.dyn {
					a.find(c, "env.dynamic", Ask, "")
				} else if k, _, ok := strings.Cut(v.s, "="); ok {
					a.envName(k, c)
				}
				a.subscriptCode(v, c)
			}
			continue
		}
		if as.Naked {
			continue
		}
		a.assign(as, c, true)
	}
}

// redirect judges one redirection of a statement and records what it feeds to stdin.
func (a *analyzer) redirect(r *syntax.Redirect, in *stdin) {
	if !a.tick() {
		return
	}
	pos, end := int(r.Pos().Offset()), int(r.End().Offset())
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		in.hasInput = true
		in.mapBase = -1
		if r.Hdoc == nil {
			in.body, in.literal = "", true
			return
		}
		if quotedDelim(r.Word) {
			// <<'EOF': the body is literal text, backslashes included.
			in.body, in.literal = r.Hdoc.Lit(), true
			if len(r.Hdoc.Parts) == 1 {
				in.mapBase = int(r.Hdoc.Parts[0].Pos().Offset())
			}
			return
		}
		e := wordEval{a: a, vals: []string{""}, hdoc: true}
		e.parts(r.Hdoc.Parts, true, false)
		in.net = in.net || e.net
		if !e.dyn {
			in.body, in.literal = e.vals[0], true
			if len(r.Hdoc.Parts) == 1 {
				if l, ok := r.Hdoc.Parts[0].(*syntax.Lit); ok && !strings.Contains(l.Value, "\\") {
					in.mapBase = int(l.Pos().Offset())
				}
			}
		}
		return
	case syntax.WordHdoc:
		in.hasInput = true
		var buf [2]arg
		vs := a.word(buf[:0], r.Word, false)
		if len(vs) == 1 {
			in.net = in.net || vs[0].net
			if !vs[0].dyn {
				in.body, in.literal, in.hereStr = vs[0].s, true, true
				in.mapBase = literalBase(r.Word)
			}
		}
		return
	case syntax.DplIn, syntax.DplOut:
		v := r.Word.Lit()
		if v == "-" || isDigits(v) || (strings.HasSuffix(v, "-") && isDigits(v[:len(v)-1])) {
			return
		}
		if r.Op == syntax.DplIn {
			a.wordEffects(r.Word)
			return
		}
	}
	var buf [2]arg
	vs := a.word(buf[:0], r.Word, false)
	for _, v := range vs {
		if r.Op == syntax.RdrIn {
			in.hasInput = true
			if v.proc && v.net {
				in.net = true
			}
			p, ok := a.resolve(v)
			if ok && isDevTCP(p) {
				a.add("network.reverse-shell", Deny, pos, end, "A /dev/tcp or /dev/udp redirection connects the shell to the network")
				continue
			}
			if ok && a.isCredential(p) {
				in.cred = true
				a.add("credential.read", Ask, pos, end, "Reading "+p)
			}
			continue
		}
		a.writeTarget(v, "redirect", pos, end)
	}
}

// quotedDelim reports whether a here-document delimiter is quoted ('EOF', "EOF", \EOF), so
// that the body is not expanded.
func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(x.Value, "\\") {
				return true
			}
		}
	}
	return false
}

// hdocText returns the text a here-document or here-string feeds when it is known without
// running anything.
func (a *analyzer) hdocText(r *syntax.Redirect) (string, bool) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc == nil {
			return "", true
		}
		if quotedDelim(r.Word) {
			return r.Hdoc.Lit(), true
		}
		if l := r.Hdoc.Lit(); l != "" && !strings.Contains(l, "\\") {
			return l, true
		}
		return a.hdocValue(r)
	case syntax.WordHdoc:
		if len(r.Word.Parts) == 1 {
			if q, ok := r.Word.Parts[0].(*syntax.SglQuoted); ok && !q.Dollar {
				return q.Value + "\n", true
			}
			if l, ok := r.Word.Parts[0].(*syntax.Lit); ok && plainLit(l.Value) {
				return l.Value + "\n", true
			}
		}
	}
	return "", false
}

// literalBase returns the offset in the current source where the value of w starts when w
// is a plain literal whose value is its source text ('…', "…" without escapes or
// expansions, or a bare word without backslashes), or -1.
func literalBase(w *syntax.Word) int {
	if w == nil || len(w.Parts) != 1 {
		return -1
	}
	switch p := w.Parts[0].(type) {
	case *syntax.SglQuoted:
		if !p.Dollar {
			return int(p.Left.Offset()) + 1
		}
	case *syntax.Lit:
		if !strings.ContainsAny(p.Value, "\\~{") {
			return int(p.Pos().Offset())
		}
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 && !p.Dollar {
			if l, ok := p.Parts[0].(*syntax.Lit); ok && !strings.Contains(l.Value, "\\") {
				return int(p.Left.Offset()) + 1
			}
		}
	}
	return -1
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// judge judges one command given its argv: it resolves the program name, applies the
// command's handler (which may judge an inner command recursively), the generic credential
// check of its arguments and the policy.
func (a *analyzer) judge(argv []arg, c *callInfo) eff {
	if len(argv) == 0 || !a.tick() {
		return 0
	}
	start := len(a.findings)
	e := a.judgeProgram(argv, c)
	for _, x := range argv[1:] {
		// A command given downloaded or secret content may print it (echo "$(curl …)" | sh).
		if x.net {
			e |= effFetch
		}
		if x.cred {
			e |= effCredRead
		}
	}
	if printsSecret(argv) {
		a.find(c, "credential.read", Ask, "The command prints a secret (a token, a password or a private key)")
		e |= effCredRead
	}
	if readsNoContent[argv[0].s] || wrappers[argv[0].s] != nil || runsCommand[argv[0].s] {
		if a.ctx.Policy != nil {
			a.applyPolicy(argv, c, start)
		}
		return e
	}
	for _, x := range argv[1:] {
		if x.cred && e&effNetwork != 0 {
			a.find(c, "exfil.credential", Deny, "A credential file's content is an argument of a network command")
			break
		}
		if p, ok := a.credentialArg(x); ok {
			what := display(p)
			if a.ctx.Home != "" && (p == a.ctx.Home || within(a.ctx.Home, p)) {
				what += ", which holds the home directory's credential stores"
			}
			if e&effNetwork != 0 && argv[0].s != "ssh" && argv[0].s != "scp" && argv[0].s != "rsync" && argv[0].s != "sftp" {
				a.find(c, "exfil.credential", Deny, "A network command is given "+what)
			} else {
				a.find(c, "credential.read", Ask, "The command reads "+what)
			}
			e |= effCredRead
			break
		}
	}
	if a.ctx.Policy != nil {
		a.applyPolicy(argv, c, start)
	}
	return e
}

// secretPrinters lists commands (program and leading words) that print tokens, passwords or
// private keys.
var secretPrinters = [][]string{
	{"gh", "auth", "token"}, {"gh", "auth", "status", "--show-token"}, {"gcloud", "auth", "print-access-token"},
	{"gcloud", "auth", "print-identity-token"}, {"az", "account", "get-access-token"},
	{"aws", "configure", "get"}, {"aws", "configure", "export-credentials"}, {"aws", "sts", "get-session-token"},
	{"aws", "ecr", "get-login-password"}, {"kubectl", "config", "view", "--raw"},
	{"pass", "show"}, {"pass"}, {"op", "read"}, {"op", "item", "get"}, {"bw", "get"},
	{"vault", "read"}, {"vault", "kv", "get"}, {"security", "find-generic-password"},
	{"security", "find-internet-password"}, {"security", "dump-keychain"},
	{"gpg", "--export-secret-keys"}, {"gpg", "--export-secret-subkeys"},
	{"secret-tool", "lookup"}, {"keyring", "get"}, {"heroku", "auth:token"},
	{"npm", "token", "list"}, {"doppler", "secrets"}, {"sops", "-d"}, {"sops", "--decrypt"},
}

// printsSecret reports whether argv starts with one of secretPrinters (options between the
// words are skipped; "--raw"-style elements must appear anywhere).
func printsSecret(argv []arg) bool {
	for _, pat := range secretPrinters {
		if argv[0].s != pat[0] {
			continue
		}
		i, ok := 1, true
		for _, w := range pat[1:] {
			if strings.HasPrefix(w, "-") {
				found := false
				for _, x := range argv[1:] {
					found = found || x.s == w
				}
				ok = ok && found
				continue
			}
			for i < len(argv) && strings.HasPrefix(argv[i].s, "-") {
				i++
			}
			if i >= len(argv) || argv[i].s != w {
				ok = false
				break
			}
			i++
		}
		if ok && (len(pat) > 1 || len(argv) > 1) {
			return true
		}
	}
	return false
}

// runsCommand lists programs whose arguments are another command, judged on its own (the
// generic credential check would otherwise see the inner command's paths twice, or mount
// specifications such as bwrap --ro-bind / / as reads).
var runsCommand = map[string]bool{
	"env": true, "sudo": true, "doas": true, "xargs": true, "bwrap": true, "flock": true,
	"watch": true, "busybox": true, "exec": true, "command": true, "builtin": true,
	"parallel": true, "perf": true, "gdb": true, "lldb": true, "hyperfine": true,
	"runuser": true, "su": true,
}

// readsNoContent lists programs that never read the contents of the files they name: they
// list names and metadata, or delete, create, move, link or change the mode of files. Naming
// a credential file with them is not reading it (their writes are judged on their own).
var readsNoContent = map[string]bool{
	"rm": true, "rmdir": true, "unlink": true, "shred": true, "srm": true, "trash": true,
	"trash-put": true, "gio-trash": true, "mkfifo": true, "mknod": true, "chmod": true,
	"chown": true, "chgrp": true, "chattr": true, "setfacl": true, "chflags": true,
	"chcon": true, "setfattr": true, "truncate": true, "fallocate": true, "mv": true,
	"ln": true, "link": true, "mktemp": true, "sleep": true, "kill": true, "pkill": true,
	"killall": true, "popd": true,
	"ls": true, "stat": true, "du": true, "tree": true, "test": true, "[": true,
	"dirname": true, "basename": true, "realpath": true, "readlink": true, "namei": true,
	"lsattr": true, "getfacl": true, "exa": true, "eza": true, "lsd": true, "df": true,
	"dir": true, "vdir": true, "pwd": true, "echo": true, "printf": true, "cd": true,
	"pushd": true, "mkdir": true, "touch": true, "find": true, "fd": true, "fdfind": true,
	"locate": true, "plocate": true,
}

// judgeProgram resolves argv[0] and calls its handler.
func (a *analyzer) judgeProgram(argv []arg, c *callInfo) eff {
	a0 := argv[0]
	if a0.net {
		a.find(c, "network.pipe-to-shell", Deny, "The command to run comes from downloaded or decoded content")
		return effShellStdin
	}
	if a0.dyn || a0.proc || a0.glob {
		a.find(c, "dynamic.command", Ask, "")
		if a0.w != nil {
			if alt := defaultWord(a0.w); alt != "" {
				// Judge the default as well: ${X:-rm} runs rm when X is unset.
				a.judgeProgram(append([]arg{lit(alt)}, argv[1:]...), c)
			}
		}
		if len(argv) > 2 && isShellCOption(argv[1].s) {
			// $SHELL -c SCRIPT, $BASH -c SCRIPT: whatever the shell, the script runs.
			a.judgeProgram(append([]arg{lit("sh")}, argv[1:]...), c)
		}
		return effShellStdin
	}
	if a0.sub {
		a.find(c, "dynamic.command", Ask, "The command name comes from a command substitution")
	}
	name := a0.s
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		if !systemBinDir(name[:i]) {
			if a.runsFetched(a0, c) {
				return 0
			}
			if a.runsWritten(a0, Bash, c) {
				a.find(c, "exec.workspace-code", Ask, "The program "+name+" is run from a path")
				return 0
			}
			a.find(c, "exec.workspace-code", Ask, "The program "+name+" is run from a path")
			if p, ok := a.resolve(a0); ok && !strings.Contains(p, dyn) {
				// /usr/bin/../bin/rm, //bin//rm, ../../usr/bin/rm: a system program under
				// another spelling. Symbolic links may make the path name something else,
				// so this only adds the system program's findings to the ask above.
				if j := strings.LastIndexByte(p, '/'); systemBinDir(p[:j]) {
					return a.judgeProgram(append([]arg{{s: p[j+1:], w: a0.w}}, argv[1:]...), c)
				}
			}
			return 0
		}
		name = name[i+1:]
		// Handlers see the program by its name (/usr/bin/kill is kill).
		argv[0] = arg{s: name, w: a0.w}
	}
	if len(a.fstk) > 0 {
		a.calls = append(a.calls, callEdge{from: a.fstk[len(a.fstk)-1], to: name, fork: a.pipe || a.bg})
	}
	if a.funcs[name] {
		for _, f := range a.fstk {
			if f == name && (a.pipe || a.bg) {
				a.find(c, "function.forkbomb", Deny, "")
			}
		}
		a.callFunc(name, argv, c)
		if d, ok := a.funcCwd[name]; ok {
			a.oldpwd, a.oldSet, a.cwd = a.cwd, true, d
		}
		return 0
	}
	h := lookup(name)
	if h == nil {
		if unknownProbe(argv) {
			return 0
		}
		a.find(c, "unknown.command", Ask, "The program "+name+" is not known")
		return a.wrappedCommand(argv, c)
	}
	return h(a, argv, c)
}

// isShellCOption reports whether s is a shell option cluster holding -c (-c, -lc, -ec).
func isShellCOption(s string) bool {
	return len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.HasSuffix(s, "c")
}

// systemBinDir reports whether dir is a standard directory of installed programs, so that
// /usr/bin/rm is judged as rm.
func systemBinDir(dir string) bool {
	switch dir {
	case "/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin",
		"/opt/homebrew/bin", "/opt/homebrew/sbin", "/usr/libexec", "/run/current-system/sw/bin":
		return true
	}
	return false
}

// nested judges a shell script given as an argument (sh -c, eval, trap, watch) or fed on
// stdin, in dialect d, recursively.
func (a *analyzer) nested(x arg, d Dialect, c *callInfo) eff {
	if x.net {
		a.find(c, "network.pipe-to-shell", Deny, "A shell runs downloaded or decoded content")
		return 0
	}
	if x.dyn {
		a.find(c, "dynamic.script", Ask, "")
		if strings.Trim(x.s, dyn) != "" {
			// Judge the known parts too, with a placeholder for the run-time parts.
			return a.nestedText(strings.ReplaceAll(x.s, dyn, "__dyn__"), -1, d, c)
		}
		return 0
	}
	base := -1
	if x.w != nil {
		base = literalBase(x.w)
	}
	return a.nestedText(x.s, base, d, c)
}

// nestedText judges script text; base is its offset in the current source or -1.
func (a *analyzer) nestedText(text string, base int, d Dialect, c *callInfo) eff {
	a.shells++
	defer func() { a.shells-- }()
	if !a.tick() {
		return 0
	}
	saved := a.src
	if base >= 0 && saved.base >= 0 {
		a.src = source{text: text, base: saved.base + base}
	} else if saved.base >= 0 {
		a.src = source{text: text, base: -1, outerOff: saved.base + c.pos, outerCmd: saved.text[c.pos:c.end]}
	} else {
		a.src = source{text: text, base: -1, outerOff: saved.outerOff, outerCmd: saved.outerCmd}
	}
	if off, why := differential(text); off >= 0 {
		a.add("parse.differential", Deny, off, off, why+" (in a nested script)")
	}
	same := a.ev.sameShell // eval: the directory the script changes to stays
	a.ev.sameShell = false
	cwd, vars, funcs, fstk, pipe, bg := a.cwd, a.vars, a.funcs, a.fstk, a.pipe, a.bg
	a.vars, a.funcs, a.fstk, a.pipe = a.params, nil, nil, false
	a.params = nil
	calls := a.calls
	a.calls = nil
	e := a.script(text, d)
	if f, ok := a.forkCycle(); ok {
		a.add("function.forkbomb", Deny, 0, len(text), "The functions calling "+f+" call each other in pipelines or in the background")
	}
	a.calls = calls
	if same {
		cwd = a.cwd
	}
	a.cwd, a.vars, a.funcs, a.fstk, a.pipe, a.bg = cwd, vars, funcs, fstk, pipe, bg
	a.src = saved
	return e
}
