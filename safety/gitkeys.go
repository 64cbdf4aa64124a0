package safety

import (
	"strconv"
	"strings"
)

// GitKeyKind says how a Git configuration key of GitProgramKeys can make Git run code.
type GitKeyKind int

const (
	// GitKeyProgram: the value names a program or a shell command line that Git runs
	// (core.pager, filter.<driver>.clean, hook.<name>.command, an alias starting with "!").
	GitKeyProgram GitKeyKind = iota + 1
	// GitKeyInclude: the value names more configuration to read (include.path), which may
	// set any key of this table.
	GitKeyInclude
	// GitKeyLocation: the value moves the work tree, the hooks or the templates Git uses,
	// or changes which repositories Git trusts (core.worktree, safe.directory).
	GitKeyLocation
	// GitKeyTransport: the value enables a transport or proxy of Git's network commands
	// (protocol.ext.allow runs commands named in URLs; http.proxy reroutes fetches). Only
	// commands that use the network are affected.
	GitKeyTransport
)

// String returns "program", "include", "location", "transport" or "unknown".
func (k GitKeyKind) String() string {
	switch k {
	case GitKeyProgram:
		return "program"
	case GitKeyInclude:
		return "include"
	case GitKeyLocation:
		return "location"
	case GitKeyTransport:
		return "transport"
	}
	return "unknown"
}

// GitValueRule says which values of a key make Git run something.
type GitValueRule int

const (
	// GitAnyValue: every value (the zero value, so that a forgotten rule fails closed).
	GitAnyValue GitValueRule = iota
	// GitBangValue: a value starting with "!" (after blanks) is a shell command: alias.*
	// and submodule.<name>.update (git-config(1), gitmodules(5)).
	GitBangValue
	// GitNotFalse: every value but a boolean false (false, no, off, 0): core.fsmonitor.
	GitNotFalse
	// GitNotBool: every value but a boolean (true, false, yes, no, on, off, 1, 0):
	// pager.<cmd>, whose boolean values only turn the default pager on or off.
	GitNotBool
)

// GitConfigKey is one entry of GitProgramKeys: a configuration key of git-config(1) (or
// gitmodules(5)) whose value can make Git run a program.
type GitConfigKey struct {
	// Pattern is the key in lower case, as "section.name" or "section.<sub>.name": "*" in
	// the subsection place matches any non-empty subsection, a name "*" any variable name.
	// "core.pager" does not match "core.x.pager"; both forms are listed where Git reads
	// both (credential.helper and credential.<url>.helper).
	Pattern string
	// Kind says what the value does.
	Kind GitKeyKind
	// Value says which values count (GitAnyValue for most keys).
	Value GitValueRule
	// Reason is a short phrase for messages: "names a pager program".
	Reason string
}

// gitProgramKeys is the table behind GitProgramKeys. diff.tool, merge.tool and their
// guitool twins are not in it: they pick one of Git's built-in tool definitions or a
// difftool.<tool>.cmd / mergetool.<tool>.cmd, which is in it. Source: git-config(1) of Git 2.39 and
// of git-scm.com for 2.54 (hook.<name>.command), git-send-email(1), git-interpret-trailers(1)
// (trailer.<token>.cmd, and .command, its deprecated spelling), gitmodules(5), git-archive(1)
// (tar.<format>.command), git-help(1), git-web--browse(1), git-instaweb(1),
// git-imap-send(1), githooks(5).
var gitProgramKeys = []GitConfigKey{
	{"alias.*", GitKeyProgram, GitBangValue, "alias runs a shell command"},
	{"alias.*.*", GitKeyProgram, GitBangValue, "alias runs a shell command"},
	{"browser.*.cmd", GitKeyProgram, GitAnyValue, "names a browser command"},
	{"browser.*.path", GitKeyProgram, GitAnyValue, "names a browser program"},
	{"core.alternaterefscommand", GitKeyProgram, GitAnyValue, "names a command that lists alternate refs"},
	{"core.askpass", GitKeyProgram, GitAnyValue, "names a password prompt program"},
	{"core.editor", GitKeyProgram, GitAnyValue, "names an editor program"},
	{"core.fsmonitor", GitKeyProgram, GitNotFalse, "fsmonitor runs a hook program or starts a daemon"},
	{"core.gitproxy", GitKeyProgram, GitAnyValue, "names a proxy command for the git protocol"},
	{"core.hookspath", GitKeyProgram, GitAnyValue, "names the directory of hook programs"},
	{"core.pager", GitKeyProgram, GitAnyValue, "names a pager program"},
	{"core.sshcommand", GitKeyProgram, GitAnyValue, "names the ssh command"},
	{"credential.helper", GitKeyProgram, GitAnyValue, "credential helper runs a program"},
	{"credential.*.helper", GitKeyProgram, GitAnyValue, "credential helper runs a program"},
	{"diff.external", GitKeyProgram, GitAnyValue, "names a diff program"},
	{"diff.*.command", GitKeyProgram, GitAnyValue, "diff driver runs a program"},
	{"diff.*.textconv", GitKeyProgram, GitAnyValue, "diff driver runs a program"},
	{"difftool.*.cmd", GitKeyProgram, GitAnyValue, "names a diff tool command"},
	{"difftool.*.path", GitKeyProgram, GitAnyValue, "names a diff tool program"},
	{"filter.*.clean", GitKeyProgram, GitAnyValue, "filter driver runs a program on file contents"},
	{"filter.*.smudge", GitKeyProgram, GitAnyValue, "filter driver runs a program on file contents"},
	{"filter.*.process", GitKeyProgram, GitAnyValue, "filter driver runs a program on file contents"},
	{"gpg.program", GitKeyProgram, GitAnyValue, "names a signing program"},
	{"gpg.*.program", GitKeyProgram, GitAnyValue, "names a signing program"},
	{"gpg.ssh.defaultkeycommand", GitKeyProgram, GitAnyValue, "names a command that prints the signing key"},
	{"guitool.*.cmd", GitKeyProgram, GitAnyValue, "names a gui tool command"},
	{"help.browser", GitKeyProgram, GitAnyValue, "names a browser program"},
	{"hook.*.command", GitKeyProgram, GitAnyValue, "configures a hook command"},
	{"imap.tunnel", GitKeyProgram, GitAnyValue, "names a tunnel command for imap-send"},
	{"instaweb.browser", GitKeyProgram, GitAnyValue, "names a browser program"},
	{"instaweb.httpd", GitKeyProgram, GitAnyValue, "names a web server program"},
	{"instaweb.modulepath", GitKeyProgram, GitAnyValue, "names the web server's module directory"},
	{"interactive.difffilter", GitKeyProgram, GitAnyValue, "names a diff filter program"},
	{"man.viewer", GitKeyProgram, GitAnyValue, "names a manual viewer program"},
	{"man.*.cmd", GitKeyProgram, GitAnyValue, "names a manual viewer command"},
	{"man.*.path", GitKeyProgram, GitAnyValue, "names a manual viewer program"},
	{"merge.*.driver", GitKeyProgram, GitAnyValue, "merge driver runs a program"},
	{"mergetool.*.cmd", GitKeyProgram, GitAnyValue, "names a merge tool command"},
	{"mergetool.*.path", GitKeyProgram, GitAnyValue, "names a merge tool program"},
	{"pager.*", GitKeyProgram, GitNotBool, "names a pager program"},
	{"remote.*.receivepack", GitKeyProgram, GitAnyValue, "names a transport program"},
	{"remote.*.uploadpack", GitKeyProgram, GitAnyValue, "names a transport program"},
	{"remote.*.vcs", GitKeyProgram, GitAnyValue, "names a remote helper program"},
	{"sendemail.sendmailcmd", GitKeyProgram, GitAnyValue, "names a mail command"},
	{"sendemail.*.sendmailcmd", GitKeyProgram, GitAnyValue, "names a mail command"},
	{"sendemail.smtpserver", GitKeyProgram, GitAnyValue, "names a mail program (an absolute path is run)"},
	{"sendemail.*.smtpserver", GitKeyProgram, GitAnyValue, "names a mail program (an absolute path is run)"},
	{"sendemail.tocmd", GitKeyProgram, GitAnyValue, "names a command that lists recipients"},
	{"sendemail.*.tocmd", GitKeyProgram, GitAnyValue, "names a command that lists recipients"},
	{"sendemail.cccmd", GitKeyProgram, GitAnyValue, "names a command that lists recipients"},
	{"sendemail.*.cccmd", GitKeyProgram, GitAnyValue, "names a command that lists recipients"},
	{"sendemail.headercmd", GitKeyProgram, GitAnyValue, "names a command that adds headers"},
	{"sendemail.*.headercmd", GitKeyProgram, GitAnyValue, "names a command that adds headers"},
	{"sequence.editor", GitKeyProgram, GitAnyValue, "names an editor program"},
	{"submodule.*.update", GitKeyProgram, GitBangValue, "submodule update runs a shell command"},
	{"tar.*.command", GitKeyProgram, GitAnyValue, "names a compression command for git archive"},
	{"trailer.*.cmd", GitKeyProgram, GitAnyValue, "trailer runs a command"},
	{"trailer.*.command", GitKeyProgram, GitAnyValue, "trailer runs a command"},
	{"uploadpack.packobjectshook", GitKeyProgram, GitAnyValue, "names a pack-objects hook program"},
	{"web.browser", GitKeyProgram, GitAnyValue, "names a browser program"},

	{"include.path", GitKeyInclude, GitAnyValue, "includes another configuration file"},
	{"includeif.*.path", GitKeyInclude, GitAnyValue, "includes another configuration file"},

	{"core.worktree", GitKeyLocation, GitAnyValue, "moves the working tree away from the repository"},
	{"init.templatedir", GitKeyLocation, GitAnyValue, "names a template directory whose hooks are copied"},
	{"safe.directory", GitKeyLocation, GitAnyValue, "trusts repositories owned by other users"},

	{"protocol.allow", GitKeyTransport, GitAnyValue, "enables transports such as ext::, which runs commands"},
	{"protocol.*.allow", GitKeyTransport, GitAnyValue, "enables transports such as ext::, which runs commands"},
	{"http.proxy", GitKeyTransport, GitAnyValue, "reroutes Git's network traffic through a proxy"},
	{"remote.*.proxy", GitKeyTransport, GitAnyValue, "reroutes Git's network traffic through a proxy"},
	{"ssh.variant", GitKeyTransport, GitAnyValue, "changes the options passed to the ssh command"},
}

// gitProgramNames are variable names that, in any section, name a program or a command
// line: the style of git-config(1) ("*.command", "*.cmd", "*.program", "*.helper",
// "*.driver" …). A key of this style that the table does not list (one Git adds later)
// counts as a program key too, unless its value is a boolean.
var gitProgramNames = map[string]bool{
	"command": true, "cmd": true, "program": true, "helper": true, "driver": true,
	"textconv": true, "clean": true, "smudge": true, "process": true, "editor": true,
	"pager": true, "askpass": true, "sshcommand": true, "hookspath": true, "tunnel": true,
	"uploadpack": true, "receivepack": true, "packobjectshook": true, "gitproxy": true,
	"alternaterefscommand": true, "defaultkeycommand": true, "difffilter": true,
	"external": true, "browser": true, "viewer": true, "httpd": true, "smtpserver": true,
	"tocmd": true, "cccmd": true, "headercmd": true, "sendmailcmd": true, "fsmonitor": true,
	"vcs": true, "hook": true,
}

// GitProgramKeys returns the configuration keys of Git whose value can make Git run a
// program, read more configuration, move its work tree or hooks, or enable a transport
// that runs commands. ShellSafety denies setting any of them (git -c, git config,
// --config-env, git clone -c: rule git.config-exec), and the Git tools refuse a
// repository whose configuration sets one of the first three kinds (internal/gitsafe), so
// the two layers judge the same keys. It returns a new slice on every call.
func GitProgramKeys() []GitConfigKey {
	return append([]GitConfigKey(nil), gitProgramKeys...)
}

// GitKeySetting reports whether setting the Git configuration key to value can make Git run
// a program (or read configuration, move its work tree, enable a transport): the matching
// entry of GitProgramKeys, or for a key the table does not list but whose variable name is
// in the style of a program key (a name like "cmd", "command", "program" or "helper"), an
// entry of kind GitKeyProgram. valueKnown is false when the value is only known at run
// time, which counts as any value. The key is compared case-insensitively (Git's sections
// and names are; a subsection is compared in lower case too, which can only match more).
// ok is false when the setting runs nothing.
func GitKeySetting(key, value string, valueKnown bool) (entry GitConfigKey, ok bool) {
	k := strings.ToLower(key)
	section, sub, name := splitGitKey(k)
	if section == "" || name == "" {
		return GitConfigKey{}, false
	}
	for _, e := range gitProgramKeys {
		ps, psub, pname := splitGitKey(e.Pattern)
		if ps != section || (pname != "*" && pname != name) {
			continue
		}
		if (psub == "") != (sub == "") || psub != "*" && psub != sub {
			continue
		}
		if gitValueRuns(e.Value, value, valueKnown) {
			return e, true
		}
		return GitConfigKey{}, false
	}
	if gitProgramNames[name] && (!valueKnown || !gitBool(value)) {
		return GitConfigKey{Pattern: k, Kind: GitKeyProgram, Reason: "names a program to run"}, true
	}
	return GitConfigKey{}, false
}

// splitGitKey splits a key into its section, subsection ("" when absent) and name.
func splitGitKey(k string) (section, sub, name string) {
	first := strings.IndexByte(k, '.')
	last := strings.LastIndexByte(k, '.')
	if first < 0 {
		return k, "", ""
	}
	section, name = k[:first], k[last+1:]
	if last > first {
		sub = k[first+1 : last]
	}
	return section, sub, name
}

// gitValueRuns reports whether value makes a key with rule r run something.
func gitValueRuns(r GitValueRule, value string, known bool) bool {
	if !known {
		return true
	}
	switch r {
	case GitBangValue:
		return strings.HasPrefix(strings.TrimLeft(value, " \t"), "!")
	case GitNotFalse:
		switch strings.ToLower(strings.TrimSpace(value)) {
		case "false", "no", "off", "0":
			return false
		}
		return true
	case GitNotBool:
		return !gitBool(value)
	}
	return true
}

// gitBool reports whether value is one of Git's boolean spellings (git-config(1) "Values").
func gitBool(value string) bool {
	switch strings.ToLower(strings.TrimSpace(value)) {
	case "true", "false", "yes", "no", "on", "off":
		return true
	}
	_, err := strconv.ParseInt(strings.TrimSpace(value), 0, 64)
	return err == nil
}

// gitExecSetting reports whether setting key to value (dynValue: only known at run time)
// can make Git run a program: any entry of GitProgramKeys.
func gitExecSetting(key, value string, dynValue bool) bool {
	_, ok := GitKeySetting(key, value, !dynValue)
	return ok
}

// gitExecKey reports whether setting the key k to some value can make Git run a program.
func gitExecKey(k string) bool {
	_, ok := GitKeySetting(k, "", false)
	return ok
}

// gitKeyWhy returns " (reason)" for a finding about setting key, or "".
func gitKeyWhy(key, value string, dynValue bool) string {
	if e, ok := GitKeySetting(key, value, !dynValue); ok {
		return " (" + e.Reason + ")"
	}
	return ""
}

// gitPagerOn reports whether setting key to value turns Git's pager on for a command
// (pager.<cmd> set to a boolean true, git-config(1)), as git -p does.
func gitPagerOn(key, value string) bool {
	section, sub, _ := splitGitKey(strings.ToLower(key))
	if section != "pager" || sub != "" || !gitBool(value) {
		return false
	}
	return gitValueRuns(GitNotFalse, value, true)
}
