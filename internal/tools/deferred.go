package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/sandbox"
)

// SandboxProfileInput is sandbox_profile's arguments.
type SandboxProfileInput struct {
	Network bool `json:"network,omitempty" jsonschema:"show the profile a command with approved network access would get"`
}

func sandboxProfile(_ context.Context, env *Env, in SandboxProfileInput) (sandbox.Card, error) {
	p, err := sandbox.ForWorkspace(os.Getenv, env.Root.Path(), in.Network)
	if err != nil {
		return sandbox.Card{}, &Error{Code: "sandbox_failed", Message: err.Error()}
	}
	return sandbox.NewCard(p, sandboxFeatures(), nil), nil
}

// AuditQueryInput is audit_query's arguments.
type AuditQueryInput struct {
	RequestID string `json:"request_id,omitempty" jsonschema:"exact request id (exec_command returns it)"`
	Text      string `json:"text,omitempty" jsonschema:"case-insensitive substring of command, cwd, workspace, reason or request id"`
	Rule      string `json:"rule,omitempty" jsonschema:"a rule id among the findings"`
	Decision  string `json:"decision,omitempty" jsonschema:"allow, ask or deny"`
	Last      int    `json:"last,omitempty" jsonschema:"the most recent records returned at most (default 20, at most 200)"`
}

// AuditQueryResult is audit_query's answer.
type AuditQueryResult struct {
	Records   []*audit.Record `json:"records"`
	Matched   int             `json:"matched"`
	Truncated bool            `json:"truncated"` // more matched than returned (the oldest are left out)
}

func auditQuery(_ context.Context, _ *Env, in AuditQueryInput) (AuditQueryResult, error) {
	dir, err := audit.DefaultDir("user")
	if err != nil {
		return AuditQueryResult{}, &Error{Code: "unavailable", Message: err.Error()}
	}
	last := clampMax(in.Last, 20, 200)
	f := audit.Filter{RequestID: in.RequestID, Text: in.Text, Rule: in.Rule, Decision: in.Decision}
	res := AuditQueryResult{Records: []*audit.Record{}}
	err = audit.Read(dir, f, func(r *audit.Record) error {
		res.Matched++
		res.Records = append(res.Records, r)
		if len(res.Records) > last {
			res.Records = res.Records[1:]
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return AuditQueryResult{}, &Error{Code: "audit_failed", Message: fmt.Sprintf("read the user helper's audit log: %v", err)}
	}
	res.Truncated = res.Matched > len(res.Records)
	return res, nil
}

// Deferred returns the specialized tools left out of the default list and found through
// tool search.
func Deferred() []Tool {
	return []Tool{
		Must(Spec[SandboxProfileInput, sandbox.Card]{
			Name: "sandbox_profile",
			Description: "Show the sandbox profile card of the workspace: writable and read-only roots, denied and protected paths, network, " +
				"private dependency caches, environment changes and the kernel features that confine commands.",
			ReadOnly: true, Deferred: true, Call: sandboxProfile,
		}),
		Must(Spec[AuditQueryInput, AuditQueryResult]{
			Name: "audit_query",
			Description: "Query the user helper's audit log: the records of commands (start, exit, denial) by request id, text, rule id or decision, " +
				"most recent last.",
			ReadOnly: true, Deferred: true, Call: auditQuery,
		}),
	}
}
