package sandbox

import (
	"errors"
	"os"
)

// SandboxExec is the absolute path of macOS's Seatbelt front end; it is never looked up on
// PATH.
const SandboxExec = "/usr/bin/sandbox-exec"

// ProbeFeatures returns the confinement features of this macOS machine: whether
// /usr/bin/sandbox-exec exists.
func ProbeFeatures() Features {
	f := Features{OS: "darwin"}
	if fi, err := os.Stat(SandboxExec); err == nil && fi.Mode().IsRegular() {
		f.Seatbelt = true
	}
	f.Problem = f.problem()
	return f
}

// ProcessConfined fails with errors.ErrUnsupported on macOS: Seatbelt state of another
// process is not readable without cgo. The macOS profile limits Unix-socket connections to
// the writable roots, so a sandboxed command cannot reach a helper's socket.
func ProcessConfined(pid int) (bool, error) { return false, errors.ErrUnsupported }
