// Command s-code-roothelper is the S-Code root helper: it runs commands as root for the callers
// its root-owned policy names. All behaviour lives in internal/daemon; this file only wires the
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
	return daemon.ExitStatus("s-code-roothelper", daemon.RunRoot(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr)
}
