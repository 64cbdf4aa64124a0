// Package launch is the sandbox launcher: it confines its own process to a sandbox profile
// (read-only bind mounts of the protected paths in a private mount namespace, no_new_privs,
// Landlock and seccomp on Linux; Seatbelt on macOS) and then execs the command.
// Only the s-code-sandbox binary links it; the s-code client must not.
package launch
