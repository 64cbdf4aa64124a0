package safety

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file follows what earlier parts of a command leave for later parts: scripts written
// to files, downloads, symbolic links, the output of a pipeline stage, and calls between
// functions (for fork bombs).

// recordWritten remembers the content a statement writes to a file when it is known
// (echo 'x' > f, cat > f <<'EOF' … EOF), so that running the file later in the command
// judges that content.
func (a *analyzer) recordWritten(s *syntax.Stmt, e eff) {
	var out *syntax.Redirect
	var body *syntax.Redirect
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob:
			if r.N == nil || r.N.Value == "1" {
				out = r
			}
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			body = r
		}
	}
	if out == nil {
		return
	}
	target := out.Word.Lit()
	if target == "" {
		return
	}
	p, ok := a.resolve(lit(target))
	if !ok || strings.Contains(p, dyn) {
		return
	}
	if e&(effFetch|effDecode) != 0 {
		if a.fetched == nil {
			a.fetched = map[string]bool{}
		}
		a.fetched[p] = true // curl URL > x.sh
	}
	if e&effCredRead != 0 {
		a.markCredCopy(p) // cat ~/.ssh/id_rsa > k
	}
	content, known := "", false
	call, isCall := s.Cmd.(*syntax.CallExpr)
	switch {
	case !isCall || len(call.Args) == 0:
	case call.Args[0].Lit() == "cat" && len(call.Args) == 1 && body != nil:
		content, known = a.hdocText(body)
	default:
		saved := a.findings
		content, known = echoOutput(a, []*syntax.Stmt{{Cmd: call}})
		a.findings = saved
	}
	if a.written == nil {
		a.written = map[string]string{}
	}
	prev, had := a.written[p]
	switch {
	case !known:
		a.written[p] = dyn
	case out.Op == syntax.AppOut && had && !strings.Contains(prev, dyn):
		a.written[p] = prev + content + "\n"
	case out.Op == syntax.AppOut && had:
		a.written[p] = dyn
	default:
		a.written[p] = content + "\n"
	}
}

// runsProcText judges running a process substitution as a script when its output is known
// (bash <(echo 'rm -rf /')); it reports whether it did.
func (a *analyzer) runsProcText(x arg, d Dialect, c *callInfo) bool {
	if !x.proc || x.w == nil || a.procText == nil || len(x.w.Parts) != 1 {
		return false
	}
	ps, ok := x.w.Parts[0].(*syntax.ProcSubst)
	if !ok {
		return false
	}
	text, ok := a.procText[ps]
	if !ok {
		return false
	}
	a.nestedText(text, -1, d, c)
	return true
}

// patchTargets judges the files a patch fed on stdin (a here-document or here-string)
// writes: the "+++ " (and "--- ") paths of a unified diff, with strip leading components
// removed (-1: strip a/ and b/ prefixes as git does). It reports whether the patch text was
// known.
func (a *analyzer) patchTargets(c *callInfo, strip int) bool {
	if !c.in.hasInput || !c.in.literal {
		return false
	}
	for _, line := range strings.Split(c.in.body, "\n") {
		var p string
		switch {
		case strings.HasPrefix(line, "+++ "):
			p = line[4:]
		case strings.HasPrefix(line, "--- ") && !strings.HasPrefix(line, "--- /dev/null"):
			p = line[4:]
		case strings.HasPrefix(line, "diff --git "):
			f := strings.Fields(line)
			if len(f) == 4 {
				p = f[3]
			}
		default:
			continue
		}
		if i := strings.IndexByte(p, '\t'); i >= 0 {
			p = p[:i]
		}
		p = strings.TrimSpace(p)
		if p == "" || p == "/dev/null" {
			continue
		}
		n := strip
		if n < 0 {
			n = 0
			if strings.HasPrefix(p, "a/") || strings.HasPrefix(p, "b/") {
				n = 1
			}
		}
		for ; n > 0; n-- {
			i := strings.IndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[i+1:]
		}
		a.writeTarget(lit(p), "write", c.pos, c.end)
	}
	return true
}

// runsWritten judges running the file x as a script (in dialect d) when its content was
// written earlier in the command; it reports whether it did.
func (a *analyzer) runsWritten(x arg, d Dialect, c *callInfo) bool {
	if a.written == nil {
		return false
	}
	p, ok := a.resolve(x)
	if !ok {
		return false
	}
	content, had := a.written[p]
	if !had {
		return false
	}
	if strings.Contains(content, dyn) {
		a.find(c, "dynamic.script", Ask, "This runs "+p+", written earlier in the command with content only known at run time")
		return true
	}
	a.nestedText(content, -1, d, c)
	return true
}

// recordFetch remembers that the file x holds downloaded content.
func (a *analyzer) recordFetch(x arg) {
	p, ok := a.resolve(x)
	if !ok || strings.Contains(p, dyn) {
		return
	}
	if a.fetched == nil {
		a.fetched = map[string]bool{}
	}
	a.fetched[p] = true
}

// runsFetched reports (and records a deny finding) when x names a file downloaded earlier in
// the command and is about to be run as code.
func (a *analyzer) runsFetched(x arg, c *callInfo) bool {
	if a.fetched == nil {
		return false
	}
	p, ok := a.resolve(x)
	if ok && a.fetched[p] {
		a.find(c, "network.pipe-to-shell", Deny, "This runs "+p+", which was downloaded earlier in the same command")
		return true
	}
	return false
}

// recordLink remembers that name is now a link to target, so that later writes through
// name are judged as writes to target.
func (a *analyzer) recordLink(name, target arg) {
	n, ok := a.resolve(name)
	if !ok || strings.Contains(n, dyn) {
		return
	}
	t := target.s
	if target.dyn {
		t = dyn
	} else if !strings.HasPrefix(t, "/") {
		t = path.Dir(n) + "/" + t
	}
	if a.links == nil {
		a.links = map[string]string{}
	}
	a.links[n] = path.Clean(t)
}

// callEdge is a call from the body of function from to the program to; fork tells whether
// the call runs in a pipeline or in the background.
type callEdge struct {
	from, to string
	fork     bool
}

// forkCycle reports whether the calls made in function bodies form a cycle of defined
// functions with at least one call that forks (a(){ b|b& }; b(){ a|a& } and longer
// chains), and returns a function on it.

func (a *analyzer) forkCycle() (string, bool) {
	if len(a.calls) == 0 {
		return "", false
	}
	out := map[string][]callEdge{}
	var names []string
	for _, e := range a.calls {
		if a.funcs[e.to] {
			if _, ok := out[e.from]; !ok {
				names = append(names, e.from)
			}
			out[e.from] = append(out[e.from], e)
		}
	}
	type state struct {
		name string
		fork bool
	}
	for _, start := range names {
		seen := map[state]bool{}
		stack := []state{{start, false}}
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, e := range out[s.name] {
				n := state{e.to, s.fork || e.fork}
				if n.name == start && n.fork {
					return start, true
				}
				if !seen[n] {
					seen[n] = true
					stack = append(stack, n)
				}
			}
		}
	}
	return "", false
}

// literalOutput returns what a pipeline stage prints when it is an echo or printf of
// literal words, or cat of a literal here-document or here-string.
func literalOutput(a *analyzer, s *syntax.Stmt) (string, bool) {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return "", false
	}
	if call.Args[0].Lit() == "cat" && len(call.Args) == 1 && len(s.Redirs) == 1 {
		return a.hdocText(s.Redirs[0])
	}
	if len(s.Redirs) > 0 {
		return "", false
	}
	saved := a.findings
	out, ok := echoOutput(a, []*syntax.Stmt{s})
	a.findings = saved // echoOutput judged the words already with the stage itself
	return out, ok
}
