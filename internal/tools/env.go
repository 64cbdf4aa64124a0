package tools

import (
	"sync"

	"github.com/s-code-dev/s-code/internal/gitsafe"
	"github.com/s-code-dev/s-code/internal/permission"
	"github.com/s-code-dev/s-code/internal/wsfs"
)

// Env is what a tool call is given: the capabilities of one session. A tool can only do what
// its Env hands it (a nil Executor means exec_command refuses; a nil Editor means
// apply_patch and undo_turn refuse).
type Env struct {
	// Root is the workspace, opened once as a directory handle.
	Root *wsfs.Root
	// Git configures the git inspection tools (zero: gitsafe's defaults).
	Git gitsafe.Options
	// Session holds the state a session keeps between calls (the plan).
	Session *Session
	// Exec runs commands through the user helper; nil refuses exec_command.
	Exec Executor
	// Edit applies apply_patch's batches and undo_turn's undos through the user helper,
	// which decides and records them; nil refuses both.
	Edit Editor
	// Approver asks a person to approve an operation; nil means nobody can be asked.
	Approver Approver
	// Mode is the session's permission mode; the zero value (unset) refuses every command
	// and edit.
	Mode permission.Mode
	// Home is the user's home directory, for ShellSafety's context.
	Home string
}

// Session is the state one session keeps between tool calls. It is safe for concurrent use.
type Session struct {
	mu   sync.Mutex // guards plan
	plan Plan
}

// Plan returns a copy of the session's current plan.
func (s *Session) Plan() Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.plan
	p.Steps = append([]Step(nil), s.plan.Steps...)
	return p
}

func (s *Session) setPlan(p Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plan = p
}
