//go:build !linux && !darwin

package sandbox

import "runtime"

// ProbeFeatures returns the features of a system without a sandbox launcher: none, with the
// reason in Problem.
func ProbeFeatures() Features {
	f := Features{OS: runtime.GOOS}
	f.Problem = f.problem()
	return f
}
