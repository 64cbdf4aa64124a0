package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/s-code-dev/s-code/internal/daemon"
)

// userhelperMain is s-code-userhelper inside the test binary: s-code sandbox -- CMD runs
// commands through a real user helper, which runs them through this binary's launcher.
func userhelperMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := daemon.RunUser(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, daemon.ErrUsage):
		fmt.Fprintf(os.Stderr, "s-code-userhelper: %v\n", err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "s-code-userhelper: %v\n", err)
	return 1
}

// cmdWaitSock waits (10 s at most) until something accepts connections on a Unix socket:
// `waitsock PATH`.
func cmdWaitSock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitsock PATH")
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("unix", path)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no listener on %s after 10s: %v", path, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
