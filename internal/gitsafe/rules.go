package gitsafe

import "github.com/s-code-dev/s-code/safety"

// hazard reports why the setting e could make git start a program (or read configuration
// or a repository gitsafe did not check), or "" when it cannot. The keys are those of
// safety.GitProgramKeys (the table ShellSafety judges git -c and git config with), of the
// kinds program, include and location; transport keys only matter to git's network
// commands, which the tools never run. core.bare is gitsafe's own: a bare repository in the
// workspace is never used.
func hazard(e configEntry) string {
	section, sub, name := splitKey(e.Key)
	if section == "core" && sub == "" && name == "bare" {
		if v, ok := parseBool(e); ok && !v {
			return ""
		}
		return "the repository is bare (a bare repository in the workspace is never used)"
	}
	value := e.Value
	if !e.HasValue {
		value = "true" // [core] fsmonitor: a key without a value is boolean true
	}
	k, ok := safety.GitKeySetting(e.Key, value, true)
	if !ok || k.Kind == safety.GitKeyTransport {
		return ""
	}
	return k.Reason
}
