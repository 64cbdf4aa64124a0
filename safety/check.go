package safety

// Check judges command in ctx and returns its verdict. It is pure, deterministic, safe for
// concurrent use and never panics.
func Check(command string, ctx Context) Verdict {
	// Placeholder until the engine lands: fail closed.
	return Verdict{Decision: Ask, Findings: []Finding{{Rule: "engine.missing", Decision: Ask, Command: command, Message: "the ShellSafety engine is not built yet; a person must approve every command"}}}
}
