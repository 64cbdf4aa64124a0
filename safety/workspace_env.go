package safety

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file judges environment variables that point a language at code in the workspace
// (PYTHONPATH=. python -m pkg, PYTHONPATH=$PWD/src pytest, NODE_PATH=lib node x.js,
// GOFLAGS=-mod=mod go test): that is running workspace code (exec.workspace-code, ask),
// as make or npm test is, not environment injection. A value that leaves the workspace, is
// only known at run time or names a protected path keeps the env.injection verdict.

// workspacePathVars lists the search-path variables a language loads modules from, with
// the separator of their lists: python(1) PYTHONPATH, node(1) NODE_PATH, ruby(1) RUBYLIB,
// perlrun(1) PERL5LIB and PERLLIB, java(1) CLASSPATH.
var workspacePathVars = map[string]string{
	"PYTHONPATH": ":", "NODE_PATH": ":", "RUBYLIB": ":", "PERL5LIB": ":", "PERLLIB": ":",
	"CLASSPATH": ":",
}

// workspaceEnvAssign judges setting name to val (known tells whether val is known) and
// reports whether it did: a search path whose every entry is inside the workspace, or
// GOFLAGS of flags that only choose how modules and builds resolve, is workspace code.
// Otherwise it reports false and the caller applies envName. An IFS=… prefix of read is
// handled here too: it is no shell-wide IFS change.
//
// w is the assignment's value word when there is one: the variable's own previous value in
// it ($PYTHONPATH:src, "$(pwd):$PYTHONPATH") is the user's setting and adds nothing.
func (a *analyzer) workspaceEnvAssign(name, val string, known bool, w *syntax.Word, c *callInfo) bool {
	if name == "IFS" && a.ev.readPrefix {
		// IFS=… read: the value only changes how read splits its line, not how the shell
		// splits words (bash(1) "read"), so it is no env.ifs change.
		if known && !strings.Contains(val, dyn) {
			v := val
			a.ev.prefixIFSVal = &v
		}
		return true
	}
	if _, path := workspacePathVars[name]; path && (!known || strings.Contains(val, dyn)) && w != nil {
		val, known = a.selfValue(name, w)
	}
	if !known || strings.Contains(val, dyn) {
		return false
	}
	if name == "GOFLAGS" {
		if !safeGoflags(val) {
			return false
		}
		a.find(c, "exec.workspace-code", Ask, "GOFLAGS="+val+" changes how go builds and runs the workspace's code")
		return true
	}
	sep, ok := workspacePathVars[name]
	if !ok || a.ctx.Workspace == "" {
		return false
	}
	for _, entry := range strings.Split(val, sep) {
		if entry == selfMark {
			continue
		}
		if strings.Contains(entry, selfMark) {
			return false
		}
		if entry == "" {
			entry = "." // an empty entry is the working directory
		}
		p, ok := a.resolve(lit(entry))
		if !ok || strings.Contains(p, dyn) {
			return false
		}
		if a.classify(p) != pcWorkspace || strings.ContainsAny(entry, "*?[") && name != "CLASSPATH" {
			return false
		}
	}
	a.find(c, "exec.workspace-code", Ask, name+" points the interpreter at code in the workspace")
	return true
}

// safeGoflags reports whether every flag of a GOFLAGS value is one that only selects module
// resolution, build tags or test output (go help build, go help modules); -toolexec,
// -exec, -overlay, -modfile, -ldflags, -gcflags and the like name programs or files and
// stay environment injection.
func safeGoflags(v string) bool {
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return false
	}
	for _, f := range fields {
		name, val, hasVal := strings.Cut(f, "=")
		switch name {
		case "-mod":
			if val != "mod" && val != "vendor" && val != "readonly" {
				return false
			}
		case "-buildvcs":
			if val != "true" && val != "false" && val != "auto" {
				return false
			}
		case "-tags", "-p", "-count":
			if !hasVal || strings.ContainsAny(val, "/\\") {
				return false
			}
		case "-v", "-race", "-trimpath", "-modcacherw", "-short", "-failfast", "-cover":
			if hasVal && val != "true" && val != "false" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// selfMark stands for a variable's previous value in selfValue (the bytes cannot come from
// a command: control characters are refused before parsing).
const selfMark = "\x01self\x01"

// selfValue evaluates the value word w of an assignment to name with name's previous value
// replaced by selfMark.
func (a *analyzer) selfValue(name string, w *syntax.Word) (string, bool) {
	prev, had := a.vars[name]
	if a.vars == nil {
		a.vars = map[string]string{}
	}
	a.vars[name] = selfMark
	saved := a.findings
	var buf [2]arg
	vs := a.word(buf[:0], w, true)
	a.findings = saved // the word was judged already
	if had {
		a.vars[name] = prev
	} else {
		delete(a.vars, name)
	}
	if len(vs) != 1 || vs[0].dyn {
		return "", false
	}
	return vs[0].s, true
}
