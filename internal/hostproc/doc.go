// Package hostproc supervises host processes in the user helper: it starts confirmed
// definitions outside the sandbox, contains each with its children (session, process group,
// cgroup v2), captures their output redacted, audits every start, stop and exit, and stops
// them when their session or the helper ends.
package hostproc
