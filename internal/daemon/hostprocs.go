package daemon

import (
	"context"
	"os"

	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/credhandle"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/hostdef"
	"github.com/s-code-dev/s-code/internal/hostproc"
	processesv1 "github.com/s-code-dev/s-code/proto/scode/processes/v1"
)

// newHostProcs makes the user helper's host process supervisor, writing to alog, and
// registers its Processes service through cfg.Services. Definitions are read from the
// helper's user's configuration (hostdef.UserPath) at each start.
func newHostProcs(cfg *helperd.Config, alog *audit.Log, log *zap.Logger) *hostproc.Supervisor {
	sup := hostproc.New(hostproc.Config{
		Home:     cfg.Home,
		Getenv:   os.LookupEnv,
		Resolver: credhandle.FromEnvironment(),
		Audit:    func(r *audit.Record) error { return alog.Append(context.Background(), r, true) },
		Logger:   log.Named("hostproc"),
	})
	load := func() (*hostdef.Store, error) {
		p, err := hostdef.UserPath(os.Getenv)
		if err != nil {
			return nil, err
		}
		return hostdef.Load(p, os.Geteuid())
	}
	svc := hostproc.NewService(sup, load)
	cfg.Services = func(reg grpc.ServiceRegistrar) { processesv1.RegisterProcessesServer(reg, svc) }
	return sup
}
