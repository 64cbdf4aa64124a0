// Package workspace is the one answer to "where is the workspace" (Resolve), "is this path
// inside it" (Within) and "may this directory be a workspace at all" (Validate), shared by
// every verb of the client, the MCP server and both helpers.
package workspace
