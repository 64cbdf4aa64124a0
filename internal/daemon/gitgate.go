package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/s-code-dev/s-code/internal/gitsafe"
	"github.com/s-code-dev/s-code/safety"
)

// maxGatePaths bounds how many directories gitGate checks for one command.
const maxGatePaths = 64

// gitGate is the root helper's verdict gate for git. The root helper runs commands as root
// and unsandboxed, so a git it starts in a repository whose own configuration names a
// program (a filter, a hook path, a pager, an fsmonitor …) would run that program as root.
// For every command, gitGate checks the repository git would discover from the cwd, the
// workspace and every literal path word of the command (so `git -C DIR` and `cd DIR && git
// …` are covered), with gitsafe.CheckConfigAt, and denies the command with the git tools'
// own rule, git.config-exec, naming the setting. A repository that cannot be read as git
// would is denied too.
//
// Every command, not only those whose words look like git: any program can start git
// (eval 'g\it …', sh -c "g\\it …", printf … | sh, python3 -c, perl -e, make, the go
// command's version stamping), and no reading of the words can tell them all.
func gitGate(v safety.Verdict, command string, ctx safety.Context) safety.Verdict {
	words := commandWords(command, ctx.Dialect)
	for _, dir := range gateDirs(words, ctx) {
		err := gitsafe.CheckConfigAt(dir)
		if err == nil {
			continue
		}
		msg := "the root helper runs git unsandboxed as root; refused because git would read a repository whose configuration can start a program: " + err.Error() +
			" (remove the setting, or run git there as its owner)"
		var ce *gitsafe.ConfigError
		if !errors.As(err, &ce) {
			msg = fmt.Sprintf("the root helper cannot read the configuration of the repository at %s as git would, so it does not run git there: %v", dir, err)
		}
		v.Findings = append(v.Findings, safety.Finding{Rule: gitsafe.RuleConfigExec, Decision: safety.Deny, Command: command, Message: msg})
		v.Decision = safety.Deny
		return v
	}
	return v
}

// gateDirs returns the directories whose repositories gitGate checks: cwd, workspace, and
// each word naming an existing path (relative words from cwd; a file stands for its
// directory), without repeats, at most maxGatePaths.
func gateDirs(words []string, ctx safety.Context) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" || len(out) >= maxGatePaths {
			return
		}
		if !filepath.IsAbs(p) {
			if ctx.Cwd == "" {
				return
			}
			p = filepath.Join(ctx.Cwd, p)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return
		}
		if !fi.IsDir() {
			p = filepath.Dir(p)
		}
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	add(ctx.Cwd)
	add(ctx.Workspace)
	for _, w := range words {
		// A --flag=PATH or VAR=PATH word names PATH.
		if _, after, ok := strings.Cut(w, "="); ok {
			add(after)
		}
		if w != "" && w[0] != '-' {
			add(w)
		}
	}
	return out
}

// commandWords returns the words of command after quote removal (their literal parts), or
// nil when command does not parse.
func commandWords(command string, dialect safety.Dialect) []string {
	lang := syntax.LangBash
	if dialect == safety.POSIX {
		lang = syntax.LangPOSIX
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil
	}
	var words []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			words = append(words, literal(w.Parts, false))
		}
		return true
	})
	return words
}

// literal returns the value of word parts after quote removal; the parts only known at run
// time (expansions) are left out. Unquoted literal text loses its backslashes (g\it is
// git). quoted reports that parts lie inside double quotes.
func literal(parts []syntax.WordPart, quoted bool) string {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if !quoted {
				v = strings.ReplaceAll(v, "\\", "")
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if !p.Dollar {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			b.WriteString(literal(p.Parts, true))
		}
	}
	return b.String()
}
