package permission

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/s-code-dev/s-code/safety"
)

// Kind is the class of an operation.
type Kind string

// The operation kinds.
const (
	// KindExec is a shell command.
	KindExec Kind = "exec"
	// KindEdit is a batch of file edits (apply_patch).
	KindEdit Kind = "edit"
)

// Sandbox is the sandbox profile summary of a plan: what the command may touch.
type Sandbox struct {
	// Sandboxed reports whether the command runs in the sandbox at all (the root helper's
	// commands do not).
	Sandboxed bool `json:"sandboxed"`
	// Confined reports whether the kernel can confine the command; when false Reason says
	// why.
	Confined bool   `json:"confined"`
	Reason   string `json:"reason,omitempty"`
	// WritableRoots may be read and written (the workspace, the private temporary and cache
	// directories, and any extra writable path of this one run).
	WritableRoots []string `json:"writable_roots"`
	// ReadOnlyRoots may be read and executed.
	ReadOnlyRoots []string `json:"read_only_roots"`
	// DeniedPaths may be neither read nor written.
	DeniedPaths []string `json:"denied_paths"`
	// ProtectedPaths stay read-only inside the writable roots.
	ProtectedPaths []string `json:"protected_paths"`
	// Protection is how protected paths stay read-only on Linux.
	Protection string `json:"protection,omitempty"`
	// Network reports whether the command may open Internet sockets.
	Network bool `json:"network"`
}

// Plan is the helper's projection of one operation: exactly what it will run, in its own
// context. Its digest is what a person approves. Every field is part of the digest; the
// helper fills them all, in the same way at Plan and at Exec.
type Plan struct {
	Kind Kind `json:"kind"`
	// Role is the helper's context: "user" or "root".
	Role string `json:"role"`
	// Workspace and Cwd are the resolved, validated directories.
	Workspace string `json:"workspace"`
	Cwd       string `json:"cwd"`
	// Command is the shell command text (KindExec) and Shell its shell ("bash" or "sh").
	Command string `json:"command,omitempty"`
	Shell   string `json:"shell,omitempty"`
	// Targets are the paths a KindEdit batch changes, in batch order.
	Targets []string `json:"targets,omitempty"`
	// PatchSHA256 is the SHA-256 (hex) of a KindEdit batch's request bytes, and Turn the
	// turn id it is recorded under: what is approved is the edit itself.
	PatchSHA256 string `json:"patch_sha256,omitempty"`
	Turn        string `json:"turn,omitempty"`
	Mode        Mode   `json:"mode"`
	// Verdict is the helper's verdict (ShellSafety in its own context and policy for
	// KindExec, the file tools' path rules for KindEdit).
	Verdict safety.Verdict `json:"verdict"`
	Sandbox Sandbox        `json:"sandbox"`
	// Env is the complete environment the command gets, sorted NAME=value entries.
	Env []string `json:"env"`
	// Path is the PATH the command gets.
	Path string `json:"path"`
	// Network reports whether the command runs with network access: the operation asked
	// for it, or its verdict says it uses the network (then it needs approval).
	Network bool `json:"network"`
	// ExtraWritable are the resolved paths outside the workspace writable for this one run.
	ExtraWritable []string `json:"extra_writable"`
	// TimeoutMs is the run time limit in milliseconds (0: none).
	TimeoutMs uint32 `json:"timeout_ms"`
}

// Canonical returns the plan's canonical JSON: encoding/json of the Plan with its fields in
// declaration order, nil slices as [], no HTML escaping and no insignificant whitespace.
// Two helpers computing the same plan produce the same bytes.
func (p Plan) Canonical() []byte {
	c := p
	for _, s := range []*[]string{&c.Targets, &c.Env, &c.ExtraWritable, &c.Sandbox.WritableRoots, &c.Sandbox.ReadOnlyRoots, &c.Sandbox.DeniedPaths, &c.Sandbox.ProtectedPaths} {
		if *s == nil {
			*s = []string{}
		}
	}
	if len(c.Targets) == 0 {
		c.Targets = nil // omitempty
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		// Plan holds only strings, bools, numbers and text marshalers that never fail.
		panic("permission: encode plan: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Digest returns the SHA-256 of the plan's canonical JSON, in lower-case hex (64 digits).
func (p Plan) Digest() string {
	sum := sha256.Sum256(p.Canonical())
	return hex.EncodeToString(sum[:])
}
