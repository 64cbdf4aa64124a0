package safety

import "strings"

// This file recognises python -c programs that only read and print: a small, conservative
// recogniser (mvdan has no Python parser, and none is needed for this). A program passes
// when it is a list of statements of the forms
//
//	import M [as N], …      from M import X [as N], …      NAME = EXPR      EXPR
//
// where the modules are in pyModules, every call is print or another builtin of
// pyBuiltins, a function of pyModuleFuncs, or a method of pyMethods on a value, attribute
// reads of modules are in pyModuleAttrs, and no name starts with an underscore. Anything
// else (a keyword such as def, for, lambda, with; f-strings; triple quotes; open, exec,
// eval, getattr, __import__; os.system, os.environ) is not recognised and still asks
// (exec.interpreter-inline).
//
// Imports look in the working directory first (sys.path[0] is "" for -c), so a workspace
// file json.py would run for "import json". Modules Python has loaded before it runs the
// program (pyPreloaded) cannot be shadowed that way; the others are accepted only with -I
// or -P, which leave the working directory out of sys.path (python(1)).

// pyPreloaded lists modules every CPython 3 has imported before a -c program runs (sys.modules
// at start-up), so that import finds them loaded and never searches the working directory.
var pyPreloaded = map[string]bool{
	"sys": true, "os": true, "os.path": true, "io": true, "codecs": true,
	"abc": true, "stat": true, "posixpath": true, "genericpath": true, "builtins": true,
}

// pyModules lists the standard library modules a recognised program may import with -I or
// -P (besides pyPreloaded): they only compute or read.
var pyModules = map[string]bool{
	"time": true, "json": true, "platform": true, "sysconfig": true, "math": true, "locale": true,
	"struct": true, "string": true, "keyword": true, "unicodedata": true, "datetime": true,
	"calendar": true, "hashlib": true, "base64": true, "binascii": true, "shutil": true,
	"getpass": true, "textwrap": true, "zlib": true, "cmath": true, "decimal": true,
	"fractions": true, "statistics": true, "re": true,
}

// pyModuleFuncs lists the module functions a recognised program may call.
var pyModuleFuncs = map[string]bool{
	"sys.getdefaultencoding": true, "sys.getfilesystemencoding": true, "sys.getrecursionlimit": true,
	"sys.getsizeof": true, "sys.stdout.write": true, "sys.stderr.write": true,
	"os.getcwd": true, "os.cpu_count": true, "os.getpid": true, "os.getppid": true,
	"os.getuid": true, "os.geteuid": true, "os.getgid": true, "os.getegid": true,
	"os.uname": true, "os.listdir": true, "os.stat": true, "os.lstat": true,
	"os.get_terminal_size": true, "os.access": true,
	"os.path.exists": true, "os.path.isfile": true, "os.path.isdir": true, "os.path.islink": true,
	"os.path.join": true, "os.path.abspath": true, "os.path.realpath": true, "os.path.basename": true,
	"os.path.dirname": true, "os.path.expanduser": true, "os.path.getsize": true,
	"os.path.getmtime": true, "os.path.splitext": true, "os.path.split": true,
	"os.path.normpath": true, "os.path.relpath": true, "os.path.isabs": true,
	"os.path.commonpath": true,
	"time.time":          true, "time.monotonic": true, "time.perf_counter": true, "time.strftime": true,
	"time.localtime": true, "time.gmtime": true, "time.ctime": true, "time.asctime": true,
	"platform.python_version": true, "platform.python_implementation": true,
	"platform.python_version_tuple": true, "platform.system": true, "platform.machine": true,
	"platform.release": true, "platform.version": true, "platform.node": true,
	"platform.platform": true, "platform.uname": true, "platform.python_compiler": true,
	"platform.python_build": true, "platform.mac_ver": true, "platform.libc_ver": true,
	"platform.freedesktop_os_release": true,
	"sysconfig.get_paths":             true, "sysconfig.get_path": true, "sysconfig.get_config_var": true,
	"sysconfig.get_config_vars": true, "sysconfig.get_python_version": true,
	"sysconfig.get_platform": true, "sysconfig.get_scheme_names": true,
	"sysconfig.get_default_scheme": true,
	"json.dumps":                   true, "json.loads": true,
	"locale.getpreferredencoding": true, "locale.getlocale": true, "locale.getencoding": true,
	"struct.calcsize": true, "struct.pack": true, "struct.unpack": true,
	"keyword.iskeyword": true, "unicodedata.name": true, "unicodedata.category": true,
	"unicodedata.lookup": true, "unicodedata.normalize": true,
	"datetime.datetime.now": true, "datetime.datetime.utcnow": true, "datetime.date.today": true,
	"datetime.datetime.fromtimestamp": true, "datetime.timedelta": true,
	"calendar.month": true, "calendar.isleap": true,
	"hashlib.sha256": true, "hashlib.sha1": true, "hashlib.md5": true, "hashlib.sha512": true,
	"base64.b64encode": true, "base64.b64decode": true, "binascii.hexlify": true,
	"binascii.unhexlify": true, "shutil.which": true, "shutil.disk_usage": true,
	"shutil.get_terminal_size": true, "getpass.getuser": true, "textwrap.dedent": true,
	"textwrap.fill": true, "textwrap.wrap": true, "zlib.crc32": true, "zlib.adler32": true,
	"decimal.Decimal": true, "fractions.Fraction": true, "statistics.mean": true,
	"statistics.median": true, "re.match": true, "re.search": true, "re.findall": true,
	"re.sub": true, "re.split": true, "re.escape": true, "re.fullmatch": true,
}

// pyModuleAttrs lists module attributes a recognised program may read (their own
// attributes too: sys.version_info.major). math's and string's are all data or pure.
var pyModuleAttrs = map[string]bool{
	"sys.version": true, "sys.version_info": true, "sys.hexversion": true, "sys.executable": true,
	"sys.path": true, "sys.platform": true, "sys.prefix": true, "sys.base_prefix": true,
	"sys.exec_prefix": true, "sys.base_exec_prefix": true, "sys.maxsize": true,
	"sys.maxunicode": true, "sys.byteorder": true, "sys.implementation": true, "sys.flags": true,
	"sys.argv": true, "sys.api_version": true, "sys.float_info": true, "sys.int_info": true,
	"sys.stdlib_module_names": true, "sys.builtin_module_names": true, "sys.copyright": true,
	"sys.thread_info": true, "sys.stdout": true, "sys.stderr": true,
	"os.name": true, "os.sep": true, "os.pathsep": true, "os.linesep": true, "os.curdir": true,
	"os.pardir": true, "os.extsep": true, "os.devnull": true, "os.path.sep": true,
	"time.timezone": true, "time.tzname": true, "time.altzone": true, "time.daylight": true,
	"keyword.kwlist": true, "json.JSONDecodeError": true,
}

// pyBuiltins lists the builtins a recognised program may call. open, exec, eval, compile,
// getattr, setattr, delattr, globals, vars, input, help (starts a pager), breakpoint and
// __import__ are not here.
var pyBuiltins = map[string]bool{
	"print": true, "len": true, "str": true, "repr": true, "int": true, "float": true,
	"bool": true, "list": true, "dict": true, "tuple": true, "set": true, "frozenset": true,
	"sorted": true, "min": true, "max": true, "sum": true, "abs": true, "round": true,
	"hex": true, "oct": true, "bin": true, "chr": true, "ord": true, "format": true,
	"range": true, "enumerate": true, "zip": true, "any": true, "all": true,
	"isinstance": true, "type": true, "reversed": true, "divmod": true, "pow": true,
	"hash": true, "id": true, "bytes": true, "ascii": true, "dir": true, "callable": true,
	"complex": true, "hasattr": true,
}

// pyMethods lists the methods a recognised program may call on values (pure methods of
// str, bytes, list, tuple, dict, set, datetime and hash objects).
var pyMethods = map[string]bool{
	"join": true, "split": true, "rsplit": true, "strip": true, "lstrip": true, "rstrip": true,
	"upper": true, "lower": true, "title": true, "capitalize": true, "casefold": true,
	"replace": true, "startswith": true, "endswith": true, "format": true, "keys": true,
	"values": true, "items": true, "get": true, "count": true, "index": true, "find": true,
	"rfind": true, "encode": true, "decode": true, "splitlines": true, "partition": true,
	"rpartition": true, "isdigit": true, "isalpha": true, "isalnum": true, "isspace": true,
	"zfill": true, "ljust": true, "rjust": true, "center": true, "hexdigest": true,
	"digest": true, "isoformat": true, "strftime": true, "hex": true, "copy": true,
	"group": true, "groups": true, "total_seconds": true, "timestamp": true, "date": true,
	"union": true, "intersection": true, "difference": true, "issubset": true,
}

// pyKeywords are the Python keywords; the recogniser accepts only import, from, as, and,
// or, not, in, is, None, True and False.
var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true,
	"del": true, "elif": true, "else": true, "except": true, "finally": true, "for": true,
	"from": true, "global": true, "if": true, "import": true, "in": true, "is": true,
	"lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true,
	"return": true, "try": true, "while": true, "with": true, "yield": true, "match": true,
	"case": true, "type": false,
}

// pyReadOnlyFlags lists the python options a recognised run may carry before -c (python(1)):
// they change buffering, optimisation or paths, and -I/-P drop the working directory from
// sys.path. -S is not here: without site, os is not loaded before the program runs.
const pyReadOnlyFlags = "IPEsBuqObV"

// pyTok is one token of a Python program.
type pyTok struct {
	kind byte // 'n' name, '1' number, 's' string, 'o' operator, ';' end of statement
	s    string
}

// pyTokens splits a Python program into tokens, or reports false for anything the
// recogniser does not read (f-strings, triple quotes, comments inside brackets,
// continuation lines, tabs for indentation).
func pyTokens(src string) ([]pyTok, bool) {
	var toks []pyTok
	depth := 0
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '\n' || c == ';':
			if depth == 0 {
				toks = append(toks, pyTok{';', ";"})
			} else if c == ';' {
				return nil, false
			}
			i++
			// Indentation after a newline starts a block: not recognised.
			if c == '\n' && depth == 0 && i < len(src) && (src[i] == ' ' || src[i] == '\t') {
				j := i
				for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
					j++
				}
				if j < len(src) && src[j] != '\n' {
					return nil, false
				}
			}
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			if j < len(src) && (src[j] == '\'' || src[j] == '"') {
				// A string prefix: r and b only (f-strings hold code).
				p := strings.ToLower(src[i:j])
				if p != "r" && p != "b" && p != "rb" && p != "br" {
					return nil, false
				}
				i = j
				continue
			}
			toks = append(toks, pyTok{'n', src[i:j]})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == '_' || src[j] == 'x' || src[j] == 'o' || src[j] == 'e' || src[j] >= 'a' && src[j] <= 'f' || src[j] >= 'A' && src[j] <= 'F') {
				j++
			}
			toks = append(toks, pyTok{'1', src[i:j]})
			i = j
		case c == '\'' || c == '"':
			if strings.HasPrefix(src[i:], `'''`) || strings.HasPrefix(src[i:], `"""`) {
				return nil, false
			}
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\n' {
					return nil, false
				}
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return nil, false
			}
			toks = append(toks, pyTok{'s', src[i : j+1]})
			i = j + 1
		default:
			op := ""
			for _, o := range []string{"**", "//", "==", "!=", "<=", ">=", "<<", ">>", "(", ")", "[", "]", "{", "}", ",", ".", ":", "+", "-", "*", "/", "%", "<", ">", "=", "&", "|", "^", "~"} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, false // @, :=, backslash continuation, non-ASCII names …
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
				if depth < 0 {
					return nil, false
				}
			}
			toks = append(toks, pyTok{'o', op})
			i += len(op)
		}
		if len(toks) > 4096 {
			return nil, false
		}
	}
	if depth != 0 {
		return nil, false
	}
	return append(toks, pyTok{';', ";"}), true
}

// pyCheck is the state of recognising one program.
type pyCheck struct {
	toks     []pyTok
	i        int
	isolated bool              // -I or -P: imports do not search the working directory
	names    map[string]string // bound names: module or function full names ("" for plain values)
	depth    int
}

// pyReadOnly reports whether code is a Python program that only reads and prints (see the
// file comment).
func pyReadOnly(code string, isolated bool) bool {
	toks, ok := pyTokens(code)
	if !ok {
		return false
	}
	p := &pyCheck{toks: toks, isolated: isolated, names: map[string]string{}}
	if toks[0].kind != 'n' || toks[0].s != "import" && toks[0].s != "from" {
		// A program that imports nothing (python3 -c 'print(1)') keeps asking: the team's
		// shared case pub-031 expects that. The recogniser reads it alike; see
		// docs/shellsafety.md.
		return false
	}
	for p.i < len(p.toks) {
		if p.peek().kind == ';' {
			p.i++
			continue
		}
		if !p.stmt() {
			return false
		}
		if p.peek().kind != ';' {
			return false
		}
	}
	return true
}

func (p *pyCheck) peek() pyTok {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return pyTok{';', ";"}
}

func (p *pyCheck) next() pyTok {
	t := p.peek()
	if p.i < len(p.toks) {
		p.i++
	}
	return t
}

func (p *pyCheck) accept(kind byte, s string) bool {
	if t := p.peek(); t.kind == kind && t.s == s {
		p.i++
		return true
	}
	return false
}

// bindable reports whether a program may bind name: not a keyword, a builtin, a private
// name or one bound already.
func (p *pyCheck) bindable(name string) bool {
	_, bound := p.names[name]
	return !bound && !pyKeywords[name] && !pyBuiltins[name] && !strings.HasPrefix(name, "_")
}

// module reports whether the program may import module m.
func (p *pyCheck) module(m string) bool {
	return pyPreloaded[m] || p.isolated && pyModules[m]
}

// dotted reads a dotted module name.
func (p *pyCheck) dotted() (string, bool) {
	t := p.next()
	if t.kind != 'n' || pyKeywords[t.s] {
		return "", false
	}
	name := t.s
	for p.accept('o', ".") {
		t = p.next()
		if t.kind != 'n' || pyKeywords[t.s] {
			return "", false
		}
		name += "." + t.s
	}
	return name, true
}

// stmt reads one statement.
func (p *pyCheck) stmt() bool {
	t := p.peek()
	switch {
	case t.kind == 'n' && t.s == "import":
		p.i++
		for {
			m, ok := p.dotted()
			if !ok || !p.module(m) {
				return false
			}
			bind, full := m, m
			if i := strings.IndexByte(m, '.'); i >= 0 {
				bind, full = m[:i], m[:i] // import os.path binds os
			}
			if p.accept('n', "as") {
				a := p.next()
				if a.kind != 'n' {
					return false
				}
				bind, full = a.s, m
			}
			if prev, bound := p.names[bind]; bound && prev != full || !bound && !p.bindable(bind) {
				return false
			}
			p.names[bind] = full
			if !p.accept('o', ",") {
				return true
			}
		}
	case t.kind == 'n' && t.s == "from":
		p.i++
		m, ok := p.dotted()
		if !ok || !p.module(m) || !p.accept('n', "import") {
			return false
		}
		for {
			n := p.next()
			if n.kind != 'n' || strings.HasPrefix(n.s, "_") {
				return false
			}
			full := m + "." + n.s
			bind := n.s
			if p.accept('n', "as") {
				a := p.next()
				if a.kind != 'n' {
					return false
				}
				bind = a.s
			}
			if !(pyModuleFuncs[full] || pyModuleAttrs[full] || p.module(full)) || !p.bindable(bind) {
				return false
			}
			p.names[bind] = full
			if !p.accept('o', ",") {
				return true
			}
		}
	case t.kind == 'n' && pyKeywords[t.s] && t.s != "not" && t.s != "None" && t.s != "True" && t.s != "False":
		return false
	case t.kind == 'n' && p.i+1 < len(p.toks) && p.toks[p.i+1].kind == 'o' && p.toks[p.i+1].s == "=":
		if !p.bindable(t.s) {
			return false
		}
		p.i += 2
		if !p.expr() {
			return false
		}
		p.names[t.s] = ""
		return true
	}
	return p.expr()
}

// binary operators between operands.
var pyBinOps = map[string]bool{
	"+": true, "-": true, "*": true, "/": true, "//": true, "%": true, "**": true, "==": true,
	"!=": true, "<": true, ">": true, "<=": true, ">=": true, "&": true, "|": true, "^": true,
	"<<": true, ">>": true,
}

// expr reads an expression: operands joined by binary operators, and, or, in, is.
func (p *pyCheck) expr() bool {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 64 {
		return false
	}
	for {
		for p.accept('o', "-") || p.accept('o', "+") || p.accept('o', "~") || p.accept('n', "not") {
		}
		if !p.operand() {
			return false
		}
		t := p.peek()
		switch {
		case t.kind == 'o' && pyBinOps[t.s]:
			p.i++
		case t.kind == 'n' && (t.s == "and" || t.s == "or" || t.s == "in" || t.s == "is"):
			p.i++
			p.accept('n', "not")
		case t.kind == 'n' && t.s == "not":
			p.i++
			if !p.accept('n', "in") {
				return false
			}
		default:
			return true
		}
	}
}

// exprList reads expressions separated by commas up to the closing bracket close; in a
// call (call true) NAME=EXPR keyword arguments are allowed, in a dict (dict true)
// KEY: VALUE pairs.
func (p *pyCheck) exprList(close string, call, dict bool) bool {
	for !p.accept('o', close) {
		if call {
			if t := p.peek(); t.kind == 'n' && p.i+1 < len(p.toks) && p.toks[p.i+1].s == "=" && p.toks[p.i+1].kind == 'o' {
				if strings.HasPrefix(t.s, "_") {
					return false
				}
				p.i += 2
			}
		}
		if !p.expr() {
			return false
		}
		if dict && !(p.accept('o', ":") && p.expr()) {
			return false
		}
		if !p.accept('o', ",") {
			return p.accept('o', close)
		}
	}
	return true
}

// operand reads an atom and its trailers (attributes, calls, subscripts) and checks what
// they reach.
func (p *pyCheck) operand() bool {
	t := p.next()
	// path is the full dotted name of a module, module attribute or function the operand
	// is so far; value tells that it is a plain value (attributes are data, calls must be
	// methods of pyMethods).
	path, value, fn := "", false, ""
	switch {
	case t.kind == '1' || t.kind == 's':
		value = true
		for p.peek().kind == 's' {
			p.i++
		}
	case t.kind == 'n' && (t.s == "None" || t.s == "True" || t.s == "False"):
		value = true
	case t.kind == 'n':
		if pyKeywords[t.s] || strings.HasPrefix(t.s, "_") {
			return false
		}
		full, bound := p.names[t.s]
		switch {
		case bound && full == "":
			value = true
		case bound && (pyModuleFuncs[full] || pyModuleAttrs[full]):
			path = full
			value = pyModuleAttrs[full]
			if pyModuleFuncs[full] {
				fn = full
			}
		case bound:
			path = full // a module
		case pyBuiltins[t.s]:
			fn = t.s
		default:
			return false
		}
	case t.kind == 'o' && t.s == "(":
		if !p.exprList(")", false, false) {
			return false
		}
		value = true
	case t.kind == 'o' && t.s == "[":
		if !p.exprList("]", false, false) {
			return false
		}
		value = true
	case t.kind == 'o' && t.s == "{":
		if !p.exprList("}", false, true) {
			return false
		}
		value = true
	default:
		return false
	}
	for {
		switch {
		case p.accept('o', "."):
			n := p.next()
			if n.kind != 'n' || strings.HasPrefix(n.s, "_") || pyKeywords[n.s] {
				return false
			}
			switch {
			case fn != "" && path == "":
				return false // attributes of a builtin function
			case value:
				if path != "" && pyModuleFuncs[path+"."+n.s] {
					path += "." + n.s // sys.stdout.write
					fn, value = path, false
					continue
				}
				path, fn = "", ""
				if p.peek().s == "(" && p.peek().kind == 'o' {
					if !pyMethods[n.s] {
						return false
					}
					fn = "method"
				}
			default:
				path += "." + n.s
				fn = ""
				switch {
				case pyModuleFuncs[path]:
					fn = path
				case pyModuleAttrs[path] || strings.HasPrefix(path, "math.") || strings.HasPrefix(path, "string.") && strings.Count(path, ".") == 1:
					value = true
					if p.peek().s == "(" && p.peek().kind == 'o' {
						if !strings.HasPrefix(path, "math.") {
							return false
						}
						fn = path
					}
				case p.module(path):
				default:
					return false
				}
			}
		case p.peek().kind == 'o' && p.peek().s == "(":
			if fn == "" {
				return false
			}
			p.i++
			if !p.exprList(")", true, false) {
				return false
			}
			path, value, fn = "", true, ""
		case p.accept('o', "["):
			if path != "" && !value {
				return false
			}
			for !p.accept('o', "]") {
				if !p.accept('o', ":") && !p.accept('o', ",") && !p.expr() {
					return false
				}
			}
			path, value, fn = "", true, ""
		default:
			// A module or a function on its own is a value (print(os.path), print(len)).
			return true
		}
	}
}

// isPython reports whether a program name is a CPython or PyPy interpreter.
func isPython(name string) bool {
	return strings.HasPrefix(name, "python") && !strings.Contains(name, "-config") || strings.HasPrefix(name, "pypy")
}

// pythonProbe reports whether python OPTS -c CODE only reads and prints: opts are the
// option words before the one holding c (cluster is that word's letters before c), and code
// is the program.
func pythonProbe(name string, opts []arg, cluster string, code arg) bool {
	if !isPython(name) || code.dyn || code.net || code.proc || code.glob {
		return false
	}
	isolated := false
	check := func(letters string) bool {
		for _, r := range letters {
			if !strings.ContainsRune(pyReadOnlyFlags, r) {
				return false
			}
			if r == 'I' || r == 'P' {
				isolated = true
			}
		}
		return true
	}
	for _, o := range opts {
		if o.dyn || len(o.s) < 2 || o.s[0] != '-' || strings.HasPrefix(o.s, "--") || !check(o.s[1:]) {
			return false
		}
		if strings.ContainsAny(o.s, "W") {
			return false // -W takes a value that is not followed here
		}
	}
	if !check(cluster) || strings.ContainsRune(cluster, 'W') {
		return false
	}
	return pyReadOnly(code.s, isolated)
}
