package helperd

import (
	"slices"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
)

// withSpec returns r with what the command will really get: the resolved cwd and workspace,
// its complete environment (sorted; the audit log redacts secret values) and its network
// setting. The start and exit records carry these, the request record what was asked.
func withSpec(r audit.Record, spec execrun.Spec) audit.Record {
	r.Cwd, r.Workspace = spec.Dir, spec.Workspace
	r.Env = slices.Sorted(slices.Values(spec.Env))
	r.Network = audit.NetworkNone
	if spec.Network {
		r.Network = audit.NetworkAllowed
	}
	return r
}
