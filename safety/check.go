package safety

import (
	"path"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Analysis budget. A command beyond any of these limits is denied (rule budget.exceeded):
// the checker never judges only part of a command.
const (
	maxBytes       = 64 << 10 // bytes of the command string
	maxNodes       = 10000    // statements, words and commands visited, over all nested shells
	maxDepth       = 64       // nesting of compound commands and substitutions
	maxShellDepth  = 8        // nested shells (sh -c, eval, trap bodies, here-documents fed to shells)
	maxBraceFields = 256      // fields one word may expand to by brace expansion
)

// pooledParser is a parser with the reader it parses from, reused between calls.
type pooledParser struct {
	p *syntax.Parser
	r strings.Reader
}

var parserPools = [2]sync.Pool{
	{New: func() any { return &pooledParser{p: syntax.NewParser(syntax.Variant(syntax.LangBash))} }},
	{New: func() any { return &pooledParser{p: syntax.NewParser(syntax.Variant(syntax.LangPOSIX))} }},
}

// parse parses src in dialect d with a pooled parser.
func parse(src string, d Dialect) (*syntax.File, error) {
	i := 0
	if d == POSIX {
		i = 1
	}
	pp := parserPools[i].Get().(*pooledParser)
	pp.r.Reset(src)
	f, err := pp.p.Parse(&pp.r, "")
	pp.r.Reset("")
	parserPools[i].Put(pp)
	return f, err
}

// Check judges command in ctx and returns its verdict: the strictest decision of its
// findings, and the findings in the order they were found. It is pure (it reads no files,
// no environment and no network), deterministic, safe for concurrent use and never panics:
// an internal failure yields a deny verdict with rule internal.panic.
func Check(command string, ctx Context) Verdict {
	return failClosed(command, func() Verdict {
		ctx = normalize(ctx)
		a := analyzers.Get().(*analyzer)
		*a = analyzer{ctx: ctx, top: command, cwd: ctx.Cwd, argStack: a.argStack[:0], free: a.free}
		a.src = source{text: command, base: 0}
		a.run(command, ctx.Dialect)
		v := a.verdict()
		a.findings = nil
		analyzers.Put(a) // not reached after a panic: a broken analyzer is never reused
		return v
	})
}

// failClosed returns judge's verdict, or a deny verdict with rule internal.panic when judge
// panics.
func failClosed(command string, judge func() Verdict) (v Verdict) {
	defer func() {
		if r := recover(); r != nil {
			v = Verdict{Decision: Deny, Findings: []Finding{{Rule: "internal.panic", Decision: Deny, Command: command, Message: rules["internal.panic"].message}}}
		}
	}()
	return judge()
}

// analyzers pools analyzer values so that their buffers are reused between calls.
var analyzers = sync.Pool{New: func() any { return new(analyzer) }}

// normalize cleans the context's paths and fills Cwd from Workspace.
func normalize(ctx Context) Context {
	clean := func(p string) string {
		if p == "" {
			return ""
		}
		return path.Clean(p)
	}
	ctx.Workspace = clean(ctx.Workspace)
	ctx.Home = clean(ctx.Home)
	ctx.Cwd = clean(ctx.Cwd)
	if ctx.Cwd == "" {
		ctx.Cwd = ctx.Workspace
	}
	return ctx
}

// run judges a whole top-level command string.
func (a *analyzer) run(src string, d Dialect) {
	if len(src) > maxBytes {
		a.addAt("budget.exceeded", Deny, 0, src[:64], "The command is longer than 64 KiB")
		return
	}
	if off, why := differential(src); off >= 0 {
		a.addAt("parse.differential", Deny, off, snippet(src, off), why)
		// Judge what can be parsed anyway, so that other findings are reported too.
	}
	a.script(src, d)
	if f, ok := a.forkCycle(); ok {
		a.addAt("function.forkbomb", Deny, 0, snippet(src, 0), "The functions calling "+f+" call each other in pipelines or in the background")
	}
}

// script parses and judges src (the current source) in dialect d. On a parse error, the
// lines before the failing line are judged too, because bash runs them before it reaches
// the error.
func (a *analyzer) script(src string, d Dialect) eff {
	prev := a.curDialect
	a.curDialect = d
	defer func() { a.curDialect = prev }()
	f, err := parse(src, d)
	if err != nil {
		off := 0
		if pe, ok := err.(syntax.ParseError); ok {
			off = int(pe.Pos.Offset())
		} else if le, ok := err.(syntax.LangError); ok {
			off = int(le.Pos.Offset())
		}
		if off > len(src) {
			off = len(src)
		}
		// Point at the rest of the line from the error (or at the last line when the error is
		// at the end of the input).
		pos, end := off, len(src)
		if nl := strings.IndexByte(src[off:], '\n'); nl >= 0 {
			end = off + nl
		}
		if end == pos {
			pos = strings.LastIndexByte(strings.TrimRight(src[:off], "\n"), '\n') + 1
		}
		a.add("parse.error", Ask, pos, end, "The parser stopped here: "+err.Error())
		// Judge the complete lines before the error.
		if nl := strings.LastIndexByte(src[:off], '\n'); nl > 0 {
			if pf, perr := parse(src[:nl], d); perr == nil {
				return a.stmts(pf.Stmts)
			}
		}
		return 0
	}
	return a.stmts(f.Stmts)
}

// verdict assembles the result.
func (a *analyzer) verdict() Verdict {
	v := Verdict{Decision: Allow, Findings: a.findings}
	for _, f := range a.findings {
		v.Decision = v.Decision.Stricter(f.Decision)
	}
	return v
}

// snippet returns a short excerpt of s starting at off, for findings about raw input.
func snippet(s string, off int) string {
	end := off + 40
	if end > len(s) {
		end = len(s)
	}
	start := off
	for start > 0 && off-start < 20 && s[start-1] != '\n' {
		start--
	}
	return strings.ToValidUTF8(s[start:end], "\uFFFD")
}

// differential returns the byte offset of the first input that bash and the parser may read
// differently, and why, or -1: invalid UTF-8, control characters other than tab and newline
// (CR included), DEL, a backslash-newline inside a word, and invisible or bidirectional
// Unicode (zero-width characters, bidi controls, word joiners, BOM, soft hyphen, tag
// characters, line and paragraph separators, fillers, variation selectors). Sources: Trojan Source (CVE-2021-42574) for bidi controls; bash(1) QUOTING for
// line continuation.
func differential(s string) (int, string) {
	var q quoteState
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			q.step(s, i)
			switch {
			case c == '\t' || c == '\n':
			case c < 0x20 || c == 0x7f:
				return i, "The command contains a control character"
			case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
				if inWordContinuation(s, i) {
					return i, "The command has a backslash-newline inside a word"
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return i, "The command is not valid UTF-8"
		}
		if invisible(r) && !(q.quoted() && emojiVariation(s, i, r)) {
			return i, "The command contains an invisible or bidirectional Unicode character"
		}
		i += size
	}
	return -1, ""
}

// inWordContinuation reports whether the backslash-newline at s[i] joins two parts of one
// word (a character other than a blank or an operator on both sides), rather than
// continuing a line between words.
func inWordContinuation(s string, i int) bool {
	wordByte := func(c byte) bool {
		switch c {
		case ' ', '\t', '\n', ';', '&', '|':
			return false
		}
		return true
	}
	before := i > 0 && wordByte(s[i-1])
	after := i+2 < len(s) && wordByte(s[i+2])
	return before && after
}

// invisible reports whether r is a zero-width, bidi-control, invisible or tag character.
func invisible(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x2064,
		r >= 0x2066 && r <= 0x2069, r == 0xFEFF, r == 0x00AD, r >= 0xE0000 && r <= 0xE007F,
		r == 0x180E, r == 0x061C, r >= 0xFFF9 && r <= 0xFFFB, r == 0x2028, r == 0x2029,
		r >= 0x0080 && r <= 0x009F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x034F,
		r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	}
	return false
}
