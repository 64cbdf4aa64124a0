package safety

// Role is the context a command is judged in.
type Role int

const (
	// RoleUser is a desktop agent session working in a workspace (the user helper).
	RoleUser Role = iota
	// RoleRoot is admin work through the root helper.
	RoleRoot
)

// String returns "user" or "root".
func (r Role) String() string {
	if r == RoleRoot {
		return "root"
	}
	return "user"
}

// Dialect is the shell that will run the command; Check parses in that dialect.
type Dialect int

const (
	// Bash is GNU bash (the default).
	Bash Dialect = iota
	// POSIX is a POSIX sh such as dash.
	POSIX
)

// String returns "bash" or "sh".
func (d Dialect) String() string {
	if d == POSIX {
		return "sh"
	}
	return "bash"
}

// Context is everything Check knows about where a command will run. Check reads nothing
// else: no file system, no environment. Paths are absolute and cleaned; an empty Cwd means
// Workspace.
type Context struct {
	Role      Role
	Workspace string // absolute workspace root, e.g. /home/dev/proj
	Cwd       string // absolute working directory the command starts in
	Home      string // absolute home directory of the user the command runs as
	Dialect   Dialect
	Policy    *Policy // extra rules; nil means none
}
