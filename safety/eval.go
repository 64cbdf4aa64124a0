package safety

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// This file computes what bash computes from the command itself, without running anything:
// printf and echo output, printf -v, read from a here-string or here-document, ${!name},
// $IFS, defaults, lengths, substrings, replacements and case changes of known values,
// indexed arrays and "$@", $((…)) of known operands, declare attributes (-l, -u, -i),
// += appends, unset, and eval in the current shell. Every value is either computed exactly
// as bash computes it (bash(1) "EXPANSION", "SHELL BUILTIN COMMANDS"; printf(1)) or left
// as a run-time part: the checker never guesses. A value that may take a literal default
// (${X:-rm}) is judged a second time with the default.

// Keys in analyzer.vars that are not shell variable names (they start with the dyn byte,
// which no name holds): the elements of an indexed array and the declare attributes of a
// variable. Keeping them in vars makes subshells, background jobs and nested shells scope
// them exactly as they scope the values.
const (
	arrKey  = dyn + "arr:"  // arrKey+NAME: the elements of array NAME, encoded by encodeArray
	attrKey = dyn + "attr:" // attrKey+NAME: declare attributes of NAME ("l", "u", "i")
	altKey  = dyn + "alt:"  // altKey+NAME: the values NAME has if code that may not have run did or did not run
)

// Evaluation budget: a value longer than maxEvalLen bytes, an array longer than
// maxArrayLen elements or a printf width over maxPrintfWidth is left as a run-time part.
const (
	maxEvalLen      = 64 << 10
	maxArrayLen     = 256
	maxPrintfWidth  = 4096
	maxArithDepth   = 16 // nesting of variables whose values are expressions
	defaultIFS      = " \t\n"
	maxPrintfRounds = 256 // times printf reuses its format for the remaining arguments
)

// evalState is the part of the analyzer's state this file adds.
type evalState struct {
	altMode   bool                 // judging the alternative of a command: unknown X in ${X:-w} takes w
	prefixIFS bool                 // the simple command being judged has an IFS=… prefix
	sameShell bool                 // the next nested script runs in the current shell (eval)
	readLine  *string              // the input line the read of a while-read loop gets (see whileRead)
	inLoop    bool                 // judging the body of a while-read loop line by line
	arithNest int                  // arithValue calls under way (bounds chains through values)
	funcs     map[string]*funcBody // function bodies, for calls with arguments (see callFunc)

	readPrefix   bool    // judging the prefix assignments of a read command
	prefixIFSVal *string // the value of read's IFS=… prefix, when known
	dq           bool    // the parameter expansion being evaluated is inside double quotes
}

// encodeArray encodes the elements of an array as one string (each element quoted).
func encodeArray(xs []string) string {
	var b strings.Builder
	for _, x := range xs {
		b.WriteString(strconv.Quote(x))
	}
	return b.String()
}

// decodeArray decodes encodeArray's output.
func decodeArray(s string) ([]string, bool) {
	var out []string
	for s != "" {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, false
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			return nil, false
		}
		out = append(out, v)
		s = s[len(q):]
	}
	return out, true
}

// arrayGet returns the elements of the indexed array (or positional parameters, "@") name
// when they are known: an array assigned in this command, or a scalar known value as an
// array of one element. Elements may hold run-time parts (dyn).
func (a *analyzer) arrayGet(name string) ([]string, bool) {
	if a.aliased[name] {
		return nil, false
	}
	if name == "@" || name == "*" {
		if enc, ok := a.vars[arrKey+"@"]; ok {
			return decodeArray(enc)
		}
		// sh -c SCRIPT NAME ARG…: the numbered parameters.
		all, ok := a.vars["@"]
		if !ok || all == dyn {
			return nil, false
		}
		var xs []string
		for i := 1; i <= maxArrayLen; i++ {
			v, ok := a.vars[strconv.Itoa(i)]
			if !ok {
				break
			}
			xs = append(xs, v)
		}
		if strings.Join(xs, " ") != all {
			return nil, false
		}
		return xs, true
	}
	v, ok := a.vars[name]
	if !ok || v == dyn {
		return nil, false
	}
	enc, ok := a.vars[arrKey+name]
	if !ok {
		if strings.Contains(v, dyn) {
			return nil, false
		}
		return []string{v}, true
	}
	xs, ok := decodeArray(enc)
	if !ok {
		return nil, false
	}
	if len(xs) > 0 {
		xs[0] = v // name=x assigns element 0 (bash(1) "Arrays")
	}
	return xs, true
}

// arraySet makes name an indexed array of xs.
func (a *analyzer) arraySet(name string, xs []string) {
	if a.vars == nil {
		a.vars = map[string]string{}
	}
	if len(xs) > maxArrayLen {
		a.forget(name)
		return
	}
	first := ""
	if len(xs) > 0 {
		first = xs[0]
	}
	a.vars[name] = first
	a.vars[arrKey+name] = encodeArray(xs)
	delete(a.vars, altKey+name)
	delete(a.vars, altKey+arrKey+name)
}

// forgetArray marks name (its value and its elements) as unknown.
func (a *analyzer) forgetArray(name string) {
	a.forget(name)
	delete(a.vars, arrKey+name)
}

// attrs returns the declare attributes recorded for name.
func (a *analyzer) attrs(name string) string { return a.vars[attrKey+name] }

// applyAttrs returns v as bash stores it in a variable with attributes at: -l lowers, -u
// raises, -i evaluates it as an arithmetic expression. ok is false when the stored value
// cannot be known.
func (a *analyzer) applyAttrs(at, v string) (string, bool) {
	if at == "" {
		return v, true
	}
	if strings.Contains(at, "?") {
		return "", false // attributes set by code that may not have run
	}
	if strings.Contains(at, "i") {
		n, ok := a.arithString(v, 0)
		if !ok {
			return "", false
		}
		return strconv.FormatInt(n, 10), true
	}
	if strings.Contains(at, "l") {
		v = strings.ToLower(v)
	}
	if strings.Contains(at, "u") {
		v = strings.ToUpper(v)
	}
	return v, true
}

// storeAssign records a bare assignment (NAME=VALUE, NAME+=VALUE, NAME[I]=VALUE,
// NAME=(…), NAME+=(…)) of a command with no program: val is the evaluated value when known,
// elems the evaluated elements of an array value (ok when all are known in number).
func (a *analyzer) storeAssign(as *syntax.Assign, name, val string, known bool, elems []string, elemsOK bool) {
	if a.vars == nil {
		a.vars = map[string]string{}
	}
	at := a.attrs(name)
	if known && !strings.Contains(at, "i") && !(as.Append && strings.Contains(at, "i")) {
		val, known = a.applyAttrs(at, val)
	} else if known && strings.Contains(at, "i") {
		if as.Append {
			known = false
		} else {
			val, known = a.applyAttrs(at, val)
		}
	}
	switch {
	case as.Array != nil:
		if !elemsOK || strings.Contains(at, "i") || strings.Contains(at, "A") {
			a.forgetArray(name)
			return
		}
		for i := range elems {
			if v, ok := a.applyAttrs(at, elems[i]); ok && !strings.Contains(elems[i], dyn) {
				elems[i] = v
			}
		}
		if as.Append {
			prev, ok := a.arrayGet(name)
			if !ok {
				a.forgetArray(name)
				return
			}
			elems = append(prev, elems...)
		}
		a.arraySet(name, elems)
	case as.Index != nil:
		i, ok := a.arithValue(as.Index, 0)
		xs, known2 := a.arrayGet(name)
		if _, had := a.vars[name]; !had && !known2 {
			xs, known2 = nil, true // not set before in this command: a new array
			if _, env := a.paramValue(name); env {
				known2 = false // $HOME and the like are set already
			}
		}
		if !ok || !known || !known2 || as.Append || strings.Contains(at, "A") {
			a.forgetArray(name)
			return
		}
		if i < 0 {
			i += int64(len(xs))
		}
		switch {
		case i >= 0 && i < int64(len(xs)):
			xs[i] = val
		case i == int64(len(xs)):
			xs = append(xs, val)
		default:
			a.forgetArray(name) // a sparse array: not followed
			return
		}
		a.arraySet(name, xs)
	case !known:
		a.forgetArray(name)
		a.defaultAlt(as, name)
	case as.Append:
		prev, ok := a.paramValue(name)
		if !ok {
			a.forgetArray(name)
			return
		}
		a.setScalar(name, prev+val)
	default:
		a.setScalar(name, val)
	}
}

// defaultAlt records, for v=${X:-w} of an unknown X, the value with w as v's alternative,
// so that $v is judged with it too (see judgeAlternative).
func (a *analyzer) defaultAlt(as *syntax.Assign, name string) {
	if as.Value == nil || as.Append || a.ev.altMode || !a.hasDefault(as.Value) {
		return
	}
	a.ev.altMode = true
	saved := a.findings
	var buf [2]arg
	vs := a.word(buf[:0], as.Value, true)
	a.findings = saved // judged already
	a.ev.altMode = false
	if len(vs) == 1 && !vs[0].dyn && len(vs[0].s) <= maxEvalLen {
		a.vars[altKey+name] = vs[0].s
	}
}

// setScalar assigns a known value to name; an array keeps its other elements, as bash's
// NAME=VALUE assigns element 0.
func (a *analyzer) setScalar(name, val string) {
	if a.vars == nil {
		a.vars = map[string]string{}
	}
	if len(val) > maxEvalLen {
		a.forgetArray(name)
		return
	}
	if enc, ok := a.vars[arrKey+name]; ok {
		if xs, ok := decodeArray(enc); ok {
			if len(xs) == 0 {
				xs = []string{val}
			} else {
				xs[0] = val
			}
			a.vars[arrKey+name] = encodeArray(xs)
		} else {
			delete(a.vars, arrKey+name)
		}
	}
	a.vars[name] = val
	delete(a.vars, altKey+name)
	delete(a.vars, altKey+arrKey+name)
}

// arrayElems evaluates the elements of an array assignment (judging their substitutions)
// and reports whether their number and positions are known: no [I]= keys other than the
// next position, and no element that may split into an unknown number of fields.
func (a *analyzer) arrayElems(arr *syntax.ArrayExpr) ([]string, bool) {
	var out []string
	ok := true
	for _, el := range arr.Elems {
		if el.Index != nil {
			a.arith(el.Index)
			if n, known := a.arithValue(el.Index, 0); !known || n != int64(len(out)) {
				ok = false
			}
		}
		if el.Value == nil {
			continue
		}
		var buf [4]arg
		vs := a.word(buf[:0], el.Value, false)
		quoted := len(el.Value.Parts) == 1
		if quoted {
			switch el.Value.Parts[0].(type) {
			case *syntax.DblQuoted, *syntax.SglQuoted:
			default:
				quoted = false
			}
		}
		for _, v := range vs {
			if v.glob || (v.dyn && !quoted) || v.net || v.cred {
				ok = false
			}
			out = append(out, v.s)
		}
		if len(out) > maxArrayLen {
			ok = false
		}
	}
	return out, ok
}

// hasDefault reports whether w holds ${X:-w}, ${X-w}, ${X:=w}, ${X=w}, ${X:+w} or ${X+w}
// of a variable X whose value is not known, so that the command may run with w.
func (a *analyzer) hasDefault(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	return a.partsHaveDefault(w.Parts, 0)
}

// partsHaveDefault is hasDefault for word parts (inside double quotes and braces too).
func (a *analyzer) partsHaveDefault(parts []syntax.WordPart, depth int) bool {
	if depth > 8 {
		return false
	}
	for _, p := range parts {
		switch x := p.(type) {
		case *syntax.DblQuoted:
			if a.partsHaveDefault(x.Parts, depth+1) {
				return true
			}
		case *syntax.BraceExp:
			for _, el := range x.Elems {
				if a.partsHaveDefault(el.Parts, depth+1) {
					return true
				}
			}
		case *syntax.ParamExp:
			if x.Exp == nil || x.Param == nil || x.Index != nil || x.Excl || x.Length || x.Exp.Word == nil {
				continue
			}
			switch x.Exp.Op {
			case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
				if _, ok := a.paramValue(x.Param.Value); !ok {
					return true
				}
			}
		}
	}
	return false
}

// judgeAlternative judges a simple command again when its words may take other values:
// with every unknown variable that has a literal default taking it (rm -rf ${D:-~} is
// judged as rm -rf ~), and with the values variables had before code that may not have
// run changed them (see branch). The state the first judgement left (directory, variables)
// is kept.
func (a *analyzer) judgeAlternative(x *syntax.CallExpr, c *callInfo) {
	if a.ev.altMode || a.over {
		return
	}
	defaults := false
	var alts []string
	for _, w := range x.Args {
		defaults = defaults || a.hasDefault(w)
		alts = a.altRefs(w.Parts, alts, 0)
	}
	if !defaults && len(alts) == 0 {
		return
	}
	passes := 1
	if len(alts) > 0 {
		passes = 2
	}
	for pass := range passes {
		cwd, old, oldSet, dirs, vars := a.cwd, a.oldpwd, a.oldSet, a.dirs, a.vars
		a.vars = copyVars(vars)
		if pass == 1 {
			a.useAlts()
		}
		a.dirs = append([]string(nil), dirs...)
		a.ev.altMode = true
		start := len(a.argStack)
		for _, w := range x.Args {
			a.argStack = a.word(a.argStack, w, false)
		}
		argv := a.argStack[start:len(a.argStack):len(a.argStack)]
		if len(argv) > 0 && !a.over {
			a.judge(argv, c)
		}
		a.argStack = a.argStack[:start]
		a.ev.altMode = false
		a.cwd, a.oldpwd, a.oldSet, a.dirs, a.vars = cwd, old, oldSet, dirs, vars
	}
}

// altRefs appends to names the variables the word parts expand that have alternatives.
func (a *analyzer) altRefs(parts []syntax.WordPart, names []string, depth int) []string {
	if depth > 8 || a.vars == nil {
		return names
	}
	for _, p := range parts {
		switch x := p.(type) {
		case *syntax.DblQuoted:
			names = a.altRefs(x.Parts, names, depth+1)
		case *syntax.BraceExp:
			for _, el := range x.Elems {
				names = a.altRefs(el.Parts, names, depth+1)
			}
		case *syntax.ParamExp:
			if x.Param == nil {
				continue
			}
			if a.hasAlt(x.Param.Value) {
				names = append(names, x.Param.Value)
			}
			if x.Exp != nil && x.Exp.Word != nil {
				names = a.altRefs(x.Exp.Word.Parts, names, depth+1)
			}
		}
	}
	return names
}

// wordValue evaluates the parts of w (a default, an alternative or a replacement inside
// ${…}) to one string, or reports false when it is not known.
func (a *analyzer) wordValue(w *syntax.Word, dq bool) (string, bool) {
	if w == nil {
		return "", true
	}
	e := wordEval{a: a, vals: []string{""}}
	e.parts(w.Parts, dq, !dq)
	if e.dyn || len(e.vals) != 1 || len(e.done) > 0 || e.proc || e.net || e.cred {
		return "", false
	}
	return e.vals[0], true
}

// splat expands "${A[@]}" and "$@" inside double quotes: each element is a field of its
// own (bash(1) "Special Parameters"). It reports whether it handled x.
func (e *wordEval) splat(x *syntax.ParamExp) bool {
	if x.Param == nil || x.Excl || x.Length || x.Repl != nil || x.Exp != nil || x.Names != 0 {
		return false
	}
	name := x.Param.Value
	switch {
	case name == "@" && x.Index == nil:
	case x.Index != nil:
		w, ok := x.Index.(*syntax.Word)
		if !ok || w.Lit() != "@" {
			return false
		}
	default:
		return false
	}
	xs, ok := e.a.arrayGet(name)
	if ok && x.Slice != nil {
		if name == "@" {
			ok = false // "${@:1}" counts from $0
		} else {
			xs, ok = sliceElems(e.a, xs, x.Slice)
		}
	}
	if !ok || len(e.vals) != 1 || e.overflow {
		e.dyn = true
		e.push(dyn)
		return true
	}
	if e.hdoc {
		// In a here-document the elements are joined by blanks: the body is one text.
		e.push(strings.Join(xs, " "))
		return true
	}
	if len(xs) == 0 {
		e.emptySplat = true
		return true
	}
	e.vals[0] += xs[0]
	for _, v := range xs[1:] {
		e.done = append(e.done, e.vals[0])
		e.vals[0] = v
	}
	return true
}

// paramMore evaluates the parameter expansions of known values that param does not:
// ${!name}, ${#x}, ${x:o:l}, ${x/p/r}, ${x^^}, ${x,,}, defaults and alternatives, array
// elements. done reports whether x is of such a form (then v, ok is the answer).
func (a *analyzer) paramMore(x *syntax.ParamExp, dq bool) (v string, ok, done bool) {
	if x.Param == nil || x.Width || x.IsSet || x.NestedParam != nil || len(x.Modifiers) > 0 || x.Flags != nil || x.Names != 0 {
		return "", false, false
	}
	name := x.Param.Value
	if (name == "@" || name == "*") && (x.Length || x.Slice != nil || x.Repl != nil || x.Exp != nil || x.Excl) {
		// ${#@}, ${@:1}, ${@/x/y}, ${@%x}: counts and operators per parameter. Not followed.
		return "", false, true
	}
	// The value the operators apply to.
	var val string
	var known bool
	switch {
	case x.Excl && x.Index == nil:
		ref, ok := a.paramValue(name)
		if !ok {
			return "", false, true
		}
		val, known = a.indirect(ref)
	case x.Index != nil:
		xs, ok := a.arrayGet(name)
		if w, isWord := x.Index.(*syntax.Word); isWord && (w.Lit() == "@" || w.Lit() == "*") {
			if x.Excl {
				return "", false, true // ${!a[@]}: the indexes
			}
			if !ok {
				return "", false, true
			}
			if x.Length {
				return strconv.Itoa(len(xs)), true, true
			}
			if x.Slice != nil {
				xs, ok = sliceElems(a, xs, x.Slice)
				if !ok {
					return "", false, true
				}
			}
			sep := " "
			if w.Lit() == "*" && dq {
				if ifs, ok := a.paramValue("IFS"); ok {
					sep = ""
					if ifs != "" {
						sep = ifs[:1]
					}
				} else {
					return "", false, true
				}
			}
			out := strings.Join(xs, sep)
			if strings.Contains(out, dyn) {
				return "", false, true
			}
			if x.Exp != nil || x.Repl != nil {
				return "", false, true
			}
			return out, true, true
		}
		if x.Excl {
			return "", false, true
		}
		i, iok := a.arithValue(x.Index, 0)
		if !ok || !iok {
			return "", false, true
		}
		if i < 0 {
			i += int64(len(xs))
		}
		if i < 0 || i >= int64(len(xs)) {
			// An index past the end is an unset element: known to be empty only when
			// the whole array was assigned here.
			if _, arr := a.vars[arrKey+name]; !arr {
				return "", false, true
			}
			val, known = "", true
		} else {
			val, known = xs[i], !strings.Contains(xs[i], dyn)
		}
		if known && x.Exp != nil && x.Exp.Op != syntax.RemSmallSuffix && x.Exp.Op != syntax.RemLargeSuffix && x.Exp.Op != syntax.RemSmallPrefix && x.Exp.Op != syntax.RemLargePrefix {
			// ${a[9]:-d} of an unset element, and the like: set-or-not is not followed.
			if i >= int64(len(xs)) || i < 0 {
				return "", false, true
			}
		}
	case x.Excl:
		return "", false, false
	default:
		val, known = a.paramValue(name)
	}
	switch {
	case x.Length:
		if !known || x.Exp != nil || x.Slice != nil || x.Repl != nil {
			return "", false, true
		}
		return strconv.Itoa(utf8.RuneCountInString(val)), true, true
	case x.Slice != nil:
		if !known {
			return "", false, true
		}
		return sliceString(a, val, x.Slice)
	case x.Repl != nil:
		if !known {
			return "", false, true
		}
		return a.replace(val, x.Repl, dq)
	case x.Exp != nil:
		return a.expOp(x, name, val, known, dq)
	}
	if x.Excl || x.Index != nil {
		return val, known, true
	}
	return "", false, false
}

// indirect returns the value of the parameter that ref names (${!ref}): a name, a positional
// parameter or NAME[I].
func (a *analyzer) indirect(ref string) (string, bool) {
	if i := strings.IndexByte(ref, '['); i > 0 && strings.HasSuffix(ref, "]") && validName(ref[:i]) {
		n, err := strconv.Atoi(ref[i+1 : len(ref)-1])
		xs, ok := a.arrayGet(ref[:i])
		if err != nil || !ok || n < 0 || n >= len(xs) || strings.Contains(xs[n], dyn) {
			return "", false
		}
		return xs[n], true
	}
	if validName(ref) || isDigits(ref) {
		return a.paramValue(ref)
	}
	return "", false
}

// expOp evaluates ${x-w}, ${x:-w}, ${x=w}, ${x:=w}, ${x+w}, ${x:+w}, ${x?w}, ${x:?w}, the
// case operators and the trims (by trimParam) of a value known or not.
func (a *analyzer) expOp(x *syntax.ParamExp, name, val string, known, dq bool) (string, bool, bool) {
	op := x.Exp.Op
	word := func() (string, bool) { return a.wordValue(x.Exp.Word, dq) }
	switch op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull:
		null := op == syntax.DefaultUnsetOrNull || op == syntax.AssignUnsetOrNull
		if known && (val != "" || !null) {
			return val, true, true
		}
		if !known && !a.ev.altMode {
			return "", false, true
		}
		w, ok := word()
		if ok && (op == syntax.AssignUnset || op == syntax.AssignUnsetOrNull) && x.Index == nil && !x.Excl && known {
			a.setScalar(name, w)
		}
		return w, ok, true
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		if known && val == "" && op == syntax.AlternateUnsetOrNull {
			return "", true, true
		}
		if !known && !a.ev.altMode {
			return "", false, true
		}
		w, ok := word()
		return w, ok, true
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return val, known, true
	case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
		if !known || x.Exp.Word != nil && len(x.Exp.Word.Parts) > 0 {
			return "", false, true
		}
		conv := strings.ToUpper
		if op == syntax.LowerFirst || op == syntax.LowerAll {
			conv = strings.ToLower
		}
		if op == syntax.UpperAll || op == syntax.LowerAll {
			return conv(val), true, true
		}
		if val == "" {
			return "", true, true
		}
		_, size := utf8.DecodeRuneInString(val)
		return conv(val[:size]) + val[size:], true, true
	case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
		if x.Index == nil && !x.Excl {
			return "", false, false // trimParam
		}
		if !known {
			return "", false, true
		}
		saved := a.vars
		tmp := copyVars(saved)
		tmp["\x00trim"] = val
		a.vars = tmp
		y := *x
		y.Param = &syntax.Lit{Value: "\x00trim"}
		y.Index, y.Excl = nil, false
		v, ok := a.trimParam(&y)
		a.vars = saved
		return v, ok, true
	}
	return "", false, true
}

// sliceString evaluates ${x:off:len} of a known value, counting characters.
func sliceString(a *analyzer, v string, s *syntax.Slice) (string, bool, bool) {
	r := []rune(v)
	off, ok := a.arithValue(s.Offset, 0)
	if !ok {
		return "", false, true
	}
	n := int64(len(r))
	if off < 0 {
		off += n
		if off < 0 {
			return "", true, true
		}
	}
	if off > n {
		return "", true, true
	}
	end := n
	if s.Length != nil {
		l, ok := a.arithValue(s.Length, 0)
		if !ok {
			return "", false, true
		}
		if l < 0 {
			end = n + l
			if end < off {
				return "", false, true // bash reports an error
			}
		} else if off+l < n {
			end = off + l
		}
	}
	return string(r[off:end]), true, true
}

// sliceElems evaluates ${a[@]:off:len} of known elements.
func sliceElems(a *analyzer, xs []string, s *syntax.Slice) ([]string, bool) {
	off, ok := a.arithValue(s.Offset, 0)
	if !ok {
		return nil, false
	}
	n := int64(len(xs))
	if off < 0 {
		off += n
		if off < 0 {
			return nil, true
		}
	}
	if off > n {
		return nil, true
	}
	end := n
	if s.Length != nil {
		l, ok := a.arithValue(s.Length, 0)
		if !ok || l < 0 {
			return nil, false
		}
		if off+l < n {
			end = off + l
		}
	}
	return xs[off:end], true
}

// replace evaluates ${x/pat/rep}, ${x//pat/rep}, ${x/#pat/rep} and ${x/%pat/rep} of a known
// value with a literal pattern, longest match first as bash matches.
func (a *analyzer) replace(v string, r *syntax.Replace, dq bool) (string, bool, bool) {
	pat := ""
	if r.Orig != nil {
		pat = r.Orig.Lit()
		if pat == "" && len(r.Orig.Parts) > 0 {
			return "", false, true
		}
	}
	with, ok := a.wordValue(r.With, dq)
	if !ok {
		return "", false, true
	}
	anchorStart, anchorEnd := false, false
	if strings.HasPrefix(pat, "#") {
		anchorStart, pat = true, pat[1:]
	} else if strings.HasPrefix(pat, "%") {
		anchorEnd, pat = true, pat[1:]
	}
	if pat == "" {
		if anchorStart {
			return with + v, true, true
		}
		if anchorEnd {
			return v + with, true, true
		}
		return v, true, true
	}
	if len(v) > 4096 {
		return "", false, true // quadratic matching: keep it cheap
	}
	switch {
	case anchorStart:
		for j := len(v); j >= 0; j-- {
			if shellMatch(pat, v[:j]) {
				return with + v[j:], true, true
			}
		}
		return v, true, true
	case anchorEnd:
		for i := 0; i <= len(v); i++ {
			if shellMatch(pat, v[i:]) {
				return v[:i] + with, true, true
			}
		}
		return v, true, true
	}
	var b strings.Builder
	i := 0
	for i < len(v) {
		matched := -1
		for j := len(v); j > i; j-- {
			if shellMatch(pat, v[i:j]) {
				matched = j
				break
			}
		}
		if matched < 0 {
			b.WriteByte(v[i])
			i++
			continue
		}
		b.WriteString(with)
		i = matched
		if !r.All {
			b.WriteString(v[i:])
			return b.String(), true, true
		}
		if b.Len() > maxEvalLen {
			return "", false, true
		}
	}
	return b.String(), true, true
}

// arithValue evaluates an arithmetic expression whose operands are known, as bash does with
// 64-bit wrapping integers (bash(1) "ARITHMETIC EVALUATION"). Assignments, increments and
// division by zero are not evaluated.
func (a *analyzer) arithValue(x syntax.ArithmExpr, depth int) (int64, bool) {
	if x == nil || depth > maxArithDepth {
		return 0, false
	}
	// Values are expressions that may name each other through indexes (i='a[i]'; ${a[i]})
	// and parameter expansions, which start their own depth count: bound the whole chain.
	a.ev.arithNest++
	defer func() { a.ev.arithNest-- }()
	if a.ev.arithNest > 4*maxArithDepth {
		return 0, false
	}
	switch n := x.(type) {
	case *syntax.Word:
		return a.arithWord(n, depth)
	case *syntax.ParenArithm:
		return a.arithValue(n.X, depth)
	case *syntax.UnaryArithm:
		if n.Op == syntax.Inc || n.Op == syntax.Dec {
			return 0, false
		}
		v, ok := a.arithValue(n.X, depth)
		if !ok {
			return 0, false
		}
		switch n.Op {
		case syntax.Not:
			return b2i(v == 0), true
		case syntax.BitNegation:
			return ^v, true
		case syntax.Plus:
			return v, true
		case syntax.Minus:
			return -v, true
		}
		return 0, false
	case *syntax.BinaryArithm:
		if n.Op == syntax.TernQuest {
			colon, ok := n.Y.(*syntax.BinaryArithm)
			if !ok || colon.Op != syntax.TernColon {
				return 0, false
			}
			c, ok := a.arithValue(n.X, depth)
			if !ok {
				return 0, false
			}
			if c != 0 {
				return a.arithValue(colon.X, depth)
			}
			return a.arithValue(colon.Y, depth)
		}
		l, ok := a.arithValue(n.X, depth)
		if !ok {
			return 0, false
		}
		switch n.Op {
		case syntax.AndArit:
			if l == 0 {
				return 0, true
			}
		case syntax.OrArit:
			if l != 0 {
				return 1, true
			}
		}
		r, ok := a.arithValue(n.Y, depth)
		if !ok {
			return 0, false
		}
		return arithBinary(n.Op, l, r)
	}
	return 0, false
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// arithBinary applies a binary arithmetic operator.
func arithBinary(op syntax.BinAritOperator, l, r int64) (int64, bool) {
	switch op {
	case syntax.Add:
		return l + r, true
	case syntax.Sub:
		return l - r, true
	case syntax.Mul:
		return l * r, true
	case syntax.Quo, syntax.Rem:
		if r == 0 || l == -1<<63 && r == -1 {
			return 0, false
		}
		if op == syntax.Quo {
			return l / r, true
		}
		return l % r, true
	case syntax.Pow:
		if r < 0 || r > 1<<16 {
			return 0, false
		}
		p := int64(1)
		for range r {
			p *= l
		}
		return p, true
	case syntax.Eql:
		return b2i(l == r), true
	case syntax.Neq:
		return b2i(l != r), true
	case syntax.Lss:
		return b2i(l < r), true
	case syntax.Leq:
		return b2i(l <= r), true
	case syntax.Gtr:
		return b2i(l > r), true
	case syntax.Geq:
		return b2i(l >= r), true
	case syntax.And:
		return l & r, true
	case syntax.Or:
		return l | r, true
	case syntax.Xor:
		return l ^ r, true
	case syntax.Shl:
		if r < 0 || r > 63 {
			return 0, false
		}
		return l << uint(r), true
	case syntax.Shr:
		if r < 0 || r > 63 {
			return 0, false
		}
		return l >> uint(r), true
	case syntax.AndArit:
		return b2i(l != 0 && r != 0), true
	case syntax.OrArit:
		return b2i(l != 0 || r != 0), true
	case syntax.XorBool:
		return b2i((l != 0) != (r != 0)), true
	case syntax.Comma:
		return r, true
	}
	return 0, false
}

// arithWord evaluates an operand: an integer constant, a variable whose value is known
// (itself evaluated as an expression, as bash does), or an expansion with a known value.
func (a *analyzer) arithWord(w *syntax.Word, depth int) (int64, bool) {
	if l := w.Lit(); l != "" {
		if n, ok := parseArithInt(l); ok {
			return n, true
		}
		if validName(l) {
			v, ok := a.paramValue(l)
			if !ok {
				return 0, false
			}
			return a.arithString(v, depth+1)
		}
		return 0, false
	}
	v, ok := a.wordValue(w, true)
	if !ok {
		return 0, false
	}
	return a.arithString(v, depth+1)
}

// arithString evaluates text as an arithmetic expression (a variable's value).
func (a *analyzer) arithString(s string, depth int) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, true
	}
	if n, ok := parseArithInt(s); ok {
		return n, true
	}
	if depth > maxArithDepth || len(s) > 1024 || strings.ContainsAny(s, "$`") || !a.tick() {
		return 0, false
	}
	if validName(s) {
		v, ok := a.paramValue(s)
		if !ok {
			return 0, false
		}
		return a.arithString(v, depth+1)
	}
	x, err := syntax.NewParser().Arithmetic(strings.NewReader(s))
	if err != nil {
		return 0, false
	}
	return a.arithValue(x, depth+1)
}

// parseArithInt parses an integer constant as bash does: decimal, 0x hex, leading-0 octal,
// and BASE#DIGITS for bases 2 to 64.
func parseArithInt(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	digits := s
	if b, d, ok := strings.Cut(s, "#"); ok {
		n, err := strconv.Atoi(b)
		if err != nil || n < 2 || n > 64 || d == "" {
			return 0, false
		}
		base, digits = n, d
	} else if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		base, digits = 16, s[2:]
	} else if len(s) > 1 && s[0] == '0' {
		base, digits = 8, s[1:]
	}
	if digits == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'z':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			d = int(c - 'A')
			if base <= 36 {
				d += 10
			} else {
				d += 36
			}
		case c == '@':
			d = 62
		case c == '_':
			d = 63
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*int64(base) + int64(d)
	}
	return n, true
}

// printfFormat returns what printf FORMAT ARGS... prints, as bash's printf builtin does
// (escapes in the format, %s %b %c %d %i %o %u %x %X and %%, flags, width and precision,
// the format reused while arguments remain). ok is false for conversions whose output is
// not computed (%q, floating point, %(…)T) and for invalid numbers.
func printfFormat(format string, args []string) (string, bool) {
	var b strings.Builder
	ai := 0
	next := func() (string, bool) {
		if ai < len(args) {
			ai++
			return args[ai-1], true
		}
		return "", false
	}
	for round := 0; ; round++ {
		if round > maxPrintfRounds {
			return "", false
		}
		consumed := false
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c == '\\' {
				i = formatEscape(&b, format, i)
				continue
			}
			if c != '%' {
				b.WriteByte(c)
				continue
			}
			if i+1 < len(format) && format[i+1] == '%' {
				b.WriteByte('%')
				i++
				continue
			}
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0'", format[j]) >= 0 {
				j++
			}
			flags := strings.ReplaceAll(format[i+1:j], "'", "")
			width, prec := -1, -1
			num := func() (int, bool) {
				if j < len(format) && format[j] == '*' {
					j++
					s, had := next()
					consumed = consumed || had
					if !had {
						return 0, true
					}
					n, ok := printfInt(s)
					if !ok || n > maxPrintfWidth || n < -maxPrintfWidth {
						return 0, false
					}
					return int(n), true
				}
				k := j
				for j < len(format) && format[j] >= '0' && format[j] <= '9' {
					j++
				}
				if k == j {
					return -1, true
				}
				n, err := strconv.Atoi(format[k:j])
				if err != nil || n > maxPrintfWidth {
					return 0, false
				}
				return n, true
			}
			var ok bool
			if width, ok = num(); !ok {
				return "", false
			}
			if width < -1 {
				flags += "-"
				width = -width
			}
			if j < len(format) && format[j] == '.' {
				j++
				if prec, ok = num(); !ok {
					return "", false
				}
				if prec < 0 {
					prec = 0
				}
			}
			for j < len(format) && strings.IndexByte("hlLqjzt", format[j]) >= 0 {
				j++
			}
			if j >= len(format) {
				return "", false // a % at the end: bash reports an error
			}
			conv := format[j]
			i = j
			arg, had := next()
			consumed = consumed || had
			spec := "%" + flags
			if width >= 0 {
				spec += strconv.Itoa(width)
			}
			if prec >= 0 {
				spec += "." + strconv.Itoa(prec)
			}
			strSpec := "%" + strings.ReplaceAll(flags, "0", "") // bash pads strings with blanks
			if width >= 0 {
				strSpec += strconv.Itoa(width)
			}
			if prec >= 0 {
				strSpec += "." + strconv.Itoa(prec)
			}
			switch conv {
			case 's':
				b.WriteString(fmt.Sprintf(strSpec+"s", arg))
			case 'b':
				s, stop := expandB(arg)
				b.WriteString(fmt.Sprintf(strSpec+"s", s))
				if stop {
					return b.String(), true
				}
			case 'c':
				if arg != "" {
					arg = arg[:1]
				}
				b.WriteString(fmt.Sprintf(strSpec+"s", arg))
			case 'd', 'i', 'o', 'u', 'x', 'X':
				n := int64(0)
				if had {
					if n, ok = printfInt(arg); !ok {
						return "", false
					}
				}
				verb := string(conv)
				if conv == 'i' || conv == 'u' {
					verb = "d"
				}
				if conv == 'u' || conv == 'o' || conv == 'x' || conv == 'X' {
					b.WriteString(fmt.Sprintf(spec+verb, uint64(n)))
				} else {
					b.WriteString(fmt.Sprintf(spec+verb, n))
				}
			default:
				return "", false
			}
			if b.Len() > maxEvalLen {
				return "", false
			}
		}
		if ai >= len(args) || !consumed {
			break
		}
	}
	return b.String(), true
}

// printfInt parses a numeric argument of printf: an integer constant (decimal, 0x hex,
// leading-0 octal, with a sign and leading blanks) or 'C / "C for a character's code.
func printfInt(s string) (int64, bool) {
	s = strings.TrimLeft(s, " \t\n")
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') {
		r, _ := utf8.DecodeRuneInString(s[1:])
		return int64(r), true
	}
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || strings.Contains(s, "#") {
		return 0, false
	}
	n, ok := parseArithInt(s)
	if !ok {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// formatEscape writes the escape at format[i] (a backslash) as printf's format interprets
// it and returns the index of its last byte.
func formatEscape(b *strings.Builder, s string, i int) int {
	if i+1 >= len(s) {
		b.WriteByte('\\')
		return i
	}
	c := s[i+1]
	switch c {
	case '"', '\'', '?':
		b.WriteByte(c)
		return i + 1
	case 'c':
		b.WriteString("\\c")
		return i + 1
	}
	if c >= '0' && c <= '7' {
		n, j := 0, i+1
		for j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7' {
			n = n*8 + int(s[j]-'0')
			j++
		}
		b.WriteByte(byte(n))
		return j - 1
	}
	return commonEscape(b, s, i)
}

// expandB expands the escapes of a %b argument (and of echo -e) and reports whether \c
// stopped the output.
func expandB(s string) (string, bool) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			b.WriteByte('\\')
			break
		}
		c := s[i+1]
		switch {
		case c == 'c':
			return b.String(), true
		case c == '0':
			n, j := 0, i+2
			for j < len(s) && j < i+5 && s[j] >= '0' && s[j] <= '7' {
				n = n*8 + int(s[j]-'0')
				j++
			}
			b.WriteByte(byte(n))
			i = j - 1
		case c >= '1' && c <= '7':
			n, j := 0, i+1
			for j < len(s) && j < i+4 && s[j] >= '0' && s[j] <= '7' {
				n = n*8 + int(s[j]-'0')
				j++
			}
			b.WriteByte(byte(n))
			i = j - 1
		default:
			i = commonEscape(&b, s, i)
		}
	}
	return b.String(), false
}

// commonEscape writes the escapes printf's format and %b share (\a \b \e \E \f \n \r \t
// \v \\ \xHH \uHHHH \UHHHHHHHH; any other is kept with its backslash) and returns the index
// of the escape's last byte.
func commonEscape(b *strings.Builder, s string, i int) int {
	c := s[i+1]
	switch c {
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
	case '\\':
		b.WriteByte('\\')
	case 'x':
		n, j := hexDigits(s, i+2, 2)
		if j == i+2 {
			b.WriteString("\\x")
			return i + 1
		}
		b.WriteByte(byte(n))
		return j - 1
	case 'u', 'U':
		max := 4
		if c == 'U' {
			max = 8
		}
		n, j := hexDigits(s, i+2, max)
		if j == i+2 {
			b.WriteByte('\\')
			b.WriteByte(c)
			return i + 1
		}
		if n > utf8.MaxRune {
			n = utf8.RuneError
		}
		b.WriteRune(rune(n))
		return j - 1
	default:
		b.WriteByte('\\')
		b.WriteByte(c)
	}
	return i + 1
}

// echoText returns what bash's echo prints for its operands (without the final newline):
// -n, -e and -E are options when every letter of the operand is one of them.
func echoText(args []string, posix bool) (string, bool) {
	esc := false
	i := 0
	for ; i < len(args); i++ {
		s := args[i]
		if len(s) < 2 || s[0] != '-' || strings.Trim(s[1:], "neE") != "" {
			break
		}
		for _, c := range s[1:] {
			switch c {
			case 'e':
				esc = true
			case 'E':
				esc = false
			}
		}
	}
	out := strings.Join(args[i:], " ")
	if strings.IndexByte(out, '\\') >= 0 {
		if posix {
			return "", false // dash's echo expands escapes, bash's does not: not known
		}
		if esc {
			out, _ = expandB(out)
		}
	}
	return out, true
}

// printfOutput returns what a printf command prints when its words are known (printf -v
// prints nothing and is not a known output here).
func (a *analyzer) printfOutput(words []*syntax.Word) (string, bool) {
	var args []string
	for _, w := range words {
		var buf [2]arg
		vs := a.word(buf[:0], w, false)
		for _, v := range vs {
			if v.dyn || v.glob || v.proc {
				return "", false
			}
			args = append(args, v.s)
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return "", false
	}
	return printfFormat(args[0], args[1:])
}

// echoOutput returns what an echo command prints (without its final newline) when its
// words are known.
func (a *analyzer) echoOutput(words []*syntax.Word) (string, bool) {
	var args []string
	for _, w := range words {
		var buf [2]arg
		vs := a.word(buf[:0], w, false)
		for _, v := range vs {
			if v.dyn || v.glob || v.proc {
				return "", false
			}
			args = append(args, v.s)
		}
	}
	return echoText(args, a.curDialect == POSIX)
}

// printfAssign judges printf -v NAME FORMAT ARGS: NAME gets the output when it is known.
func (a *analyzer) printfAssign(name string, rest []arg) {
	if !validName(name) || len(rest) == 0 {
		return
	}
	var args []string
	for _, x := range rest {
		if x.dyn || x.glob || x.proc || x.net || x.cred {
			return
		}
		args = append(args, x.s)
	}
	if args[0] == "--" {
		args = args[1:]
		if len(args) == 0 {
			return
		}
	}
	out, ok := printfFormat(args[0], args[1:])
	if !ok || strings.Contains(out, dyn) {
		return
	}
	if v, ok := a.applyAttrs(a.attrs(name), out); ok {
		a.setScalar(name, v)
	}
}

// readAssign assigns the variables of a read command fed a known here-string or
// here-document (read -r a b <<< 'x y'), as bash splits the first line (bash(1) "read"):
// fields by IFS whitespace, the last name takes the rest. Other option forms and an IFS
// with other characters leave the names unknown (assignName forgot them already).
func (a *analyzer) readAssign(argv []arg, c *callInfo) {
	text := c.in.body
	if line := a.ev.readLine; line != nil {
		a.ev.readLine = nil // only the loop's own read gets the line
		text = *line
	} else if !c.in.hasInput || !c.in.literal || a.pipe {
		return
	}
	raw, delim := false, byte('\n')
	arrName := ""
	var names []string
	for i := 1; i < len(argv); i++ {
		x := argv[i]
		if x.dyn {
			return
		}
		s := x.s
		if len(names) == 0 && len(s) > 1 && s[0] == '-' && s != "--" {
			for j := 1; j < len(s); j++ {
				switch s[j] {
				case 'r':
					raw = true
				case 's', 'e':
				case 'a', 'd', 'p', 't', 'i':
					val := s[j+1:]
					if val == "" {
						if i+1 >= len(argv) || argv[i+1].dyn {
							return
						}
						i++
						val = argv[i].s
					}
					switch s[j] {
					case 'a':
						arrName = val
					case 'd':
						delim = 0
						if val != "" {
							delim = val[0]
						}
					case 't':
						return
					}
					j = len(s)
				default:
					return // -n, -N, -u and unknown options
				}
			}
			continue
		}
		if s == "--" && len(names) == 0 {
			continue
		}
		names = append(names, s)
	}
	ifs, ok := a.paramValue("IFS")
	if a.ev.prefixIFS {
		// IFS= read -r line: no field splitting at all. Other prefixes are not followed.
		ok = a.ev.prefixIFSVal != nil && *a.ev.prefixIFSVal == ""
		ifs = ""
	}
	if !ok || strings.Trim(ifs, " \t\n") != "" {
		return
	}
	// The line: up to the delimiter; without -r a backslash escapes the next character
	// and backslash-newline continues the line.
	var line strings.Builder
	var quotedAt []bool
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if ch == delim {
			break
		}
		if ch == '\\' && !raw {
			if i+1 < len(text) {
				i++
				if text[i] == '\n' {
					continue
				}
				line.WriteByte(text[i])
				quotedAt = append(quotedAt, true)
			}
			continue
		}
		line.WriteByte(ch)
		quotedAt = append(quotedAt, false)
	}
	l := line.String()
	isIFS := func(i int) bool { return !quotedAt[i] && strings.IndexByte(ifs, l[i]) >= 0 }
	var fields []string
	i := 0
	skip := func() {
		for i < len(l) && isIFS(i) {
			i++
		}
	}
	word := func() string {
		start := i
		for i < len(l) && !isIFS(i) {
			i++
		}
		return l[start:i]
	}
	if arrName != "" {
		skip()
		for i < len(l) {
			fields = append(fields, word())
			skip()
		}
		if validName(arrName) {
			a.arraySet(arrName, fields)
		}
		return
	}
	if len(names) == 0 {
		a.setScalar("REPLY", l)
		return
	}
	for n, name := range names {
		if !validName(name) {
			return
		}
		skip()
		var v string
		if n == len(names)-1 {
			end := len(l)
			for end > i && isIFS(end-1) {
				end--
			}
			v = l[i:end]
			i = len(l)
		} else {
			v = word()
		}
		if at, ok := a.applyAttrs(a.attrs(name), v); ok {
			a.setScalar(name, at)
		}
	}
}

// declAttrs records the declare attributes (-l, -u, -i, -A) the flags of a declare, local
// or typeset give to the names it declares, before their values are assigned.
func (a *analyzer) declAttrs(x *syntax.DeclClause) {
	if x.Variant == nil || x.Variant.Value == "export" || x.Variant.Value == "readonly" {
		return
	}
	set, unset := "", ""
	for _, as := range x.Args {
		if !as.Naked || as.Name != nil || as.Value == nil {
			continue
		}
		l := as.Value.Lit()
		if len(l) > 1 && l[0] == '-' {
			set += strings.Map(keepAttr, l[1:])
		} else if len(l) > 1 && l[0] == '+' {
			unset += strings.Map(keepAttr, l[1:])
		}
	}
	if set == "" && unset == "" {
		return
	}
	if a.vars == nil {
		a.vars = map[string]string{}
	}
	for _, as := range x.Args {
		if as.Name == nil {
			continue
		}
		at := a.attrs(as.Name.Value)
		for _, r := range unset {
			at = strings.ReplaceAll(at, string(r), "")
		}
		for _, r := range set {
			if !strings.ContainsRune(at, r) {
				at += string(r)
			}
		}
		// -l and -u exclude each other: the later one wins.
		if strings.Contains(set, "l") && !strings.Contains(set, "u") {
			at = strings.ReplaceAll(at, "u", "")
		} else if strings.Contains(set, "u") && !strings.Contains(set, "l") {
			at = strings.ReplaceAll(at, "l", "")
		}
		a.vars[attrKey+as.Name.Value] = at
		if as.Naked {
			// declare -l X: the value is unchanged; declare -A X makes an unknown map.
			if strings.Contains(at, "A") {
				a.forgetArray(as.Name.Value)
			}
		}
	}
}

func keepAttr(r rune) rune {
	if r == 'l' || r == 'u' || r == 'i' || r == 'A' {
		return r
	}
	return -1
}

// evalNested judges the text of eval in the current shell: the script sees the shell's
// variables and positional parameters, and what it assigns stays assigned after it.
func (a *analyzer) evalNested(x arg, c *callInfo) eff {
	if a.vars == nil {
		a.vars = map[string]string{}
	}
	a.params = a.vars
	a.ev.sameShell = true
	e := a.nested(x, a.dialect(), c)
	a.params, a.ev.sameShell = nil, false
	return e
}

// registerEval adds the handlers of this file (called by registerBuiltins).
func registerEval() {
	register(hUnset, "unset")
	register(hShift, "shift")
	registerInspect()
}

// hUnset judges unset: the names it removes are unknown from now on (an unset variable may
// still take a default, which judgeAlternative judges).
func hUnset(a *analyzer, argv []arg, c *callInfo) eff {
	hNames(a, argv, c)
	funcs := false
	for _, x := range argv[1:] {
		switch {
		case x.s == "-f":
			funcs = true
		case x.s == "-v" || x.s == "-n" || x.s == "--":
		case x.dyn:
			a.find(c, "env.dynamic", Ask, "unset removes a variable named only at run time")
		case !funcs:
			name := x.s
			if i := strings.IndexByte(name, '['); i > 0 {
				name = name[:i]
			}
			a.forgetArray(name)
		}
	}
	return 0
}

// hShift judges shift [N]: the positional parameters move down by N.
func hShift(a *analyzer, argv []arg, c *callInfo) eff {
	n := 1
	if len(argv) > 1 {
		v, err := strconv.Atoi(argv[1].s)
		if err != nil || argv[1].dyn || v < 0 {
			a.forgetParams()
			return 0
		}
		n = v
	}
	xs, ok := a.arrayGet("@")
	if !ok {
		a.forgetParams()
		return 0
	}
	if n > len(xs) {
		return 0 // bash fails and shifts nothing
	}
	for i := range xs {
		delete(a.vars, strconv.Itoa(i+1))
	}
	params := make([]arg, 0, len(xs)-n)
	for _, v := range xs[n:] {
		params = append(params, arg{s: v, dyn: strings.Contains(v, dyn)})
	}
	a.setParams(params)
	return 0
}

// forgetParams marks the positional parameters as unknown.
func (a *analyzer) forgetParams() {
	if a.vars == nil {
		a.vars = map[string]string{}
	}
	for k := range a.vars {
		if isDigits(k) && k != "0" {
			a.vars[k] = dyn
		}
	}
	a.vars["@"], a.vars["*"] = dyn, dyn
	delete(a.vars, arrKey+"@")
}

// branch judges f, code that may or may not run (an if branch, a loop body, the right side
// of && or ||, a function body). Afterwards the variables hold what f left, as if it ran,
// and every key of vars f changed keeps its value from before f as an alternative
// (altKey+key), which judgeAlternative judges the commands that use the variable with:
// x=rm; false && x=ls; $x -rf ~ is judged with x=ls and with x=rm.
func (a *analyzer) branch(f func() eff) eff {
	before := a.vars
	if before != nil {
		a.vars = copyVars(before)
	}
	e := f()
	if a.vars == nil {
		return e
	}
	for k, v := range a.vars {
		if strings.HasPrefix(k, altKey) {
			continue
		}
		b, ok := before[k]
		if ok && b == v {
			continue
		}
		if _, had := a.vars[altKey+k]; had {
			continue // a branch inside f recorded the older value already
		}
		if !ok {
			b = absent
		}
		a.vars[altKey+k] = b
	}
	for k, b := range before {
		if _, ok := a.vars[k]; !ok && !strings.HasPrefix(k, altKey) {
			a.vars[altKey+k] = b
		}
	}
	return e
}

// absent is the alternative of a key that did not exist before a branch.
const absent = dyn + "absent"

// hasAlt reports whether the variable name has an alternative value (see branch).
func (a *analyzer) hasAlt(name string) bool {
	if a.vars == nil {
		return false
	}
	_, v := a.vars[altKey+name]
	_, arr := a.vars[altKey+arrKey+name]
	return v || arr
}

// useAlts replaces every key that has an alternative with it.
func (a *analyzer) useAlts() {
	for k, v := range a.vars {
		if !strings.HasPrefix(k, altKey) {
			continue
		}
		key := k[len(altKey):]
		delete(a.vars, k)
		switch {
		case v != absent:
			a.vars[key] = v
		case strings.HasPrefix(key, dyn):
			delete(a.vars, key)
		default:
			a.vars[key] = dyn // not set in this command: a run-time value
		}
	}
}

// forgetKey marks the variable, array or attributes stored under the vars key k as unknown.
func (a *analyzer) forgetKey(k string) {
	switch {
	case strings.HasPrefix(k, arrKey):
		a.forgetArray(k[len(arrKey):])
	case strings.HasPrefix(k, altKey):
		delete(a.vars, k)
	case strings.HasPrefix(k, attrKey):
		if a.vars == nil {
			a.vars = map[string]string{}
		}
		a.vars[k] = "?" // applyAttrs: the stored value is not known
	default:
		a.forget(k)
	}
}

// whileRead judges while read …; do …; done fed a known here-string or here-document: the
// body is judged once for each line, with read's variables set from it as bash sets them.
// It reports false (the loop is judged as any other) for other loops, unknown input and
// more than maxLoopItems lines.
func (a *analyzer) whileRead(x *syntax.WhileClause, in *stdin) (eff, bool) {
	if x.Until || !in.hasInput || !in.literal || in.net || in.cred || len(x.Cond) != 1 || a.ev.inLoop {
		return 0, false // a loop inside one judged per line is judged once (no blow-up)
	}
	cond := x.Cond[0]
	call, ok := cond.Cmd.(*syntax.CallExpr)
	if !ok || len(cond.Redirs) > 0 || cond.Background || cond.Negated || len(call.Args) == 0 || call.Args[0].Lit() != "read" {
		return 0, false
	}
	for _, as := range call.Assigns {
		if as.Name == nil || as.Name.Value != "IFS" {
			return 0, false
		}
	}
	for _, w := range call.Args[1:] {
		if l := w.Lit(); l == "" || strings.HasPrefix(l, "-") && strings.ContainsAny(l, "dnNu") {
			return 0, false // -d, -n, -N, -u change what one read takes
		}
	}
	body := in.body
	if in.hereStr {
		body += "\n" // bash adds a newline to a here-string
	}
	lines := strings.SplitAfter(body, "\n")
	lines = lines[:len(lines)-1] // after the last newline: nothing
	if len(lines) == 0 || len(lines) > maxLoopItems {
		return 0, false
	}
	var e eff
	cwd := a.cwd
	a.ev.inLoop = true
	defer func() { a.ev.inLoop = false }()
	for _, l := range lines {
		line := l
		a.cwd = cwd
		e |= a.branch(func() eff {
			a.ev.readLine = &line
			ef := a.stmt(cond)
			a.ev.readLine = nil
			return ef | a.stmts(x.Do)
		})
	}
	// The last read fails at the end of the input: its variables are empty, or other
	// values when the body breaks out early. Not followed.
	for _, w := range call.Args[1:] {
		if l := w.Lit(); validName(l) {
			a.forgetArray(l)
		}
	}
	if len(call.Args) == 1 {
		a.forgetArray("REPLY")
	}
	return e, true
}

// mapfileAssign sets the array of mapfile/readarray [-t] [-d D] [ARRAY] fed a known
// here-string or here-document: one element a line (bash(1) "mapfile"). Other options
// leave the array unknown (hMapfile forgot it already).
func (a *analyzer) mapfileAssign(argv []arg, c *callInfo) {
	if !c.in.hasInput || !c.in.literal || a.pipe {
		return
	}
	trim, delim, name := false, "\n", "MAPFILE"
	for i := 1; i < len(argv); i++ {
		x := argv[i]
		switch {
		case x.dyn:
			return
		case x.s == "-t":
			trim = true
		case x.s == "-d" && i+1 < len(argv) && !argv[i+1].dyn:
			delim = "\x00"
			if argv[i+1].s != "" {
				delim = argv[i+1].s[:1]
			}
			i++
		case strings.HasPrefix(x.s, "-"):
			return // -n, -O, -s, -u, -C, -c and clusters: not followed
		default:
			name = x.s
		}
	}
	if !validName(name) {
		return
	}
	body := c.in.body
	if c.in.hereStr {
		body += "\n"
	}
	var xs []string
	for body != "" {
		i := strings.Index(body, delim)
		if i < 0 {
			xs = append(xs, body)
			break
		}
		el := body[:i+1]
		if trim {
			el = body[:i]
		}
		xs = append(xs, el)
		body = body[i+1:]
	}
	a.arraySet(name, xs)
}

// hdocValue returns the text of an unquoted here-document when its expansions are known
// (cat <<EOF | sh with $a in it), evaluated as redirect evaluates it (which judged its
// substitutions already).
func (a *analyzer) hdocValue(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	saved := a.findings
	e := wordEval{a: a, vals: []string{""}, hdoc: true}
	e.parts(r.Hdoc.Parts, true, false)
	a.findings = saved
	if e.dyn || e.net || e.cred || e.proc || len(e.vals) != 1 || len(e.done) > 0 || strings.Contains(e.vals[0], dyn) {
		return "", false
	}
	return e.vals[0], true
}

// maxFuncCalls is how many calls with arguments of one function are judged with their
// arguments; later calls rely on the judgement of the body at its definition, where the
// positional parameters are run-time values.
const maxFuncCalls = 4

// funcBody is a function defined in the command: its body, the source text it is part of,
// how many of its calls were judged, and whether one is being judged.
type funcBody struct {
	body   *syntax.Stmt
	src    string
	calls  int
	active bool
}

// recordFunc remembers the body of function name.
func (a *analyzer) recordFunc(name string, body *syntax.Stmt) {
	if body == nil {
		return
	}
	if a.ev.funcs == nil {
		a.ev.funcs = map[string]*funcBody{}
	}
	a.ev.funcs[name] = &funcBody{body: body, src: a.src.text}
}

// callFunc judges a call of a function defined in the command with arguments: its body
// runs with the arguments as positional parameters (f(){ "$@"; }; f rm -rf ~ runs
// rm -rf ~). What the body assigns was taken into account at the definition.
func (a *analyzer) callFunc(name string, argv []arg, c *callInfo) {
	f := a.ev.funcs[name]
	if f == nil || len(argv) < 2 || f.src != a.src.text || f.calls >= maxFuncCalls || f.active || a.over {
		return
	}
	f.calls++
	f.active = true
	vars, cwd, old, oldSet, dirs := a.vars, a.cwd, a.oldpwd, a.oldSet, a.dirs
	if vars != nil {
		a.vars = copyVars(vars)
	}
	a.dirs = append([]string(nil), dirs...)
	a.forgetParams()
	params := make([]arg, len(argv)-1)
	copy(params, argv[1:])
	a.setParams(params)
	a.stmt(f.body)
	a.vars, a.cwd, a.oldpwd, a.oldSet, a.dirs = vars, cwd, old, oldSet, dirs
	f.active = false
}
