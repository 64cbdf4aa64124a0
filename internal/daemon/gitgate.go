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
// For a command that may run git, gitGate checks the repository git would discover from the
// cwd, the workspace and every literal path word of the command (so `git -C DIR` and
// `cd DIR && git …` are covered), with gitsafe.CheckConfigAt, and denies the command with
// the git tools' own rule, git.config-exec, naming the setting.
//
// A command "may run git" when one of its words contains "git" after quote and backslash removal, or when
// a word is only known at run time (a parameter or command substitution): fail closed, since
// such a word can become git. A repository that cannot be read as git would is denied too.
func gitGate(v safety.Verdict, command string, ctx safety.Context) safety.Verdict {
	words, dynamic, err := commandWords(command, ctx.Dialect)
	mayRunGit := dynamic || err != nil
	for _, w := range words {
		if strings.Contains(w, "git") {
			mayRunGit = true
			break
		}
	}
	if !mayRunGit {
		return v
	}
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

// commandWords returns the words of command after quote removal, and reports whether any
// word has a part only known at run time. A parse error is returned as it is.
func commandWords(command string, dialect safety.Dialect) ([]string, bool, error) {
	lang := syntax.LangBash
	if dialect == safety.POSIX {
		lang = syntax.LangPOSIX
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil, true, err
	}
	var words []string
	dynamic := false
	syntax.Walk(f, func(n syntax.Node) bool {
		w, ok := n.(*syntax.Word)
		if !ok {
			return true
		}
		s, lit := literal(w.Parts, false)
		if !lit {
			dynamic = true
		}
		words = append(words, s)
		return true
	})
	return words, dynamic, nil
}

// literal returns the value of word parts after quote removal, and false when a part is an
// expansion whose value is only known at run time (its literal pieces are still returned).
// Unquoted literal text is expanded by the shell too: a backslash is removed (g\it is git),
// and pathname or brace expansion (/usr/bin/gi?, /usr/bin/g[i]t, /usr/bin/{g,}it) makes a
// word only known at run time. quoted reports that parts lie inside double quotes, where
// neither happens.
func literal(parts []syntax.WordPart, quoted bool) (string, bool) {
	var b strings.Builder
	ok := true
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if !quoted {
				v = strings.ReplaceAll(v, "\\", "")
				if strings.ContainsAny(v, "*?[{") {
					ok = false
				}
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			// $'…' decodes escapes ($'\x67it' is git): only known once decoded.
			ok = ok && !p.Dollar
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			s, lit := literal(p.Parts, true)
			b.WriteString(s)
			ok = ok && lit
		default:
			ok = false
		}
	}
	return b.String(), ok
}
