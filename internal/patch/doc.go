// Package patch decodes apply_patch requests strictly and applies their edits to file bytes:
// line edits, exact text edits, the strict "*** Begin Patch" subset and whole content.
package patch
