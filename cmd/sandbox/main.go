// Command s-code-sandbox is the sandbox launcher: the user helper (and s-code sandbox)
// starts it for each command with the sandbox profile on its command line; it confines its
// own process to that profile (no_new_privs, Landlock and seccomp on Linux; Seatbelt on
// macOS) and then execs the command.
//
// It is a binary of its own, beside the three of DESIGN.md, for two reasons. A process can
// only confine itself (Landlock and seccomp apply to the calling thread and what it execs),
// so the confinement must happen in a process that does nothing else before execve: not in
// the long-running helper, whose other commands must not inherit one command's rules, and
// not in a fork of a Go process, where only exec is safe after fork. And the s-code client
// must not link the launcher (DESIGN.md); a separate main keeps the Landlock and seccomp code
// out of it, which cmd/agent's dependency test checks.
//
// Usage: s-code-sandbox --profile-json JSON -- COMMAND [ARG...]
package main

import (
	"os"

	"github.com/s-code-dev/s-code/internal/sandbox/launch"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run confines the process and execs (or, as the init of the command's PID namespace, runs)
// the command; it returns the exit status: the command's own when the launcher ran it as its
// init, 126 when the command cannot be confined or run, 127 when it is not found, 2 for
// usage errors; 0 after -h or --help.
func run(args []string) int {
	return launch.ExitStatus(launch.Run(args, os.Stderr), os.Stderr)
}
