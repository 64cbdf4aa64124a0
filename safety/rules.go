package safety

// A rule is one kind of finding: its stable id, the decision it carries by default, and the
// message that explains it. Every built-in rule id is listed in rules, so that the ids, their
// decisions and their wording live in one place. Policy rules add ids of the form
// "policy.<id>" (see policy.go).
type rule struct {
	decision Decision
	message  string
}

// retry is appended to the message of every deny rule: it tells a model that a variant will
// be judged the same.
const retry = " Rewording, quoting or wrapping this command will not change the verdict."

// rules maps each built-in rule id to its default decision and message. Some findings carry
// a more specific decision (for example a write is ask inside the workspace and deny outside);
// those use distinct ids below.
var rules = map[string]rule{
	// Parsing, fail-closed and budget.
	"parse.error":        {Ask, "The command is not valid shell syntax for the target shell, so it cannot be judged; fix the syntax (a person must approve it as it is)."},
	"parse.differential": {Deny, "The command contains characters that bash and the parser may read differently (control characters such as CR, a backslash-newline inside a word, invisible or bidirectional Unicode, invalid UTF-8); write the command in plain visible text." + retry},
	"parse.unknown-node": {Ask, "The command uses a shell construct this checker does not judge; a person must approve it."},
	"budget.exceeded":    {Deny, "The command is too large or too deeply nested to judge completely; split it into smaller commands." + retry},
	"internal.panic":     {Deny, "The checker failed on this command; it is refused. Split it into simpler commands."},

	// Dynamic and hidden code.
	"dynamic.command":         {Ask, "The program to run is only known when the command runs (a variable or command substitution in the command position); write the program name literally."},
	"dynamic.script":          {Ask, "The shell script or code to run is only known when the command runs; write the commands out literally."},
	"exec.workspace-code":     {Ask, "This runs a program or script from the workspace or a path, whose behaviour cannot be judged from the command line; a person must approve it."},
	"exec.interpreter-inline": {Ask, "This runs inline interpreter code, which this checker does not judge; a person must approve it."},
	"exec.shell-stdin":        {Ask, "This runs shell or interpreter code read from standard input; a person must approve it."},
	"exec.source":             {Ask, "This runs the commands of a file in the current shell; a person must approve it."},
	"exec.remote-package":     {Ask, "This downloads and runs a package (npx, uvx, pipx run and similar); a person must approve it."},
	"exec.tool-exec":          {Ask, "This tool option or script runs other programs (an exec feature of a tool that usually only reads); a person must approve it."},
	"unknown.command":         {Ask, "This program is not in the list of commands known to be safe; a person must approve it."},
	"function.shadow":         {Ask, "This defines a function or alias named like a command, so later uses of that name run something else; use a distinct name."},
	"function.forkbomb":       {Deny, "This defines a function that calls itself in a pipeline or in the background: a fork bomb that exhausts the machine." + retry},
	"background.job":          {Ask, "This starts a job that keeps running in the background after the command returns; a person must approve it."},

	// Writes (commands that write files) and redirections; the class decides the decision.
	"write.workspace":            {Ask, "This changes files inside the workspace; a person must approve the change."},
	"write.tmp":                  {Ask, "This changes files in a temporary directory outside the workspace; a person must approve it."},
	"write.dynamic-path":         {Ask, "This changes a path only known when the command runs; write the path literally."},
	"write.protected":            {Deny, "This changes a protected path: Git hooks or config and agent or editor control files run code or change the agent's rules, and the paths a policy lists in protected_paths are kept from the agent; edit these files by hand." + retry},
	"write.persistence":          {Deny, "This changes a file that runs code at login, on a schedule or with privileges (shell startup files, SSH keys, autostart, cron, sudoers, PAM, loader preload); such persistence is never allowed from here." + retry},
	"write.system":               {Deny, "This changes a system directory; in a user session only the workspace may change. Admin work goes through `s-code run --root`." + retry},
	"write.outside-workspace":    {Deny, "This changes files outside the workspace; only files inside the workspace may change. Work inside the workspace instead." + retry},
	"redirect.workspace":         {Ask, "This redirection writes a file inside the workspace; a person must approve the change."},
	"redirect.tmp":               {Ask, "This redirection writes to a temporary directory outside the workspace; a person must approve it."},
	"redirect.dynamic-path":      {Ask, "This redirection writes to a path only known when the command runs; write the path literally."},
	"write.scode-state":          {Deny, "This changes S-Code's own configuration, state, audit log or runtime directory (what decides and records the agent's commands); that is never allowed from here, in any mode or with any approval: change it by hand." + retry},
	"redirect.scode-state":       {Deny, "This redirection writes to S-Code's own configuration, state, audit log or runtime directory; that is never allowed from here: change it by hand." + retry},
	"scode.approval":             {Deny, "This runs s-code approvals: approving or denying a pending request is a person's decision, made outside the agent's session." + retry},
	"redirect.protected":         {Deny, "This redirection writes to a protected path (Git hooks or config, agent or editor control files, or a path a policy lists in protected_paths); edit these files by hand." + retry},
	"redirect.persistence":       {Deny, "This redirection writes to a file that runs code at login, on a schedule or with privileges; such persistence is never allowed from here." + retry},
	"redirect.system":            {Deny, "This redirection writes to a system file; in a user session only the workspace may change. Admin work goes through `s-code run --root`." + retry},
	"redirect.outside-workspace": {Deny, "This redirection writes outside the workspace; write inside the workspace instead." + retry},
	"root.change":                {Ask, "This changes system state as root; a person must approve it."},

	// Credentials and network.
	"credential.read":        {Ask, "This reads a credential store (SSH keys, cloud or registry tokens, password files); a person must approve it."},
	"exfil.credential":       {Deny, "This sends a credential file over the network." + retry},
	"network.access":         {Ask, "This uses the network; a person must approve it."},
	"network.pipe-to-shell":  {Deny, "This runs downloaded or decoded content as code without anyone reading it. Download the file into the workspace, read it, then run it as a separate command." + retry},
	"network.reverse-shell":  {Deny, "This connects a shell or program to a network socket (nc -e, socat exec:, /dev/tcp), which gives a remote party control." + retry},
	"package.install":        {Ask, "This installs or changes packages; a person must approve it."},
	"privilege.escalation":   {Deny, "This tries to gain root privileges from a user session. Admin work goes through `s-code run --root`, which a person approves." + retry},
	"privilege.user-account": {Deny, "This changes user accounts, passwords or group memberships that grant administrator rights." + retry},
	"privilege.setuid":       {Deny, "This sets a setuid or setgid bit as root, which lets any user run the file with raised privileges." + retry},

	// Destruction and devices.
	"destructive.rm-root":      {Deny, "This deletes the root directory or a system directory, which destroys the system; delete specific paths inside the workspace instead." + retry},
	"destructive.rm-home":      {Deny, "This deletes the home directory or all of its contents; delete specific paths inside the workspace instead." + retry},
	"destructive.rm-workspace": {Deny, "This deletes the whole workspace; delete specific files or build directories inside it instead." + retry},
	"destructive.rm-dynamic":   {Deny, "This recursively deletes everything under a directory only known when the command runs; if the variable is empty it deletes from the root. Write the directory literally." + retry},
	"destructive.mv-root":      {Deny, "This moves the root directory, a system directory, the home directory or the workspace away." + retry},
	"destructive.chmod-root":   {Deny, "This recursively changes permissions or owners of the root directory, a system directory, the home directory or the workspace." + retry},
	"destructive.find-delete":  {Deny, "This deletes every file under the root directory, a system directory or the home directory." + retry},
	"destructive.overwrite":    {Deny, "This truncates or shreds system files." + retry},
	"device.write":             {Deny, "This writes to a disk device or kernel memory, which destroys data." + retry},
	"device.format":            {Deny, "This formats, partitions or erases a disk." + retry},

	// System state.
	"system.power":      {Deny, "This shuts down or reboots the machine." + retry},
	"system.kill-all":   {Deny, "This signals every process the user can reach (kill -1, killall5)." + retry},
	"system.kill":       {Ask, "This signals or stops processes; a person must approve it."},
	"system.state":      {Deny, "This changes system-wide state (mounts, kernel parameters, firewall, network, time, services); in a user session that is not allowed. Admin work goes through `s-code run --root`." + retry},
	"persistence.cron":  {Deny, "This installs or edits scheduled jobs (cron, at, systemd timers or user services), which run code later without anyone watching." + retry},
	"env.injection":     {Deny, "This sets an environment variable that makes programs load or run other code (loader preload, shell startup, interpreter options, pager, editor, Git hooks)." + retry},
	"env.ifs":           {Ask, "This changes IFS, which changes how the shell splits words; a person must approve it."},
	"env.dynamic":       {Ask, "This exports or declares a variable whose name is only known when the command runs; write it literally."},
	"git.config-exec":   {Deny, "This sets a Git configuration key that runs a program (pager, editor, hooks path or hook commands, ssh command, diff or merge drivers, filters, trailer, mail or tunnel commands, aliases starting with !, credential helpers; the keys of safety.GitProgramKeys); configure Git by hand." + retry},
	"git.exec-path":     {Deny, "This points Git at another directory of Git programs, which runs arbitrary code." + retry},
	"git.repo-override": {Ask, "This points Git at another repository, work tree or namespace; a person must approve it."},
	"git.pager":         {Ask, "This runs Git's pager, a program chosen by configuration; a person must approve it."},
	"git.state":         {Ask, "This changes the Git repository, its branches, its remotes or the work tree; a person must approve it."},
	"tool.config-exec":  {Deny, "This changes a tool's configuration so that later runs of the tool execute another program or load code (compiler, shell, Node options, toolchain); configure tools by hand." + retry},
	"tool.config-set":   {Ask, "This changes a tool's configuration; a person must approve it."},
	"git.config-set":    {Ask, "This changes Git configuration; a person must approve it."},
}

// ruleDecision returns the default decision of a built-in rule id, or Deny for an id that is
// not listed (so that a typo never reads as permission).
func ruleDecision(id string) Decision {
	if r, ok := rules[id]; ok {
		return r.decision
	}
	return Deny
}
