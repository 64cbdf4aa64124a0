// Package hostdef holds the user's host process definitions (MCP stdio servers, hooks,
// background terminals), their permission preview cards, and the digests a person confirmed.
package hostdef
