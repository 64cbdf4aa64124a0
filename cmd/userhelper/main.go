// Command s-code-userhelper is the S-Code user helper: it runs the commands s-code sends it,
// for its own user only. All behaviour lives in internal/daemon; this file only wires the
// process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
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
	return exitStatus(daemon.RunUser(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func exitStatus(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, daemon.ErrUsage):
		fmt.Fprintf(os.Stderr, "s-code-userhelper: %v\n", err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "s-code-userhelper: %v\n", err)
	return 1
}
