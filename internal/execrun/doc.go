// Package execrun starts one shell command for a helper: a fresh environment, a new process
// group, streamed output, and a kill of the whole group on timeout, cancel or exit.
package execrun
