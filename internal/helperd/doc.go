// Package helperd is the helper service both daemons serve: it authorizes every call from
// the kernel's peer credentials, judges each command again with ShellSafety in its own
// context, records it in the audit log, and runs what is allowed.
package helperd
