// Package credhandle parses and resolves credential handles: the names (env:, keyring:,
// systemd:, file:) a host process definition holds in place of secret values.
package credhandle
