package helperd

import (
	"os/exec"
	"strings"

	"go.uber.org/zap"

	"github.com/s-code-dev/s-code/internal/execrun"
)

// postRun runs the runner's post-run check of cmd when the runner has one
// (execrun.AfterExit: the sandbox moves aside what the command left that Git would read as
// configuration or indirection). What it moved aside goes into the exit record
// (x.base.Quarantined) and, when out is not nil, onto the command's stderr; why the check
// was incomplete goes into the exit record's reason (x.postRunErr).
func (s *Server) postRun(out *sender, x *execution, cmd *exec.Cmd) {
	ae, ok := s.cfg.Runner.(execrun.AfterExit)
	if !ok {
		return
	}
	q, err := ae.AfterExit(cmd)
	x.base.Quarantined = q
	if err != nil {
		x.log.Error("post-run check", zap.Error(err))
		x.postRunErr = "post-run check: " + err.Error()
	}
	if out != nil && len(q) > 0 {
		out.output(execrun.Stderr, []byte("s-code: the sandbox moved aside what the command wrote that Git, an editor or an agent would read as configuration (each renamed to NAME.s-code-quarantine-TAG): "+strings.Join(q, ", ")+"\n"))
	}
}
