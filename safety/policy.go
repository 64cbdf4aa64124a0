package safety

// Policy is a set of extra rules loaded from TOML. (Filled in by the ShellSafety engine.)
type Policy struct{}
