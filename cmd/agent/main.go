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
	return cli.Main(ctx, os.Args[1:], cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}
