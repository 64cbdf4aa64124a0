package helperd

import (
	"maps"
	"os"

	"github.com/s-code-dev/s-code/internal/execrun"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
)

// RuleEnvNotAllowed is the rule id of a request whose environment additions the helper
// refuses (see execrun.BuildEnv): a name off the allowlist, or a value its rule refuses.
const RuleEnvNotAllowed = execrun.RuleEnvNotAllowed

// CallerPathKey is where a request carries the caller's PATH until ExecStart has a field of
// its own for it: the key "PATH" of the env map. It is not an environment addition (BuildEnv
// refuses PATH as one): it is taken out of the map and only its safe entries are merged into
// the helper's own PATH (execrun.MergePath).
const CallerPathKey = "PATH"

// commandEnv returns the complete environment of a command that runs in workspace (resolved)
// with shell, built from the request's env map: the helper's base (its configured PATH plus
// the caller's safe PATH entries, HOME, USER, LOGNAME, SHELL), then the additions the
// allowlist admits. Any refused addition refuses the request with RuleEnvNotAllowed, naming
// each variable. Commands run as the helper's own uid, so PATH entries must be owned by it
// or by root (the root helper: by root only).
func (s *Server) commandEnv(env map[string]string, workspace, shell string) ([]string, *helperv1.Denied) {
	add := env
	callerPath, hasPath := env[CallerPathKey]
	if hasPath {
		add = maps.Clone(env)
		delete(add, CallerPathKey)
	}
	path := s.cfg.Path
	if hasPath {
		path = execrun.MergePath(s.cfg.Path, callerPath, workspace, os.Geteuid())
	}
	out, err := execrun.BuildEnv(execrun.Base{Path: path, Home: s.cfg.Home, User: s.cfg.User, Shell: shell, Allow: s.cfg.EnvAllow}, add)
	if err != nil {
		return nil, &helperv1.Denied{Rule: RuleEnvNotAllowed, Reason: err.Error()}
	}
	return out, nil
}
