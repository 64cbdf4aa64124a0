package helperd

import (
	"slices"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
)

// withSpec puts into r what the command will really get besides the plan (withPlan): its
// complete environment, sorted (the audit log redacts secret values). The request record
// keeps the requested additions; the start and exit records carry this.
func withSpec(r *audit.Record, spec execrun.Spec) {
	r.Env = slices.Sorted(slices.Values(spec.Env))
}
