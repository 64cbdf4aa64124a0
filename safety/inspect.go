package safety

import (
	"strings"
	"unicode/utf8"
)

// This file judges read-only inspection tools agents run on workspace files: sqlite3 with
// read-only SQL, tshark -r, pdftotext to standard output, plutil -p, and a lone --version
// or --help of a program this checker does not know.

// registerInspect adds the handlers of this file (called by registerEval).
func registerInspect() {
	register(hSqlite, "sqlite3", "sqlite")
	register(hTshark, "tshark")
	register(hPdftotext, "pdftotext")
	register(hPlutil, "plutil")
}

// unknownProbe reports whether argv of a program not in the table only asks for its
// version or help with the GNU long options (--version, --help), which print and exit.
func unknownProbe(argv []arg) bool {
	return len(argv) == 2 && !argv[1].dyn && (argv[1].s == "--version" || argv[1].s == "--help") && !notProbe(argv[0].s, argv[1].s)
}

// sqliteFlags are sqlite3 options (sqlite3 -help) that only change output or open the
// database read-only; sqliteValueFlags take a value. -cmd, -init, -A, -vfs, -zip,
// -deserialize and the others are not followed and ask.
var (
	sqliteFlags = map[string]bool{
		"ascii": true, "bail": true, "batch": true, "box": true, "column": true, "csv": true,
		"echo": true, "header": true, "noheader": true, "html": true, "json": true, "line": true,
		"list": true, "markdown": true, "quote": true, "readonly": true, "safe": true,
		"stats": true, "table": true, "tabs": true, "nofollow": true,
	}
	sqliteValueFlags = map[string]bool{"separator": true, "newline": true, "nullvalue": true}
)

// hSqlite judges sqlite3 [OPTIONS] DATABASE [SQL…]: SQL that only reads (sqlReadOnly) on a
// database in the workspace, or opened with -readonly, is a read; anything else may write
// the database or files, or run programs (.shell, edit()), and asks.
func hSqlite(a *analyzer, argv []arg, c *callInfo) eff {
	readonly := false
	var rest []arg
	for i := 1; i < len(argv); i++ {
		x := argv[i]
		if x.dyn {
			a.find(c, "exec.tool-exec", Ask, "sqlite3 is given a word only known at run time")
			return 0
		}
		if len(rest) == 0 && strings.HasPrefix(x.s, "-") && len(x.s) > 1 {
			name := strings.TrimLeft(x.s, "-")
			switch {
			case name == "version" || name == "help":
				if len(argv) == 2 {
					return 0
				}
			case sqliteFlags[name]:
				readonly = readonly || name == "readonly"
			case sqliteValueFlags[name] && i+1 < len(argv):
				i++
			default:
				a.find(c, "exec.tool-exec", Ask, "sqlite3 "+x.s+" is not judged (it may run commands or load code)")
				return 0
			}
			continue
		}
		rest = append(rest, x)
	}
	if len(rest) == 0 {
		a.find(c, "exec.tool-exec", Ask, "sqlite3 without a database runs the SQL and dot-commands it reads")
		return 0
	}
	db := rest[0]
	var sql []string
	for _, x := range rest[1:] {
		sql = append(sql, x.s)
	}
	if len(sql) == 0 {
		if !c.in.hasInput || !c.in.literal {
			a.find(c, "exec.tool-exec", Ask, "sqlite3 runs the SQL and dot-commands it reads from its input")
			return 0
		}
		sql = []string{c.in.body}
	}
	for _, s := range sql {
		if !sqlReadOnly(s) {
			a.find(c, "exec.tool-exec", Ask, "This SQL may change the database or files, or run programs")
			return 0
		}
	}
	if db.s == ":memory:" || readonly {
		return 0
	}
	if p, ok := a.resolve(db); ok && a.classify(p) == pcWorkspace {
		return 0
	}
	a.find(c, "exec.tool-exec", Ask, "sqlite3 may write beside a database outside the workspace (its journal); open it with -readonly")
	return 0
}

// sqlWrites lists SQL keywords and sqlite3 shell functions that change a database, create
// files, read files other than the database or run programs (sqlite.org/lang.html,
// sqlite.org/cli.html: writefile, edit, readfile, fsdir, load_extension).
var sqlWrites = map[string]bool{
	"insert": true, "update": true, "delete": true, "replace": true, "create": true,
	"drop": true, "alter": true, "attach": true, "detach": true, "vacuum": true,
	"reindex": true, "analyze": true, "begin": true, "commit": true, "rollback": true,
	"savepoint": true, "release": true, "end": true, "upsert": true, "writefile": true,
	"edit": true, "readfile": true, "load_extension": true, "fts3_tokenizer": true,
	"sqlar_compress": true, "sqlar_uncompress": true, "zipfile": true, "into": true,
	"fsdir": true, "sqlar": true,
}

// sqlReadDot lists sqlite3 dot-commands that only print.
var sqlReadDot = map[string]bool{
	".tables": true, ".schema": true, ".indexes": true, ".indices": true, ".headers": true,
	".header": true, ".mode": true, ".width": true, ".databases": true, ".fullschema": true,
	".show": true, ".nullvalue": true, ".separator": true, ".timer": true, ".eqp": true,
	".dbinfo": true, ".stats": true,
}

// sqlReadPragmas lists pragmas that only report (when not given a value with =).
var sqlReadPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "database_list": true,
	"compile_options": true, "user_version": true, "schema_version": true,
	"page_count": true, "page_size": true, "integrity_check": true, "quick_check": true,
	"encoding": true, "collation_list": true, "function_list": true, "module_list": true,
	"pragma_list": true, "table_list": true, "foreign_key_check": true, "freelist_count": true,
	"application_id": true, "journal_mode": true,
}

// sqlReadOnly reports whether text (SQL and dot-commands) only reads: every statement is
// SELECT, VALUES, EXPLAIN or WITH, or a reporting pragma, no word of sqlWrites appears
// outside string literals, and every dot-command is in sqlReadDot.
func sqlReadOnly(text string) bool {
	var stmt []string // the words of the statement being read
	pragma := false
	end := func() bool {
		if len(stmt) == 0 {
			return true
		}
		first := stmt[0]
		ok := first == "select" || first == "values" || first == "explain" || first == "with"
		if first == "pragma" {
			ok = len(stmt) >= 2 && sqlReadPragmas[stmt[1]] && !pragma
		}
		stmt, pragma = stmt[:0], false
		return ok
	}
	atLineStart := true
	for i := 0; i < len(text); {
		c := text[i]
		if atLineStart && len(stmt) == 0 {
			j := i
			for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
				j++
			}
			if j < len(text) && text[j] == '.' {
				k := strings.IndexByte(text[j:], '\n')
				line := text[j:]
				if k >= 0 {
					line = text[j : j+k]
				}
				f := strings.Fields(line)
				if len(f) == 0 || !sqlReadDot[strings.ToLower(f[0])] {
					return false
				}
				if k < 0 {
					return true
				}
				i = j + k + 1
				continue
			}
		}
		atLineStart = false
		switch {
		case c == '\n':
			atLineStart = true
			i++
		case c == '\'' || c == '"' || c == '`' || c == '[':
			close := c
			if c == '[' {
				close = ']'
			}
			j := strings.IndexByte(text[i+1:], close)
			if j < 0 {
				return false
			}
			if c != '\'' {
				// A quoted identifier is a name: judge it as a word.
				stmt = append(stmt, strings.ToLower(text[i+1:i+1+j]))
				if sqlWrites[stmt[len(stmt)-1]] {
					return false
				}
			}
			i += j + 2
		case c == '-' && strings.HasPrefix(text[i:], "--"):
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				i = len(text)
			} else {
				i += j
			}
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return false
			}
			i += j + 4
		case c == ';':
			if !end() {
				return false
			}
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(text) && (text[j] == '_' || text[j] == '$' || text[j] >= 'a' && text[j] <= 'z' || text[j] >= 'A' && text[j] <= 'Z' || text[j] >= '0' && text[j] <= '9') {
				j++
			}
			w := strings.ToLower(text[i:j])
			if sqlWrites[w] {
				return false
			}
			stmt = append(stmt, w)
			i = j
		case c == '=':
			if len(stmt) > 0 && stmt[0] == "pragma" {
				pragma = true
			}
			i++
		default:
			i++
		}
	}
	return end()
}

// tsharkFlags are tshark options (tshark(1)) that only choose what is read from a capture
// file and how it is printed; tsharkValueFlags take a value. Capturing (-i), writing (-w,
// --export-objects), Lua scripts (-X) and preferences (-o) are not here and ask.
var (
	tsharkFlags = map[string]bool{
		"-2": true, "-V": true, "-x": true, "-P": true, "-n": true, "-q": true, "-Q": true,
		"-l": true, "--color": true, "--no-duplicate-keys": true, "-g": true, "-S": false,
	}
	tsharkValueFlags = map[string]bool{
		"-r": true, "-Y": true, "-R": true, "-T": true, "-e": true, "-E": true, "-O": true,
		"-N": true, "-c": true, "-z": true, "-t": true, "-j": true, "-J": true, "-d": true,
		"--disable-protocol": true, "--enable-protocol": true, "--read-file": true,
		"--display-filter": true, "--read-filter": true, "-u": true,
	}
)

// hTshark judges tshark: reading a capture file (-r) and printing it is a read; a version,
// help or glossary query (-v, -h, -G, -D) too. Live capture, writing files, Lua scripts and
// preferences ask.
func hTshark(a *analyzer, argv []arg, c *callInfo) eff {
	if len(argv) == 2 && (argv[1].s == "-v" || argv[1].s == "-h" || argv[1].s == "--version" || argv[1].s == "--help" || argv[1].s == "-D") {
		return 0
	}
	if len(argv) >= 2 && argv[1].s == "-G" {
		return 0
	}
	read := false
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		name, _, hasVal := strings.Cut(s, "=")
		switch {
		case argv[i].dyn:
			a.find(c, "exec.tool-exec", Ask, "tshark is given an option only known at run time")
			return 0
		case tsharkFlags[s]:
		case tsharkValueFlags[s] && i+1 < len(argv):
			read = read || s == "-r" || s == "--read-file"
			i++
		case strings.HasPrefix(name, "--") && tsharkValueFlags[name] && hasVal:
			read = read || name == "--read-file"
		case len(s) > 2 && tsharkValueFlags[s[:2]]:
			read = read || s[:2] == "-r"
		case !strings.HasPrefix(s, "-"):
			// A read filter given as operands.
		default:
			a.find(c, "exec.tool-exec", Ask, "tshark "+s+" is not judged (it may capture, write files or run scripts)")
			return 0
		}
	}
	if !read {
		a.find(c, "network.access", Ask, "tshark without -r captures live traffic")
	}
	return 0
}

// hPdftotext judges pdftotext [OPTIONS] PDF [TEXT]: the text goes to TEXT, or PDF with .txt
// when TEXT is missing (pdftotext(1)); "-" is standard output.
func hPdftotext(a *analyzer, argv []arg, c *callInfo) eff {
	var ops []arg
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		switch s {
		case "-f", "-l", "-r", "-x", "-y", "-W", "-H", "-fixed", "-enc", "-eol", "-opw", "-upw", "-colspacing":
			i++
			continue
		}
		if strings.HasPrefix(s, "-") && s != "-" {
			continue
		}
		ops = append(ops, argv[i])
	}
	switch len(ops) {
	case 0:
		return 0
	case 1:
		if ops[0].s == "-" {
			return 0
		}
		out := strings.TrimSuffix(strings.TrimSuffix(ops[0].s, ".pdf"), ".PDF") + ".txt"
		a.writeTarget(subArg(ops[0], out), "write", c.pos, c.end)
	default:
		if ops[1].s != "-" {
			a.writeTarget(ops[1], "write", c.pos, c.end)
		}
	}
	return 0
}

// hPlutil judges plutil (macOS): -p, -lint, -type and -help only read; -convert, -insert,
// -replace, -remove and -create write the files (or -o FILE), -extract writes unless -o -.
func hPlutil(a *analyzer, argv []arg, c *callInfo) eff {
	writes := false
	out := -1
	var files []arg
	for i := 1; i < len(argv); i++ {
		s := argv[i].s
		switch s {
		case "-p", "-lint", "-help", "-s", "-r", "-n":
		case "-type":
			i++ // the keypath
		case "-convert":
			writes = true
			i++
		case "-insert", "-replace":
			writes = true
			i += 3 // keypath, type, value
		case "-remove":
			writes = true
			i++
		case "-create":
			writes = true
			i++
		case "-extract":
			writes = true
			i += 2 // keypath, format
		case "-o", "-e":
			if i+1 < len(argv) {
				if s == "-o" {
					out = i + 1
				}
				i++
			}
		default:
			if strings.HasPrefix(s, "-") && s != "-" {
				a.find(c, "exec.tool-exec", Ask, "plutil "+s+" is not judged")
				return 0
			}
			files = append(files, argv[i])
		}
	}
	if !writes {
		return 0
	}
	if out >= 0 {
		if argv[out].s != "-" {
			a.writeTarget(argv[out], "write", c.pos, c.end)
		}
		return 0
	}
	for _, f := range files {
		a.writeTarget(f, "write", c.pos, c.end)
	}
	return 0
}

// quoteState follows single and double quotes through a command, roughly (here-documents,
// comments and $'…' are not told apart), for emojiVariation: a mistake there only decides
// whether a variation selector after an emoji is accepted.
type quoteState struct {
	single, double bool
	skip           bool // the byte before was a backslash outside single quotes
}

// step takes the ASCII byte s[i] into account.
func (q *quoteState) step(s string, i int) {
	if q.skip {
		q.skip = false
		return
	}
	switch s[i] {
	case '\\':
		q.skip = !q.single
	case '\'':
		if !q.double {
			q.single = !q.single
		}
	case '"':
		if !q.single {
			q.double = !q.double
		}
	}
}

// quoted reports whether the position is inside quotes.
func (q *quoteState) quoted() bool { return q.single || q.double }

// emojiVariation reports whether r at s[i] is a text or emoji variation selector (U+FE0E,
// U+FE0F) right after a pictographic symbol (✔️, ❤️, ⚠️): the selector only chooses how
// the symbol is drawn, and bash and the parser read the quoted bytes alike (Unicode
// Technical Standard #51, "Emoji Presentation Sequences").
func emojiVariation(s string, i int, r rune) bool {
	if r != 0xFE0F && r != 0xFE0E || i == 0 {
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(s[:i])
	switch {
	case prev >= 0x1F000 && prev <= 0x1FAFF, prev >= 0x2600 && prev <= 0x27BF,
		prev >= 0x2190 && prev <= 0x21FF, prev >= 0x2300 && prev <= 0x23FF,
		prev >= 0x2B00 && prev <= 0x2BFF, prev >= 0x25A0 && prev <= 0x25FF,
		prev == 0x00A9, prev == 0x00AE, prev == 0x203C, prev == 0x2049, prev == 0x2122,
		prev == 0x2139, prev == 0x24C2, prev == 0x3030, prev == 0x303D, prev == 0x3297,
		prev == 0x3299:
		return true
	}
	return false
}
