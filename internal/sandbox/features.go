package sandbox

import (
	"fmt"
	"strings"

	"github.com/s-code-dev/s-code/safety"
)

// Features is what the kernel offers for confining a command, as found by ProbeFeatures.
type Features struct {
	// OS is the operating system ("linux", "darwin", …).
	OS string `json:"os"`
	// LandlockABI is the Landlock ABI version of the running Linux kernel; 0 means no
	// Landlock (not built, or not enabled at boot). Source: landlock_create_ruleset(2) with
	// LANDLOCK_CREATE_RULESET_VERSION.
	LandlockABI int `json:"landlock_abi"`
	// Seccomp reports whether the kernel accepts seccomp filters (prctl PR_GET_SECCOMP).
	Seccomp bool `json:"seccomp"`
	// Seatbelt reports whether /usr/bin/sandbox-exec exists (macOS).
	Seatbelt bool `json:"seatbelt"`
	// Problem says why commands cannot be confined here; empty when they can.
	Problem string `json:"problem,omitempty"`
}

// Confines reports whether the launcher can confine a command on this machine: Landlock and
// seccomp on Linux, Seatbelt on macOS.
func (f Features) Confines() bool { return f.Problem == "" }

// Describe returns one line naming the kernel features found, e.g. "Landlock ABI 7
// (filesystem, TCP, IPC scoping), seccomp".
func (f Features) Describe() string {
	switch f.OS {
	case "linux":
		var parts []string
		if f.LandlockABI > 0 {
			what := []string{"filesystem"}
			if f.LandlockABI >= 4 {
				what = append(what, "TCP")
			}
			if f.LandlockABI >= 6 {
				what = append(what, "IPC scoping")
			}
			if f.LandlockABI >= 9 {
				what = append(what, "Unix sockets")
			}
			if f.LandlockABI >= 10 {
				what = append(what, "UDP")
			}
			parts = append(parts, fmt.Sprintf("Landlock ABI %d (%s)", f.LandlockABI, strings.Join(what, ", ")))
		} else {
			parts = append(parts, "no Landlock")
		}
		if f.Seccomp {
			parts = append(parts, "seccomp")
		} else {
			parts = append(parts, "no seccomp")
		}
		return strings.Join(parts, ", ")
	case "darwin":
		if f.Seatbelt {
			return "Seatbelt (/usr/bin/sandbox-exec)"
		}
		return "no Seatbelt (/usr/bin/sandbox-exec missing)"
	}
	return "no sandbox support on " + f.OS
}

// problem returns why f cannot confine a command, or "".
func (f Features) problem() string {
	switch f.OS {
	case "linux":
		switch {
		case f.LandlockABI < 1:
			return "the kernel has no Landlock (not built, or not enabled with lsm= at boot), so file access cannot be confined; a person must approve each command"
		case !f.Seccomp:
			return "the kernel has no seccomp, so sockets and escape-prone system calls cannot be refused; a person must approve each command"
		}
		return ""
	case "darwin":
		if !f.Seatbelt {
			return "/usr/bin/sandbox-exec is missing, so the command cannot be confined; a person must approve each command"
		}
		return ""
	}
	return "this operating system has no sandbox launcher; a person must approve each command"
}

// RuleUnconfined is the rule id of the finding GateVerdict adds when the machine cannot
// confine commands.
const RuleUnconfined = "sandbox.unconfined"

// GateVerdict returns v, made at least ask when f cannot confine commands: a command never
// runs silently without a sandbox. The added finding names RuleUnconfined and the reason.
func GateVerdict(v safety.Verdict, command string, f Features) safety.Verdict {
	if f.Confines() {
		return v
	}
	out := safety.Verdict{Decision: v.Decision.Stricter(safety.Ask), Findings: append([]safety.Finding(nil), v.Findings...)}
	out.Findings = append(out.Findings, safety.Finding{
		Rule: RuleUnconfined, Decision: safety.Ask, Command: command,
		Message: "this command would run without an OS sandbox: " + f.Problem,
	})
	return out
}

// PretendNoLandlockEnv names a variable that, set to "1", makes ProbeFeatures and the
// launcher act as on a kernel without Landlock. Tests use it to check that such a machine
// asks before running anything; it can only take confinement away from a launch that a
// person approved to run unconfined (Profile.AllowUnconfined), never add permission.
const PretendNoLandlockEnv = "S_CODE_SANDBOX_PRETEND_NO_LANDLOCK"

// ConfinedStatus reports whether a process with no_new_privs set to nnp and filters seccomp
// filters looks confined by the sandbox launcher: no_new_privs set and at least two filters
// (the launcher installs two); neither can be undone by the process or its children. Any
// other process in that state reads as confined too, so a check built on it fails closed.
func ConfinedStatus(nnp bool, filters int) bool { return nnp && filters >= 2 }
