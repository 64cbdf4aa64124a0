package helperd

import (
	"os"
	"strings"

	"github.com/s-code-dev/s-code/internal/execrun"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// RuleEnvNotAllowed is the rule id of a request whose environment additions the helper
// refuses (see execrun.BuildEnv): a name off the allowlist, or a value its rule refuses.
const RuleEnvNotAllowed = execrun.RuleEnvNotAllowed

// commandEnv returns the complete environment of a command that runs in workspace (resolved)
// with shell, built from the request's env map and callerPath (the request's path field: the
// caller's PATH): the helper's base (its configured PATH plus the caller's safe PATH entries,
// HOME, USER, LOGNAME, SHELL), then the additions the allowlist admits (PATH is not one).
// Any refused addition refuses the request with RuleEnvNotAllowed, naming each variable.
// Commands run as the helper's own uid, so PATH entries must be owned by it or by root (the
// root helper: by root only); entries inside the workspace or one of the extra writable
// paths of the request are left out (the command could plant programs there).
func (s *Server) commandEnv(env map[string]string, callerPath, workspace, shell string, extra []string) ([]string, *helperv1.Denied) {
	path := s.cfg.Path
	if callerPath != "" {
		path = execrun.MergePath(s.cfg.Path, callerPath, workspace, os.Geteuid())
		for _, w := range extra {
			path = dropWithin(path, w)
		}
	}
	out, err := execrun.BuildEnv(execrun.Base{Path: path, Home: s.cfg.Home, User: s.cfg.User, Shell: shell, Allow: s.cfg.EnvAllow}, env)
	if err != nil {
		return nil, &helperv1.Denied{Rule: RuleEnvNotAllowed, Reason: err.Error()}
	}
	return out, nil
}

// dropWithin returns the PATH value path without its entries that are dir or lie beneath it
// (MergePath returns resolved entries, which a symbolic link may have moved into dir).
func dropWithin(path, dir string) string {
	var out []string
	for _, d := range strings.Split(path, ":") {
		if d != dir && !strings.HasPrefix(d, dir+"/") {
			out = append(out, d)
		}
	}
	return strings.Join(out, ":")
}
