// Package gitsafe runs host git on a workspace's repository so that nothing the repository
// (or the caller's environment) configures can start a program, and provides the read-only
// Git tools (status, diff, log, show, blame) with structured, size-capped results.
package gitsafe
