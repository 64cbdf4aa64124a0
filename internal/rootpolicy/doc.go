// Package rootpolicy loads the root helper's policy file: who may call it, its limits and
// timeouts, and its extra ShellSafety rules, from a root-owned TOML file.
package rootpolicy
