// Package redact removes secrets from text for the audit log and captured output.
package redact
