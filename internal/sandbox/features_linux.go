package sandbox

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ProbeFeatures returns the confinement features of the running kernel. It asks the kernel
// for the Landlock ABI version (landlock_create_ruleset with LANDLOCK_CREATE_RULESET_VERSION)
// and whether seccomp is built in (prctl PR_GET_SECCOMP); it changes nothing.
func ProbeFeatures() Features {
	f := Features{OS: "linux"}
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno == 0 && int(abi) > 0 {
		f.LandlockABI = int(abi)
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil || !errors.Is(err, unix.EINVAL) {
		f.Seccomp = true
	}
	if os.Getenv(PretendNoLandlockEnv) == "1" {
		f.LandlockABI = 0
	}
	f.Problem = f.problem()
	return f
}
