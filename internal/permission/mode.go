package permission

import "fmt"

// Mode is the permission mode a person chose for a session. The zero value is unset, and
// an unset mode refuses everything (Decide): a caller that forgot to choose gets nothing.
type Mode int

// The modes, in order of how much they approve without asking.
const (
	// ModeUnset is no mode: Decide refuses every plan (rule mode.unset).
	ModeUnset Mode = iota
	// Manual: every operation that is not allow needs a person's approval.
	Manual
	// AcceptEdits: file changes that policy allows (inside the workspace, not protected
	// paths) are approved without asking; commands behave as in Manual.
	AcceptEdits
	// Workspace: also approves, without asking, commands that run sandboxed (confined),
	// without network, and that write only inside the workspace.
	Workspace
)

// Modes lists the modes a person may choose, in order.
var Modes = []Mode{Manual, AcceptEdits, Workspace}

// String returns "manual", "accept-edits", "workspace", or "unset".
func (m Mode) String() string {
	switch m {
	case Manual:
		return "manual"
	case AcceptEdits:
		return "accept-edits"
	case Workspace:
		return "workspace"
	}
	return "unset"
}

// ParseMode returns the mode named by s ("manual", "accept-edits" or "workspace"), or an
// error naming the bad value.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if s == m.String() {
			return m, nil
		}
	}
	return ModeUnset, fmt.Errorf("unknown mode %q (want manual, accept-edits or workspace)", s)
}

// MarshalText encodes the mode as its String form.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText decodes a mode name; "unset" decodes to ModeUnset, anything else unknown
// is an error.
func (m *Mode) UnmarshalText(b []byte) error {
	if string(b) == "unset" {
		*m = ModeUnset
		return nil
	}
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}
