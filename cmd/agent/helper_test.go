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
	"github.com/s-code-dev/s-code/internal/sandbox/launch"
)

// userhelperMain is s-code-userhelper inside the test binary, so scripts can start a real
// user helper (`exec s-code-userhelper --listen $WORK/h.sock &helper&`). Only the test
// binary links the daemon; deps_test.go keeps it out of s-code itself.
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

// sandboxMain is s-code-sandbox inside the test binary: the user helper started by the
// scripts finds it next to its executable and runs every command through it. Only the test
// binary links the launcher.
func sandboxMain() int {
	return launch.ExitStatus(launch.Run(os.Args[1:], os.Stderr), os.Stderr)
}

// roothelperMain is s-code-roothelper inside the test binary.
func roothelperMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := daemon.RunRoot(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, daemon.ErrUsage):
		fmt.Fprintf(os.Stderr, "s-code-roothelper: %v\n", err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "s-code-roothelper: %v\n", err)
	return 1
}

// cmdWaitSock waits up to 10 seconds until a Unix socket accepts connections:
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

// cmdDeafSock listens on a Unix socket and closes every connection it accepts without a
// word, as a socket unit whose service fails to start does: `deafsock PATH`. The listener
// lasts until the script ends.
func cmdDeafSock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: deafsock PATH")
	}
	l, err := net.Listen("unix", ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Defer(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// cmdWaitFile waits up to 10 seconds until a file exists: `waitfile PATH`.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not appear within 10s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
