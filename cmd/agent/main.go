// Command s-code is the S-Code client: it judges, runs (through a helper), reads, patches
// and inspects. All behaviour lives in internal/cli; this file only wires the process.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/s-code-dev/s-code/internal/cli"
)

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first SIGINT or SIGTERM cancels ctx so that a command can stop cleanly; after it,
	// the default action comes back, so a second signal ends a step that does not watch ctx.
	// (s-code run registers its own handler and forwards signals to the remote command.)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return cli.Main(ctx, os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}
