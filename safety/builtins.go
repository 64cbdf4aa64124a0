package safety

import (
	"strconv"
	"strings"
)

// This file judges shell builtins that take variable names, callbacks or pagers: names
// with array subscripts are evaluated by bash (a[$(cmd)] runs cmd), printf -v and read
// assign variables, mapfile -C runs a callback, hash -p rebinds a command name.

// registerBuiltins adds the handlers of this file (called last by the commands table's init,
// so that they replace the plain read-only entries).
func registerBuiltins() {
	register(hPrintf, "printf")
	register(hRead, "read")
	register(hMapfile, "mapfile", "readarray")
	register(hNames, "unset", "let", "getopts", "wait")
	register(hDeclare, "declare", "typeset", "local", "export", "readonly")
	register(hTest, "test", "[")
	register(hHash, "hash")
	register(hMan, "man")
	register(hJournalctl, "journalctl")
	register(hSet, "set")
	register(hPrintenv, "printenv")
	registerEval()
}

// subscriptCode judges the command substitutions inside a literal argument that bash
// evaluates as a variable name or arithmetic (a[$(cmd)], let 'x=$(cmd)'), by judging the
// text as words of a ':' command.
func (a *analyzer) subscriptCode(x arg, c *callInfo) {
	if x.dyn || !(strings.Contains(x.s, "$(") || strings.Contains(x.s, "`") || strings.Contains(x.s, "$[")) {
		return
	}
	a.find(c, "exec.tool-exec", Ask, "bash evaluates this name or expression, and the command substitution in it runs")
	a.nestedText(": "+x.s, -1, Bash, c)
}

// hNames judges builtins whose operands are variable names or arithmetic.
func hNames(a *analyzer, argv []arg, c *callInfo) eff {
	for _, x := range argv[1:] {
		a.subscriptCode(x, c)
	}
	return 0
}

// hDeclare judges export, readonly, local, declare and typeset run as simple commands (POSIX
// sh, or behind builtin/command): NAME=VALUE operands set variables.
func hDeclare(a *analyzer, argv []arg, c *callInfo) eff {
	nameref := false
	for _, x := range argv[1:] {
		if x.dyn && strings.HasPrefix(x.s, dyn) {
			a.find(c, "env.dynamic", Ask, "")
			continue
		}
		if strings.HasPrefix(x.s, "-") || strings.HasPrefix(x.s, "+") {
			nameref = nameref || strings.Contains(x.s, "n")
			continue
		}
		a.subscriptCode(x, c)
		k, v, ok := strings.Cut(x.s, "=")
		if !ok {
			if nameref {
				a.nameref(k, arg{}, c)
			}
			continue
		}
		k = strings.TrimSuffix(k, "+")
		a.envName(k, c)
		a.assignRef(k, c)
		if nameref {
			a.nameref(k, arg{s: v, dyn: x.dyn}, c)
			continue
		}
		if a.vars == nil {
			a.vars = map[string]string{}
		}
		if x.dyn {
			a.vars[k] = dyn
		} else {
			a.vars[k] = v
		}
	}
	return 0
}

// hTest judges test and [: -v NAME evaluates a subscript.
func hTest(a *analyzer, argv []arg, c *callInfo) eff {
	for i, x := range argv[1:] {
		if i > 0 && argv[i].s == "-v" {
			a.subscriptCode(x, c)
		}
	}
	return 0
}

// hPrintf judges printf: -v NAME assigns a variable.
func hPrintf(a *analyzer, argv []arg, c *callInfo) eff {
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		if s == "--" || !strings.HasPrefix(s, "-") {
			break
		}
		if s == "-v" && i+1 < len(argv) {
			a.assignName(argv[i+1], c)
			a.printfAssign(argv[i+1].s, argv[i+2:])
			i++
		}
	}
	return 0
}

// assignName judges a builtin assigning to the variable named by x.
func (a *analyzer) assignName(x arg, c *callInfo) {
	if x.dyn {
		a.find(c, "env.dynamic", Ask, "")
		return
	}
	name := x.s
	if i := strings.IndexByte(name, '['); i >= 0 {
		a.subscriptCode(x, c)
		name = name[:i]
	}
	a.envName(name, c)
	a.assignRef(name, c)
	a.forget(name)
}

// hRead judges read: its operands (and -a NAME) are assigned.
func hRead(a *analyzer, argv []arg, c *callInfo) eff {
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		if strings.HasPrefix(s, "-") && len(s) > 1 {
			if strings.ContainsAny(s[len(s)-1:], "adinNpt u") && i+1 < len(argv) {
				if strings.HasSuffix(s, "a") {
					a.assignName(argv[i+1], c)
				}
				i++
			}
			continue
		}
		a.assignName(argv[i], c)
	}
	a.readAssign(argv, c)
	return 0
}

// hMapfile judges mapfile/readarray: -C runs a callback; the operand is assigned.
func hMapfile(a *analyzer, argv []arg, c *callInfo) eff {
	var e eff
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		switch {
		case s == "-C" && i+1 < len(argv):
			e |= a.nested(argv[i+1], Bash, c)
			i++
		case strings.HasPrefix(s, "-C") && len(s) > 2:
			e |= a.nested(subArg(argv[i], s[2:]), Bash, c)
		case s == "-d" || s == "-n" || s == "-O" || s == "-s" || s == "-u" || s == "-c":
			i++
		case strings.HasPrefix(s, "-"):
		default:
			a.assignName(argv[i], c)
		}
	}
	a.mapfileAssign(argv, c)
	return e
}

// hHash judges hash: -p PATH NAME makes NAME run another program.
func hHash(a *analyzer, argv []arg, c *callInfo) eff {
	for _, x := range argv[1:] {
		if strings.HasPrefix(x.s, "-") && strings.Contains(x.s, "p") {
			a.find(c, "env.injection", Deny, "hash -p makes a command name run another program")
			return 0
		}
	}
	return 0
}

// hMan judges man: -P/--pager and -H/--html run a program through the shell.
func hMan(a *analyzer, argv []arg, c *callInfo) eff {
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		switch {
		case (s == "-P" || s == "--pager" || s == "-H" || s == "--html") && i+1 < len(argv) && !strings.HasPrefix(argv[i+1].s, "-"):
			a.find(c, "exec.tool-exec", Ask, "man -P runs a pager command")
			return a.nested(argv[i+1], POSIX, c)
		case strings.HasPrefix(s, "--pager=") || strings.HasPrefix(s, "--html="):
			_, v, _ := strings.Cut(s, "=")
			a.find(c, "exec.tool-exec", Ask, "man --pager runs a pager command")
			return a.nested(subArg(argv[i], v), POSIX, c)
		case strings.HasPrefix(s, "-P") && len(s) > 2:
			a.find(c, "exec.tool-exec", Ask, "man -P runs a pager command")
			return a.nested(subArg(argv[i], s[2:]), POSIX, c)
		}
	}
	return 0
}

// hSet judges set: "set -- A B" (or operands after options) set the positional parameters,
// which later "$@" and "$1" expand to.
func hSet(a *analyzer, argv []arg, c *callInfo) eff {
	i := 1
	for i < len(argv) && (strings.HasPrefix(argv[i].s, "-") || strings.HasPrefix(argv[i].s, "+")) && argv[i].s != "--" {
		if argv[i].s == "-o" || argv[i].s == "+o" {
			i++
		}
		i++
	}
	if i < len(argv) && argv[i].s == "--" {
		i++
	} else if i >= len(argv) {
		return 0
	}
	a.setParams(argv[i:])
	return 0
}

// setParams sets the positional parameters $1 … and $@ / $* to the values of xs.
func (a *analyzer) setParams(xs []arg) {
	if a.vars == nil {
		a.vars = map[string]string{}
	}
	all := make([]string, 0, len(xs))
	for n, x := range xs {
		v := x.s
		if x.dyn {
			v = dyn
		}
		a.vars[strconv.Itoa(n+1)] = v
		all = append(all, v)
	}
	a.vars["@"] = strings.Join(all, " ")
	a.vars["*"] = a.vars["@"]
	a.vars[arrKey+"@"] = encodeArray(all)
}

// hPrintenv: the environment holds tokens, so its output counts as credential content
// (piped to a network command it is exfiltration).
func hPrintenv(a *analyzer, argv []arg, c *callInfo) eff { return effCredRead }

// hJournalctl judges journalctl: reading is allowed; vacuuming, rotating and flushing
// change the journal.
func hJournalctl(a *analyzer, argv []arg, c *callInfo) eff {
	for _, x := range argv[1:] {
		s := x.s
		if strings.HasPrefix(s, "--vacuum") || s == "--rotate" || s == "--flush" || s == "--sync" || s == "--relinquish-var" || s == "--smart-relinquish-var" || s == "--setup-keys" || s == "--update-catalog" {
			a.sysChange(c, "This changes the system journal")
			return 0
		}
	}
	return 0
}

// splitEnvString splits the argument of env -S as env(1) does: blanks separate words;
// single and double quotes group; backslash escapes. It reports false when a quote is not
// closed.
func splitEnvString(s string) ([]string, bool) {
	var out []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case ch == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			inWord = true
		case ch == '#' && !inWord:
			i = len(s)
		default:
			b.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out, true
}
