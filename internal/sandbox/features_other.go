//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"runtime"
)

// ProbeFeatures returns the features of a system without a sandbox launcher: none, with the
// reason in Problem.
func ProbeFeatures() Features {
	f := Features{OS: runtime.GOOS}
	f.Problem = f.problem()
	return f
}

// ProcessConfined fails with errors.ErrUnsupported: this system has no sandbox launcher.
func ProcessConfined(pid int) (bool, error) { return false, errors.ErrUnsupported }
