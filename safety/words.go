package safety

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// dyn marks, inside an argument's value, a part only known when the command runs (a
// parameter, a command substitution, arithmetic). The input never contains it: control
// characters are refused before parsing.
const dyn = "\x00"

// arg is one field of a command's argv after quote removal, tilde and brace expansion.
type arg struct {
	s    string       // the value; dyn marks run-time parts
	dyn  bool         // s contains a run-time part
	glob bool         // s contains an unquoted glob character
	net  bool         // a substitution in the word produces downloaded or decoded content
	proc bool         // the word is a process substitution
	sub  bool         // the value comes (in part) from a command substitution
	cred bool         // a substitution in the word outputs a credential file
	w    *syntax.Word // the source word; nil for synthesized arguments
}

// lit returns a literal argument.
func lit(s string) arg { return arg{s: s} }

// plainLit reports whether an unquoted literal needs no quote removal or expansion.
func plainLit(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '~', '{', '*', '?', '[':
			return false
		}
	}
	return true
}

// word evaluates w into fields appended to dst, judging every substitution inside it.
// assign enables tilde expansion after '=' and ':' (assignment values).
func (a *analyzer) word(dst []arg, w *syntax.Word, assign bool) []arg {
	if w == nil {
		return dst
	}
	if !a.tick() {
		return append(dst, arg{s: dyn, dyn: true, w: w})
	}
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && plainLit(l.Value) && !(assign && strings.Contains(l.Value, "~")) {
			return append(dst, arg{s: l.Value, w: w})
		}
	}
	if len(dst) > 0 || true {
		for _, p := range w.Parts {
			if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
				syntax.SplitBraces(w)
				break
			}
		}
	}
	e := wordEval{a: a, vals: []string{""}, assign: assign}
	e.parts(w.Parts, false, true)
	if e.split && !assign {
		// Unquoted known values with blanks split into several fields.
		var out []string
		for _, v := range e.vals {
			out = append(out, strings.Fields(v)...)
		}
		e.vals = out
	}
	if len(e.done) > 0 {
		// "${a[@]}": the fields of the elements before the last one.
		e.vals = append(e.done, e.vals...)
	}
	for _, v := range e.vals {
		if v == "" && (!e.quoted || e.emptySplat && len(e.vals) == 1) && !e.dyn {
			continue // an unquoted expansion to nothing is no field at all
		}
		dst = append(dst, arg{s: v, dyn: e.dyn || strings.Contains(v, dyn), glob: e.glob, net: e.net, proc: e.proc, w: w, sub: e.sub, cred: e.cred})
	}
	return dst
}

// defaultWord returns the literal default of a word that is only ${X:-word} (or ${X-word},
// ${X:=word}, ${X=word}), quoted or not, or "".
func defaultWord(w *syntax.Word) string {
	if len(w.Parts) != 1 {
		return ""
	}
	p := w.Parts[0]
	if dq, ok := p.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		p = dq.Parts[0]
	}
	pe, ok := p.(*syntax.ParamExp)
	if !ok || pe.Exp == nil || pe.Exp.Word == nil {
		return ""
	}
	switch pe.Exp.Op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		if l := pe.Exp.Word.Lit(); l != "" && plainLit(l) {
			return l
		}
	}
	return ""
}

// substOutput returns what a command substitution prints when it is known without running
// anything ($(echo rm), $(pwd), $(cat <<'EOF' … EOF)), with trailing newlines removed as
// the shell removes them.
func substOutput(a *analyzer, stmts []*syntax.Stmt) (string, bool) {
	if len(stmts) == 1 && a.written != nil {
		// $(cat FILE) or $(< FILE) of a file written earlier with known content.
		var file *syntax.Word
		s := stmts[0]
		if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) == 2 && call.Args[0].Lit() == "cat" && len(s.Redirs) == 0 {
			file = call.Args[1]
		} else if s.Cmd == nil && len(s.Redirs) == 1 && s.Redirs[0].Op == syntax.RdrIn {
			file = s.Redirs[0].Word
		}
		if file != nil && file.Lit() != "" {
			l := file.Lit()
			if p, ok := a.resolve(lit(l)); ok {
				if text, ok := a.written[p]; ok && !strings.Contains(text, dyn) {
					return strings.TrimRight(text, "\n"), true
				}
			}
		}
	}
	if len(stmts) == 1 {
		if call, ok := stmts[0].Cmd.(*syntax.CallExpr); ok && len(call.Args) == 1 && call.Args[0].Lit() == "cat" && len(stmts[0].Redirs) == 1 {
			if out, ok := a.hdocText(stmts[0].Redirs[0]); ok {
				return strings.TrimRight(out, "\n"), true
			}
			return "", false
		}
	}
	if out, ok := repoPathOutput(a, stmts); ok {
		return out, true
	}
	return echoOutput(a, stmts)
}

// echoOutput returns what a command substitution prints when it is a single echo or
// printf of literal words (such as $(echo rm)), so that the value is judged, not guessed.
func echoOutput(a *analyzer, stmts []*syntax.Stmt) (string, bool) {
	if len(stmts) != 1 || len(stmts[0].Redirs) > 0 || stmts[0].Background {
		return "", false
	}
	call, ok := stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) < 1 {
		return "", false
	}
	name := call.Args[0].Lit()
	if name == "pwd" && len(call.Args) == 1 && a.cwd != "" {
		return a.cwd, true
	}
	if name == "printf" {
		out, ok := a.printfOutput(call.Args[1:])
		return strings.TrimRight(out, "\n"), ok
	}
	if name == "echo" {
		return a.echoOutput(call.Args[1:])
	}
	if name != "echo" && name != "printf" || len(call.Args) < 2 || name == "printf" && len(call.Args) != 2 {
		return "", false
	}
	var parts []string
	for i, w := range call.Args[1:] {
		var buf [2]arg
		vs := a.word(buf[:0], w, false)
		if len(vs) != 1 || vs[0].dyn || vs[0].glob {
			return "", false
		}
		s := vs[0].s
		if i == 0 && strings.HasPrefix(s, "-") || strings.Contains(s, "%") {
			return "", false
		}
		if strings.Contains(s, "\\") {
			if name != "printf" || i != 0 {
				return "", false
			}
			s = ansiC(s) // printf's format interprets escapes such as \x72
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " "), true
}

// wordEval accumulates the fields of one word.
type wordEval struct {
	a        *analyzer
	vals     []string
	dyn      bool
	glob     bool
	net      bool
	proc     bool
	split    bool // an unquoted known value holds blanks
	sub      bool // a command substitution was resolved
	cred     bool // a substitution outputs a credential file
	overflow bool // brace expansion exceeded maxBraceFields
	hdoc     bool // evaluating an unquoted here-document body
	quoted   bool // the word has a quoted part, so an empty value is still a field
	assign   bool

	done       []string // fields completed by a "${a[@]}" expansion (see splat)
	emptySplat bool     // a "${a[@]}" of no elements (no field unless other parts add text)
}

func (e *wordEval) push(s string) {
	for i := range e.vals {
		e.vals[i] += s
	}
}

// parts evaluates word parts; dq tells whether they are inside double quotes, first whether
// the first part starts the word (for tilde expansion).
func (e *wordEval) parts(parts []syntax.WordPart, dq bool, first bool) {
	for i, p := range parts {
		// The POSIX parser reads $'…' as "$" then '…'; /bin/sh may be bash, which decodes
		// it, and the decoded value is the one that can do harm.
		if l, ok := p.(*syntax.Lit); ok && !dq && i+1 < len(parts) && strings.HasSuffix(l.Value, "$") && !strings.HasSuffix(l.Value, "\\$") {
			if q, ok := parts[i+1].(*syntax.SglQuoted); ok && !q.Dollar {
				trimmed := *l
				trimmed.Value = l.Value[:len(l.Value)-1]
				e.part(&trimmed, dq, first && i == 0)
				parts[i+1] = &syntax.SglQuoted{Left: q.Left, Right: q.Right, Dollar: true, Value: q.Value}
				continue
			}
		}
		e.part(p, dq, first && i == 0)
	}
}

func (e *wordEval) part(p syntax.WordPart, dq bool, first bool) {
	a := e.a
	switch x := p.(type) {
	case *syntax.Lit:
		if e.hdoc {
			e.push(unescapeHdoc(x.Value))
			return
		}
		if dq {
			e.push(unescapeDQ(x.Value))
			return
		}
		v := x.Value
		if first && strings.HasPrefix(v, "~") {
			v = e.tilde(v)
		} else if first && !e.assign {
			// bash expands ~ after the = of an argument that looks like an assignment
			// (dd of=~/x), outside POSIX mode.
			if i := strings.Index(v, "=~"); i > 0 && validName(v[:i]) && e.a.curDialect == Bash {
				v = v[:i+1] + e.tilde(v[i+1:])
			}
		}
		if e.assign {
			v = e.tildeAfterColons(v)
		}
		s, g := unescapeBare(v)
		if g {
			e.glob = true
		}
		e.push(s)
	case *syntax.SglQuoted:
		e.quoted = true
		// A POSIX sh such as dash reads $'\x72m' as "$\x72m", but /bin/sh may be bash,
		// which decodes it; the decoded value is the one that can do harm.
		if x.Dollar {
			e.push(ansiC(x.Value))
		} else {
			e.push(x.Value)
		}
	case *syntax.DblQuoted:
		e.quoted = true
		e.parts(x.Parts, true, false)
	case *syntax.ParamExp:
		if x.Param != nil && a.taint != nil {
			if t := a.taint[x.Param.Value]; t != 0 {
				e.net = e.net || t&effFetch != 0
				e.cred = e.cred || t&effCredRead != 0
			}
		}
		if dq && e.splat(x) {
			return
		}
		prevDQ := a.ev.dq
		a.ev.dq = dq
		v, ok := a.param(x)
		a.ev.dq = prevDQ
		if !ok {
			e.dyn = true
			e.push(dyn)
			return
		}
		if !dq && isGlob(v) {
			e.glob = true
		}
		if (!dq || x.Param != nil && x.Param.Value == "@") && strings.ContainsAny(v, " \t\n") {
			e.split = true
		}
		e.push(v)
	case *syntax.CmdSubst:
		if out, ok := substOutput(a, x.Stmts); ok {
			// bash drops NUL bytes from a substitution's output (printf 'r\0m' is rm);
			// no other source of the dyn byte reaches a known output.
			out = strings.ReplaceAll(out, dyn, "")
			if !dq && strings.ContainsAny(out, " \t\n") {
				e.split = true
			}
			e.push(out)
			e.sub = true
			return
		}
		a.depth++
		ef := a.sub(x.Stmts)
		a.depth--
		if ef&(effFetch|effDecode) != 0 {
			e.net = true
		}
		if ef&effCredRead != 0 {
			e.cred = true
		}
		e.dyn = true
		e.push(dyn)
	case *syntax.ArithmExp:
		a.arith(x.X)
		if n, ok := a.arithValue(x.X, 0); ok {
			e.push(strconv.FormatInt(n, 10))
			return
		}
		e.dyn = true
		e.push(dyn)
	case *syntax.ProcSubst:
		a.depth++
		ef := a.sub(x.Stmts)
		a.depth--
		if ef&(effFetch|effDecode) != 0 {
			e.net = true
		}
		if ef&effCredRead != 0 {
			e.cred = true
		}
		e.proc = true
		if x.Op == syntax.CmdOut {
			a.outSubst |= ef
		}
		if len(x.Stmts) == 1 && x.Op == syntax.CmdIn {
			if out, ok := literalOutput(a, x.Stmts[0]); ok {
				// <(echo 'rm -rf /') is a file with known content: keep it for a shell that
				// runs it.
				if a.procText == nil {
					a.procText = map[*syntax.ProcSubst]string{}
				}
				a.procText[x] = out
			}
		}
		e.push("/dev/fd/63")
	case *syntax.ExtGlob:
		e.glob = true
		e.push(x.Op.String() + x.Pattern.Value + ")")
	case *syntax.BraceExp:
		e.brace(x)
	default:
		a.addNode("parse.unknown-node", Ask, p, "This word part is not judged")
		e.dyn = true
		e.push(dyn)
	}
}

// brace expands a brace expression: every current field is multiplied by its elements.
func (e *wordEval) brace(x *syntax.BraceExp) {
	if e.overflow {
		return // already a run-time value: the rest of the word adds nothing to judge
	}
	if len(e.done) > 0 {
		// Braces after "${a[@]}": bash expands the braces first; not followed.
		e.dyn, e.overflow = true, true
		e.push(dyn)
		return
	}
	var elems []string
	if x.Sequence {
		elems = e.sequence(x)
	} else {
		atStart := len(e.vals) == 1 && e.vals[0] == ""
		for _, w := range x.Elems {
			sub := wordEval{a: e.a, vals: []string{""}, assign: e.assign}
			sub.parts(w.Parts, false, atStart) // bash expands braces before tildes
			e.dyn = e.dyn || sub.dyn
			e.glob = e.glob || sub.glob
			e.net = e.net || sub.net
			elems = append(elems, sub.vals...)
		}
	}
	if len(elems) == 0 || len(e.vals)*len(elems) > maxBraceFields {
		e.dyn, e.overflow = true, true
		e.vals = e.vals[:1]
		e.push(dyn)
		return
	}
	out := make([]string, 0, len(e.vals)*len(elems))
	for _, v := range e.vals {
		for _, el := range elems {
			out = append(out, v+el)
		}
	}
	e.vals = out
}

// sequence expands {x..y[..incr]} for integers and single letters.
func (e *wordEval) sequence(x *syntax.BraceExp) []string {
	if len(x.Elems) < 2 {
		return nil
	}
	from, to := x.Elems[0].Lit(), x.Elems[1].Lit()
	incr := 1
	if len(x.Elems) > 2 {
		n, err := strconv.Atoi(x.Elems[2].Lit())
		if err != nil || n == 0 {
			return nil
		}
		if n < 0 {
			n = -n
		}
		incr = n
	}
	var out []string
	if f, err1 := strconv.Atoi(from); err1 == nil {
		t, err2 := strconv.Atoi(to)
		if err2 != nil {
			return nil
		}
		step := incr
		if t < f {
			step = -incr
		}
		for i := f; (step > 0 && i <= t) || (step < 0 && i >= t); i += step {
			out = append(out, strconv.Itoa(i))
			if len(out) > maxBraceFields {
				return nil
			}
		}
		return out
	}
	if len(from) == 1 && len(to) == 1 {
		f, t := int(from[0]), int(to[0])
		step := incr
		if t < f {
			step = -incr
		}
		for i := f; (step > 0 && i <= t) || (step < 0 && i >= t); i += step {
			out = append(out, string(rune(i)))
		}
		return out
	}
	return nil
}

// tilde expands a leading ~ in an unquoted literal.
func (e *wordEval) tilde(v string) string {
	end := strings.IndexByte(v, '/')
	if end < 0 {
		end = len(v)
	}
	name := v[1:end]
	if e.assign {
		if c := strings.IndexByte(name, ':'); c >= 0 {
			name = name[:c]
			end = 1 + c
		}
	}
	a := e.a
	switch name {
	case "":
		if h, ok := a.vars["HOME"]; ok {
			if strings.Contains(h, dyn) {
				e.dyn = true
				return dyn + v[end:]
			}
			return h + v[end:]
		}
		if a.ctx.Home == "" {
			e.dyn = true
			return dyn + v[end:]
		}
		return a.ctx.Home + v[end:]
	case "+":
		if a.cwd == "" {
			e.dyn = true
			return dyn + v[end:]
		}
		return a.cwd + v[end:]
	case "-":
		e.dyn = true
		return dyn + v[end:]
	case "root":
		return "/root" + v[end:]
	}
	if strings.ContainsAny(name, "\\'\"$") {
		return v
	}
	return "/home/" + name + v[end:]
}

// tildeAfterColons expands ~ after '=' or ':' in an assignment value (bash does this for
// PATH-like values).
func (e *wordEval) tildeAfterColons(v string) string {
	if !strings.Contains(v, ":~") {
		return v
	}
	parts := strings.Split(v, ":")
	for i := 1; i < len(parts); i++ {
		if strings.HasPrefix(parts[i], "~") {
			parts[i] = e.tilde(parts[i])
		}
	}
	return strings.Join(parts, ":")
}

// validName reports whether s is a shell variable name.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// homeChanged reports whether this command assigned HOME, so ~ no longer means ctx.Home.
func (a *analyzer) homeChanged() bool {
	_, ok := a.vars["HOME"]
	return ok
}

// param returns the value of a parameter expansion when it is known without running
// anything: $HOME, $PWD and variables assigned literally earlier in the command. It judges
// substitutions inside the expansion (indexes, defaults, replacements).
func (a *analyzer) param(x *syntax.ParamExp) (string, bool) {
	if x.Index != nil {
		a.arith(x.Index)
	}
	if x.Exp != nil && x.Exp.Word != nil {
		a.wordEffects(x.Exp.Word)
	}
	if x.Repl != nil {
		a.wordEffects(x.Repl.Orig)
		a.wordEffects(x.Repl.With)
	}
	if x.Slice != nil {
		a.arith(x.Slice.Offset)
		a.arith(x.Slice.Length)
	}
	if x.NestedParam != nil {
		var e wordEval
		e.a = a
		e.vals = []string{""}
		e.part(x.NestedParam, true, false)
	}
	if x.Excl && x.Param != nil && x.Index == nil {
		// ${!x}: the value of x names the variable, a[$(cmd)] included.
		if v, ok := a.paramValue(x.Param.Value); ok && evaluated(v) {
			a.evalCode(v, x)
		}
	}
	if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Param != nil && x.Exp.Word != nil && strings.ContainsAny(x.Exp.Word.Lit(), "P") {
		// ${x@P} expands the value as a prompt string: its command substitutions run.
		if v, ok := a.paramValue(x.Param.Value); !ok {
			a.addNode("dynamic.script", Ask, x, "${"+x.Param.Value+"@P} runs the command substitutions of a value only known at run time")
		} else if evaluated(v) {
			a.evalCode(v, x)
		}
		return "", false
	}
	if v, ok, done := a.paramMore(x, a.ev.dq); done {
		return v, ok
	}
	if x.Exp != nil && x.Param != nil && !x.Excl && !x.Length && x.Index == nil && x.Slice == nil && x.Repl == nil {
		return a.trimParam(x)
	}
	if x.Param == nil || x.Excl || x.Length || x.Width || x.IsSet || x.Index != nil || x.Slice != nil || x.Repl != nil || x.Exp != nil || x.Names != 0 || len(x.Modifiers) > 0 || x.Flags != nil {
		return "", false
	}
	return a.paramValue(x.Param.Value)
}

// trimParam evaluates ${X%pat}, ${X%%pat}, ${X#pat} and ${X##pat} of a known X with a
// literal pattern, and ${X:?msg} / ${X?msg} of a known X.
func (a *analyzer) trimParam(x *syntax.ParamExp) (string, bool) {
	v, ok := a.paramValue(x.Param.Value)
	if !ok {
		return "", false
	}
	switch x.Exp.Op {
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return v, true
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull:
		if v != "" {
			return v, true
		}
		return "", false
	}
	pat := ""
	if x.Exp.Word != nil {
		pat = x.Exp.Word.Lit()
		if pat == "" && len(x.Exp.Word.Parts) > 0 {
			return "", false
		}
	}
	match := func(s string) bool { return shellMatch(pat, s) }
	switch x.Exp.Op {
	case syntax.RemSmallSuffix:
		for i := len(v); i >= 0; i-- {
			if match(v[i:]) {
				return v[:i], true
			}
		}
		return v, true
	case syntax.RemLargeSuffix:
		for i := 0; i <= len(v); i++ {
			if match(v[i:]) {
				return v[:i], true
			}
		}
		return v, true
	case syntax.RemSmallPrefix:
		for i := 0; i <= len(v); i++ {
			if match(v[:i]) {
				return v[i:], true
			}
		}
		return v, true
	case syntax.RemLargePrefix:
		for i := len(v); i >= 0; i-- {
			if match(v[:i]) {
				return v[i:], true
			}
		}
		return v, true
	}
	return "", false
}

// shellMatch reports whether s matches the shell pattern pat, where * and ? also match '/'
// (as in parameter expansion patterns) and [...] is a bracket expression.
func shellMatch(pat, s string) bool {
	for len(pat) > 0 {
		switch pat[0] {
		case '*':
			for i := len(s); i >= 0; i-- {
				if shellMatch(pat[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pat, s = pat[1:], s[1:]
		case '[':
			end := strings.IndexByte(pat[1:], ']')
			if end < 0 || s == "" {
				return false
			}
			if ok, err := path.Match(pat[:end+2], s[:1]); err != nil || !ok {
				return false
			}
			pat, s = pat[end+2:], s[1:]
		case '\\':
			if len(pat) < 2 || s == "" || s[0] != pat[1] {
				return false
			}
			pat, s = pat[2:], s[1:]
		default:
			if s == "" || s[0] != pat[0] {
				return false
			}
			pat, s = pat[1:], s[1:]
		}
	}
	return s == ""
}

// paramValue returns the value of a named parameter when it is known.
func (a *analyzer) paramValue(name string) (string, bool) {
	if a.aliased[name] {
		return "", false // declare -n: the value is another variable's
	}
	if v, ok := a.vars[name]; ok {
		if strings.Contains(v, dyn) {
			return "", false
		}
		return v, true
	}
	switch name {
	case "HOME":
		if a.ctx.Home != "" {
			return a.ctx.Home, true
		}
	case "PWD":
		if a.cwd != "" {
			return a.cwd, true
		}
	case "OLDPWD":
		if a.oldSet && a.oldpwd != "" {
			return a.oldpwd, true
		}
	case "IFS":
		return defaultIFS, true // bash and dash ignore IFS in the environment
	}
	return "", false
}

// unescapeBare removes backslashes from an unquoted literal and reports whether it holds an
// unquoted glob character.
func unescapeBare(v string) (string, bool) {
	if strings.IndexByte(v, '\\') < 0 {
		return v, isGlob(v)
	}
	var b strings.Builder
	glob := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' {
			if i+1 < len(v) {
				i++
				if v[i] != '\n' {
					b.WriteByte(v[i])
				}
			}
			continue
		}
		if c == '*' || c == '?' || c == '[' && strings.IndexByte(v[i:], ']') > 0 {
			glob = true
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

// isGlob reports whether an unquoted literal holds a pattern character: * or ?, or a [
// that a ] closes.
func isGlob(v string) bool {
	if strings.ContainsAny(v, "*?") {
		return true
	}
	i := strings.IndexByte(v, '[')
	return i >= 0 && strings.IndexByte(v[i+1:], ']') >= 0
}

// unescapeDQ removes the backslashes that double quotes remove: before $ ` " \ and newline.
func unescapeDQ(v string) string { return unescapeBefore(v, "$`\"\\") }

// unescapeHdoc removes the backslashes an unquoted here-document removes: before $ ` \ and
// newline (not before ", unlike double quotes).
func unescapeHdoc(v string) string { return unescapeBefore(v, "$`\\") }

// unescapeBefore removes each backslash that stands before one of the bytes in special (the
// backslash goes, the byte stays) and each backslash-newline pair (both go), as bash does
// inside double quotes and unquoted here-documents (bash(1), QUOTING).
func unescapeBefore(v, special string) string {
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			switch next := v[i+1]; {
			case next == '\n':
				i++
				continue
			case strings.IndexByte(special, next) >= 0:
				b.WriteByte(next)
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ansiC decodes the body of a $'…' string as bash does (bash(1), QUOTING).
func ansiC(v string) string {
	if strings.IndexByte(v, '\\') < 0 {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		i++
		switch v[i] {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(v[i])
		case 'x':
			n, j := hexDigits(v, i+1, 2)
			if j == i+1 {
				b.WriteString("\\x")
				continue
			}
			b.WriteByte(byte(n))
			i = j - 1
		case 'u', 'U':
			max := 4
			if v[i] == 'U' {
				max = 8
			}
			n, j := hexDigits(v, i+1, max)
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(v[i])
				continue
			}
			if n > utf8.MaxRune {
				n = utf8.RuneError
			}
			b.WriteRune(rune(n))
			i = j - 1
		case 'c':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i] & 0x1f)
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n, j := 0, i
			for j < len(v) && j < i+3 && v[j] >= '0' && v[j] <= '7' {
				n = n*8 + int(v[j]-'0')
				j++
			}
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

func hexDigits(v string, i, max int) (int, int) {
	n, j := 0, i
	for j < len(v) && j < i+max {
		c := v[j]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return n, j
		}
		n = n*16 + d
		j++
	}
	return n, j
}
