// Command s-code-userhelper is the S-Code user helper: it runs the commands s-code sends it,
// for its own user only. All behaviour lives in internal/daemon; this file only wires the
// process.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/s-code-dev/s-code/internal/daemon"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return daemon.ExitStatus("s-code-userhelper", daemon.RunUser(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr)
}
