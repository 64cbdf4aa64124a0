package safety

import "strings"

// scodeSystemState lists S-Code's own system paths: the root helper's policy and
// configuration (/etc/s-code), its audit log (/var/log/s-code), its runtime directory and
// socket (/run/s-code) and state (/var/lib/s-code). A command that changes one could turn
// off or rewrite what decides and records the agent's commands, so it is denied in every
// role: an approval cannot grant it either (the helpers never widen a deny).
var scodeSystemState = [][]string{
	{"etc", "s-code"}, {"var", "log", "s-code"}, {"run", "s-code"}, {"var", "lib", "s-code"},
}

// scodeHomeState lists S-Code's paths relative to a home directory (the XDG defaults): the
// user configuration (mode, policy), the user helper's audit log and turn records, and
// caches.
var scodeHomeState = [][]string{
	{".config", "s-code"}, {".local", "state", "s-code"}, {".cache", "s-code"}, {".local", "share", "s-code"},
}

// isScodeState reports whether the absolute path p (components comps) is S-Code's own
// configuration, state, audit log or runtime directory: a system path, one below the home
// directory of the context, of any user (/home/*, /root, /Users/*), or a user runtime
// directory's s-code entry (/run/user/UID/s-code).
func (a *analyzer) isScodeState(p string, comps []string) bool {
	for _, pat := range scodeSystemState {
		if underPattern(comps, pat) {
			return true
		}
	}
	if len(comps) >= 4 && compMatch(comps[0], "run") && compMatch(comps[1], "user") && compMatch(comps[3], "s-code") {
		return true
	}
	homeRel := func(rel []string) bool {
		for _, pat := range scodeHomeState {
			if underPattern(rel, pat) {
				return true
			}
		}
		return false
	}
	if home := a.ctx.Home; home != "" && within(p, home) && p != home && !within(a.ctx.Workspace, p) {
		if homeRel(splitPath(p[len(home):])) {
			return true
		}
	}
	if len(comps) >= 3 && (strings.EqualFold(comps[0], "home") || strings.EqualFold(comps[0], "users")) && homeRel(comps[2:]) {
		return true
	}
	if rest, ok := rootHomeRel(comps); ok && homeRel(rest) {
		return true
	}
	return false
}

// hScode judges s-code itself: its approval verbs (s-code approvals list|show|approve|deny)
// are denied in every role, so that an agent cannot approve its own requests, nor read the
// frozen cards of others' pending ones; the other verbs are judged as any unknown program.
func hScode(a *analyzer, argv []arg, c *callInfo) eff {
	for _, x := range argv[1:] {
		if x.dyn {
			// A verb only known at run time may be approvals.
			a.find(c, "scode.approval", Deny, "Running s-code with a verb only known at run time")
			return 0
		}
		if strings.HasPrefix(x.s, "-") {
			continue
		}
		if x.s == "approvals" {
			a.find(c, "scode.approval", Deny, "Running s-code approvals")
		}
		break
	}
	a.find(c, "unknown.command", Ask, "The program s-code is not known")
	return a.wrappedCommand(argv, c)
}
