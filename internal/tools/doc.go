// Package tools is the one registry of S-Code's tools (typed input and output, JSON schema,
// read-only flag), shared by the CLI verbs, the MCP server and later Code Mode.
package tools
