package tools

// Core returns the core tool set (sent by default), with apply_patch showing edit format f.
func Core(f EditFormat) []Tool {
	out := []Tool{updatePlanTool, listDirTool, globTool_, grepTool_, readFileTool, ApplyPatchTool(f), execCommandTool, undoTurnTool}
	return append(out, gitTools...)
}
