package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

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

// ProcessConfined reports whether the process pid looks confined by the sandbox launcher:
// no_new_privs set and at least two seccomp filters (the launcher installs two), as
// /proc/PID/status shows; neither can be undone by the process or its children. A helper
// calls it on a peer's pid to refuse requests from inside a sandbox: before Landlock ABI 9 a
// sandboxed command can connect to any Unix socket it can name, including the helper's.
// A process that is not ours but runs under no_new_privs with two or more filters also
// reads as confined (refusing it fails closed).
func ProcessConfined(pid int) (bool, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	if pid == os.Getpid() {
		// In a PID namespace whose /proc is the host's, the own pid names another process.
		path = "/proc/self/status"
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read process status: %w", err)
	}
	var nnp, filters int
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			continue
		}
		switch k {
		case "NoNewPrivs":
			nnp = n
		case "Seccomp_filters":
			filters = n
		}
	}
	return ConfinedStatus(nnp == 1, filters), nil
}
