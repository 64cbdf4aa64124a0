// Command s-code-roothelper is the S-Code root helper: it runs commands as root for the callers
// its root-owned policy names. All behaviour lives in internal/daemon; this file only wires the
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
	return exitStatus(daemon.RunRoot(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func exitStatus(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, daemon.ErrUsage):
		fmt.Fprintf(os.Stderr, "s-code-roothelper: %v\n", err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "s-code-roothelper: %v\n", err)
	return 1
}
