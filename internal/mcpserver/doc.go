// Package mcpserver is S-Code's agent-facing MCP server (`s-code mcp`): the tools of
// internal/tools over stdio on the official Go SDK, tool search for deferred tools, and
// approvals by MCP elicitation.
package mcpserver
