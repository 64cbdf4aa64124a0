package codemode

import (
	"fmt"
	"time"
)

// Budgets bound one program. A zero field takes its default (DefaultBudgets); a negative
// field is refused by New.
type Budgets struct {
	// Time is the program's wall time, child calls included (default 30 s). The engine is
	// interrupted when it ends and the child call in flight sees its context cancelled.
	Time time.Duration
	// Calls is the number of child calls allowed (default 200).
	Calls int
	// ChildBytes is the total size, in bytes of JSON, of the child calls' results
	// (default 16 MiB). The call that passes it fails and the program stops.
	ChildBytes int64
	// ResultBytes is the size, in bytes of JSON, of the returned value (default 1 MiB).
	ResultBytes int64
	// Memory is how far the Go heap may grow above its size when the program started, in
	// bytes (default 256 MiB), and the largest string or array one built-in call may make
	// (Memory/4). See the package's Memory budget note in runner.go for what it holds.
	Memory int64
	// OnStuck, when set, is called once (from another goroutine) when a program stopped by a
	// budget has not returned StuckGrace later: it is inside a native built-in that the engine
	// cannot interrupt (a loop over a huge sparse array, a deeply nested JSON.stringify), still
	// using CPU and memory. Nothing can stop that goroutine but the end of the process, so the
	// caller should end it (s-code mcp ends the session). Nil: the goroutine runs on.
	OnStuck func(error)
}

// StuckGrace is how long a stopped program may take to return before OnStuck is called.
const StuckGrace = time.Second

// DefaultBudgets are the budgets of issue 15.
var DefaultBudgets = Budgets{Time: 30 * time.Second, Calls: 200, ChildBytes: 16 << 20, ResultBytes: 1 << 20, Memory: 256 << 20}

func (b Budgets) withDefaults() (Budgets, error) {
	if b.Time < 0 || b.Calls < 0 || b.ChildBytes < 0 || b.ResultBytes < 0 || b.Memory < 0 {
		return b, fmt.Errorf("codemode: negative budget %+v", b)
	}
	d := DefaultBudgets
	if b.Time == 0 {
		b.Time = d.Time
	}
	if b.Calls == 0 {
		b.Calls = d.Calls
	}
	if b.ChildBytes == 0 {
		b.ChildBytes = d.ChildBytes
	}
	if b.ResultBytes == 0 {
		b.ResultBytes = d.ResultBytes
	}
	if b.Memory == 0 {
		b.Memory = d.Memory
	}
	return b, nil
}

// The error codes of a stopped program (tools.Error.Code).
const (
	CodeProgram      = "program_error"   // a syntax error or an uncaught exception
	CodeTimeBudget   = "time_budget"     // Budgets.Time ran out
	CodeCallBudget   = "call_budget"     // more child calls than Budgets.Calls
	CodeBytesBudget  = "bytes_budget"    // child results over Budgets.ChildBytes
	CodeResultBudget = "result_budget"   // the returned value over Budgets.ResultBytes
	CodeMemory       = "memory_budget"   // the heap grew past Budgets.Memory, or one built-in call asked for too much
	CodeResult       = "result_not_json" // the returned value has no JSON form
)
