// Package version reports the build's version string.
package version

// Version is the release version, set at link time with
// -ldflags "-X github.com/s-code-dev/s-code/internal/version.Version=v1.2.3"; "dev" otherwise.
var Version = "dev"
