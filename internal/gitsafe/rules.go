package gitsafe

import "strings"

// programNames are variable names that, in any section, name a program or a command line
// to run. They catch the settings listed in hazard and any new ones git adds in the same
// style (git-config(1): "*.command", "*.cmd", "*.program", "*.helper", "*.driver" …).
var programNames = map[string]bool{
	"command": true, "cmd": true, "program": true, "helper": true, "driver": true,
	"textconv": true, "clean": true, "smudge": true, "process": true, "editor": true,
	"pager": true, "askpass": true, "sshcommand": true, "hookspath": true, "tunnel": true,
	"uploadpack": true, "receivepack": true, "packobjectshook": true, "gitproxy": true,
	"alternaterefscommand": true, "defaultkeycommand": true, "difffilter": true,
	"external": true, "browser": true, "viewer": true, "httpd": true, "smtpserver": true,
	"tocmd": true, "cccmd": true, "headercmd": true, "fsmonitor": true, "vcs": true,
}

// hazard reports why the setting e could make git start a program (or read configuration
// or a repository gitsafe did not check), or "" when it cannot. The keys come from
// git-config(1), gitattributes(5), githooks(5) and gitmodules(5) of git 2.39 and later.
func hazard(e configEntry) string {
	section, sub, name := splitKey(e.Key)
	switch section {
	case "include", "includeif":
		return "includes another configuration file"
	case "alias":
		if strings.HasPrefix(strings.TrimLeft(e.Value, " \t"), "!") {
			return "alias runs a shell command"
		}
		return ""
	case "pager":
		return "names a pager program"
	case "hook":
		return "configures a hook command"
	case "filter":
		if name == "clean" || name == "smudge" || name == "process" {
			return "filter driver runs a program on file contents"
		}
	case "diff":
		if sub != "" && (name == "textconv" || name == "command") {
			return "diff driver runs a program"
		}
		if sub == "" && (name == "external" || name == "tool" || name == "guitool") {
			return "names a diff program"
		}
	case "merge":
		if sub != "" && name == "driver" {
			return "merge driver runs a program"
		}
		if sub == "" && (name == "tool" || name == "guitool") {
			return "names a merge program"
		}
	case "difftool", "mergetool", "browser", "man", "guitool":
		if name == "cmd" || name == "path" {
			return "names a program"
		}
	case "submodule":
		if name == "update" && strings.HasPrefix(strings.TrimLeft(e.Value, " \t"), "!") {
			return "submodule update runs a shell command"
		}
	case "core":
		switch name {
		case "fsmonitor":
			if v, ok := parseBool(e); ok && !v && e.HasValue && e.Value != "" {
				return ""
			}
			return "fsmonitor runs a hook program or starts a daemon"
		case "worktree":
			return "moves the working tree away from the workspace"
		case "bare":
			if v, ok := parseBool(e); ok && !v {
				return ""
			}
			return "the repository is bare (a bare repository in the workspace is never used)"
		}
	case "gpg":
		if name == "program" || name == "defaultkeycommand" {
			return "names a signing program"
		}
	case "credential":
		if name == "helper" {
			return "credential helper runs a program"
		}
	case "remote":
		if sub != "" && (name == "uploadpack" || name == "receivepack" || name == "vcs") {
			return "names a transport program"
		}
	case "sendemail":
		if strings.HasSuffix(name, "cmd") || name == "smtpserver" {
			return "names a mail program"
		}
	case "web", "help", "instaweb":
		if name == "browser" || name == "httpd" {
			return "names a browser or server program"
		}
	}
	if programNames[name] {
		return "names a program to run"
	}
	return ""
}
