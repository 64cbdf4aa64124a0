// Package safety is ShellSafety: the one verdict function that judges every shell command
// S-Code is asked to run, in the client and again in each helper.
package safety
