package safety

import (
	"path"
	"sort"
	"strings"
)

// pathClass is where a path written to lies, which decides the decision of the write.
type pathClass int

const (
	pcNull        pathClass = iota // /dev/null, /dev/stdout …: nothing is written
	pcWorkspace                    // inside the workspace
	pcProtected                    // a protected path inside the workspace (or a policy protected path)
	pcTmp                          // a temporary directory
	pcPersistence                  // startup files, SSH, autostart, cron, sudoers, PAM …
	pcSystem                       // a system directory
	pcDevice                       // a disk device or kernel memory
	pcDevTCP                       // bash's /dev/tcp and /dev/udp
	pcOutside                      // anywhere else outside the workspace
	pcDynamic                      // only known at run time
	pcScodeState                   // S-Code's own configuration, state, audit log or runtime directory
)

var classSuffix = [...]string{
	pcWorkspace:   "workspace",
	pcProtected:   "protected",
	pcTmp:         "tmp",
	pcPersistence: "persistence",
	pcSystem:      "system",
	pcOutside:     "outside-workspace",
	pcDynamic:     "dynamic-path",
	pcScodeState:  "scode-state",
}

// resolve returns the absolute, cleaned path an argument names, with dyn marking run-time
// components, or false when the path cannot be located at all (it starts with a run-time
// value, or a run-time component is followed by "..").
func (a *analyzer) resolve(x arg) (string, bool) {
	s := x.s
	if s == "" {
		return "", false
	}
	if strings.HasPrefix(s, dyn) {
		return "", false
	}
	if i := strings.Index(s, dyn); i >= 0 {
		// Keep the literal directory prefix; the rest is one run-time component.
		j := strings.LastIndexByte(s[:i], '/')
		if j < 0 {
			s = dyn
		} else {
			rest := s[j+1:]
			if strings.Contains(rest, "/..") || strings.HasPrefix(rest, "..") {
				return "", false
			}
			s = s[:j+1] + dyn
		}
	}
	if !strings.HasPrefix(s, "/") {
		if a.cwd == "" {
			return "", false
		}
		s = a.cwd + "/" + s
	}
	return path.Clean(s), true
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if dir == "" {
		return false
	}
	if dir == "/" {
		return true
	}
	return p == dir || (strings.HasPrefix(p, dir) && len(p) > len(dir) && p[len(dir)] == '/')
}

// hasWild reports whether a path component may stand for other names (a glob or run-time part).
func hasWild(c string) bool { return strings.ContainsAny(c, "*?[\x00") }

// compMatch reports whether path component c (possibly a glob, or dyn) may name want
// (lower case).
func compMatch(c, want string) bool {
	if !hasWild(c) {
		return strings.EqualFold(c, want)
	}
	if strings.Contains(c, dyn) {
		return true
	}
	lc := strings.ToLower(c)
	if strings.HasPrefix(want, ".") && !strings.HasPrefix(lc, ".") {
		return false // a glob matches a leading dot only explicitly (dotglob is off)
	}
	ok, err := path.Match(lc, want)
	return ok || err != nil
}

// underPattern reports whether the components of rel (a relative path) may start with the
// components of pat.
func underPattern(rel []string, pat []string) bool {
	if len(rel) < len(pat) {
		return false
	}
	for i, p := range pat {
		if !compMatch(rel[i], p) {
			return false
		}
	}
	return true
}

// protectedInWorkspace lists paths inside a workspace (at any depth) whose change runs code
// or changes an agent's rules: Git hooks and config, agent and editor control files.
var protectedInWorkspace = [][]string{
	{".claude"}, {".codex"}, {".gemini"}, {".cursor"}, {".cursorrules"}, {".windsurf"},
	{".windsurfrules"}, {".clinerules"}, {".vscode"}, {".idea"}, {".zed"}, {".mcp.json"},
	{".envrc"}, {".husky"}, {".devcontainer"}, {".fleet"}, {".continue"},
}

// ControlFileNames returns the names of the agent, editor and tool control files and
// directories that no tool may write inside a workspace, at any depth, compared
// case-insensitively (".claude", ".vscode", ".mcp.json", ".envrc", …): changing one makes
// an agent or editor run commands or trust a server (the CVE-2025-59536 and CVE-2025-54136
// class). Git's own metadata (.git) is handled apart. The file tools and the sandbox use
// this list too, so that the three layers protect the same names. It returns a new slice
// on every call.
func ControlFileNames() []string {
	names := make([]string, 0, len(protectedInWorkspace))
	for _, p := range protectedInWorkspace {
		names = append(names, p[0])
	}
	return names
}

// protectedRel reports whether a workspace-relative path is protected: an agent or editor
// control file at any depth, or inside a .git directory (also of submodules and
// worktrees) a hooks directory, a config or config.worktree file, or info/attributes.
func protectedRel(rel []string) bool {
	for i := range rel {
		if strings.Contains(rel[i], dyn) {
			return false // a run-time name: only asks (write.dynamic-path)
		}
		if compMatch(rel[i], ".git") {
			rest := rel[i+1:]
			if len(rest) == 0 && !hasWild(rel[i]) {
				return true // .git itself: a gitdir: file or a replaced directory redirects the repository
			}
			for j, r := range rest {
				if compMatch(r, "hooks") || j == len(rest)-1 && (compMatch(r, "config") || compMatch(r, "config.worktree")) {
					return true
				}
			}
			if underPattern(rest, []string{"info", "attributes"}) {
				return true
			}
		}
		for _, pat := range protectedInWorkspace {
			if underPattern(rel[i:], pat) {
				return true
			}
		}
	}
	return false
}

// homePersistence lists paths relative to a home directory that run code at login or on a
// schedule, or grant access (rc files, SSH, autostart, user services, Git config).
var homePersistence = [][]string{
	{".bashrc"}, {".bash_profile"}, {".bash_login"}, {".bash_logout"}, {".profile"},
	{".zshrc"}, {".zshenv"}, {".zprofile"}, {".zlogin"}, {".zlogout"}, {".kshrc"}, {".mkshrc"},
	{".cshrc"}, {".tcshrc"}, {".inputrc"}, {".xinitrc"}, {".xprofile"}, {".xsession"},
	{".pam_environment"}, {".config", "fish"}, {".ssh"}, {".config", "autostart"},
	{"library", "launchagents"}, {".config", "systemd"}, {".config", "environment.d"},
	{".gitconfig"}, {".config", "git"}, {".local", "bin"}, {"bin"}, {".npmrc"}, {".pypirc"},
	{".netrc"}, {".git-credentials"},
}

// systemPersistence lists system paths whose change grants privileges or runs code for
// every user or at boot. Writes are denied in every context.
var systemPersistence = [][]string{
	{"etc", "sudoers"}, {"etc", "sudoers.d"}, {"etc", "passwd"}, {"etc", "shadow"},
	{"etc", "group"}, {"etc", "gshadow"}, {"etc", "ld.so.preload"}, {"etc", "ld.so.conf"},
	{"etc", "ld.so.conf.d"}, {"etc", "pam.d"}, {"etc", "security"}, {"lib", "security"},
	{"lib64", "security"}, {"usr", "lib", "security"}, {"lib", "x86_64-linux-gnu", "security"},
	{"usr", "lib", "x86_64-linux-gnu", "security"}, {"lib", "aarch64-linux-gnu", "security"},
	{"etc", "crontab"}, {"etc", "cron.d"}, {"etc", "cron.daily"}, {"etc", "cron.hourly"},
	{"etc", "cron.weekly"}, {"etc", "cron.monthly"}, {"etc", "anacrontab"},
	{"var", "spool", "cron"}, {"var", "spool", "at"}, {"etc", "profile"}, {"etc", "profile.d"},
	{"etc", "bash.bashrc"}, {"etc", "bashrc"}, {"etc", "zsh"}, {"etc", "environment"},
	{"etc", "rc.local"}, {"etc", "xdg", "autostart"}, {"etc", "doas.conf"},
	{"etc", "polkit-1"}, {"root", ".ssh"}, {"root", ".bashrc"}, {"root", ".profile"},
	{"library", "launchdaemons"}, {"library", "launchagents"},
	{"etc", "udev", "rules.d"}, {"lib", "udev", "rules.d"}, {"usr", "lib", "udev", "rules.d"},
	{"proc", "sys", "kernel", "core_pattern"}, {"proc", "sys", "kernel", "modprobe"},
	{"proc", "sys", "kernel", "hotplug"}, {"proc", "sys", "fs", "binfmt_misc"},
	{"sys", "kernel", "uevent_helper"}, {"etc", "init.d"}, {"etc", "rc0.d"}, {"etc", "rc1.d"},
	{"etc", "rc2.d"}, {"etc", "rc3.d"}, {"etc", "rc4.d"}, {"etc", "rc5.d"}, {"etc", "rc6.d"},
	{"etc", "rcs.d"}, {"etc", "modules-load.d"}, {"etc", "modprobe.d"}, {"etc", "modules"},
	{"etc", "update-motd.d"}, {"etc", "apt", "apt.conf.d"}, {"etc", "bash_completion.d"},
	{"etc", "networkmanager", "dispatcher.d"}, {"etc", "x11", "xsession.d"}, {"etc", "skel"},
	{"etc", "paths"}, {"etc", "paths.d"}, {"etc", "systemd", "system"}, {"etc", "systemd", "user"}, {"lib", "systemd", "system"},
	{"usr", "lib", "systemd", "system"}, {"usr", "lib", "systemd", "user"},
	{"etc", "systemd", "system-generators"}, {"etc", "binfmt.d"}, {"etc", "initramfs-tools", "scripts"},
	{"lib", "systemd", "system-generators"}, {"usr", "lib", "systemd", "system-generators"},
	{"usr", "lib", "systemd", "user-generators"}, {"etc", "systemd", "user-generators"},
	{"etc", "environment.d"}, {"etc", "periodic"}, {"etc", "zshrc"}, {"etc", "zshenv"},
	{"etc", "zprofile"}, {"etc", "zlogin"}, {"etc", "fish"}, {"etc", "csh.cshrc"},
	{"etc", "csh.login"}, {"etc", "gitconfig"}, {"etc", "sudo.conf"}, {"etc", "logrotate.d"},
	{"etc", "logrotate.conf"}, {"usr", "share", "bash-completion"},
}

// systemRoots are the top-level directories of the operating system.
var systemRoots = map[string]bool{
	"etc": true, "usr": true, "bin": true, "sbin": true, "lib": true, "lib32": true,
	"lib64": true, "libx32": true, "boot": true, "var": true, "opt": true, "sys": true,
	"proc": true, "dev": true, "srv": true, "run": true, "root": true, "snap": true,
	"system": true, "library": true, "applications": true, "private": true, "nix": true,
	"home": true, "users": true, "mnt": true, "media": true, "lost+found": true,
}

// tmpDirs are directories for temporary files.
var tmpDirs = []string{"/tmp", "/var/tmp", "/private/tmp", "/dev/shm"}

// firstComps holds the first components of the home-relative patterns (credential stores and
// startup files), to skip the pattern loops for ordinary paths.
var firstComps = func() map[string]bool {
	m := map[string]bool{}
	for _, list := range [][][]string{credentialHome, homePersistence} {
		for _, p := range list {
			m[p[0]] = true
		}
	}
	return m
}()

// classify returns the class of an absolute cleaned path (from resolve).
func (a *analyzer) classify(p string) pathClass {
	if strings.HasPrefix(p, "/dev/") || p == "/dev" {
		return classifyDev(p)
	}
	// macOS: /etc, /var and /tmp are links into /private.
	for _, d := range []string{"/private/etc", "/private/var", "/private/tmp"} {
		if within(p, d) {
			p = p[len("/private"):]
			break
		}
	}
	comps := splitPath(p)
	if a.isScodeState(p, comps) {
		return pcScodeState
	}
	if a.policyProtected(p, comps) {
		return pcProtected
	}
	for _, pat := range systemPersistence {
		if underPattern(comps, pat) {
			return pcPersistence
		}
	}
	if home := a.ctx.Home; home != "" && within(p, home) && p != home {
		// Before the workspace: a workspace may be the home directory itself. A pattern
		// that holds the workspace (a workspace in ~/bin) does not apply to it.
		rel := splitPath(p[len(home):])
		if len(rel) > 0 && (hasWild(rel[0]) || firstComps[strings.ToLower(rel[0])]) {
			for _, pat := range homePersistence {
				if underPattern(rel, pat) && !within(a.ctx.Workspace, home+"/"+strings.Join(pat, "/")) {
					return pcPersistence
				}
			}
		}
	}
	if a.ctx.Workspace != "" && within(p, a.ctx.Workspace) && !anyDotDot(p) {
		if protectedRel(splitPath(p[len(a.ctx.Workspace):])) {
			return pcProtected
		}
		if strings.Contains(p, dyn) {
			return pcDynamic
		}
		return pcWorkspace
	}
	for _, t := range tmpDirs {
		if within(p, t) {
			return pcTmp
		}
	}
	// Any user's startup files and SSH directory, root's (/root, macOS /var/root) too.
	if len(comps) >= 3 && (comps[0] == "home" || comps[0] == "users") {
		for _, pat := range homePersistence {
			if underPattern(comps[2:], pat) {
				return pcPersistence
			}
		}
	}
	if rest, ok := rootHomeRel(comps); ok {
		for _, pat := range homePersistence {
			if underPattern(rest, pat) {
				return pcPersistence
			}
		}
	}
	if len(comps) > 1 && (comps[0] == "home" || comps[0] == "users" || comps[0] == "mnt" || comps[0] == "media") {
		return pcOutside
	}
	if len(comps) > 0 && compRoot(comps[0]) {
		return pcSystem
	}
	return pcOutside
}

// rootHomeRel returns the components of a path below root's home directory (/root, or
// /var/root on macOS), and whether it is below it.
func rootHomeRel(comps []string) ([]string, bool) {
	switch {
	case len(comps) >= 2 && comps[0] == "root":
		return comps[1:], true
	case len(comps) >= 3 && comps[0] == "var" && comps[1] == "root":
		return comps[2:], true
	}
	return nil, false
}

// compRoot reports whether a first path component may name a system root.
func compRoot(c string) bool {
	if !hasWild(c) {
		return systemRoots[strings.ToLower(c)]
	}
	return true
}

func anyDotDot(p string) bool { return strings.Contains(p, "/..") }

// splitPath splits an absolute or relative path into its non-empty components.
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// classifyDev classifies a path under /dev.
func classifyDev(p string) pathClass {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/full", "/dev/random", "/dev/urandom":
		return pcNull
	}
	if strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/dev/pts/") {
		return pcNull
	}
	if isDevTCP(p) {
		return pcDevTCP
	}
	name := strings.TrimPrefix(p, "/dev/")
	for _, d := range []string{"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "mapper/", "dm-", "md", "loop", "sr", "nbd", "zd", "mem", "kmem", "port", "block/", "root", "sg", "st", "nst", "bsg/", "rbd", "zram", "pmem", "ram", "mtd", "ubi", "cciss/", "rdsk", "dsk", "vg", "lvm/", "fd0"} {
		if strings.HasPrefix(name, d) {
			return pcDevice
		}
	}
	if hasWild(name) {
		return pcDevice
	}
	return pcSystem
}

// isDevTCP reports whether p is one of bash's network pseudo-files.
func isDevTCP(p string) bool {
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/")
}

// writeDecision returns the rule suffix and decision of a write to a path of class pc in
// this analyzer's context.
func (a *analyzer) writeDecision(pc pathClass) (string, Decision) {
	root := a.ctx.Role == RoleRoot
	switch pc {
	case pcNull:
		return "", Allow
	case pcWorkspace, pcTmp, pcDynamic:
		return classSuffix[pc], Ask
	case pcProtected, pcPersistence, pcScodeState:
		return classSuffix[pc], Deny
	case pcSystem, pcOutside:
		if root {
			return "", Ask
		}
		return classSuffix[pc], Deny
	}
	return "", Deny
}

// writeTarget judges a write to the path named by x; kind is "write" (a command writes it)
// or "redirect" (a shell redirection writes it). pos and end locate the finding.
func (a *analyzer) writeTarget(x arg, kind string, pos, end int) {
	if x.proc {
		return // >(cmd): the substitution itself is judged
	}
	p, ok := a.resolve(x)
	if !ok {
		a.add(kind+".dynamic-path", Ask, pos, end, "")
		return
	}
	for _, l := range sortedKeys(a.links) {
		if t := a.links[l]; within(p, l) {
			// The write goes through a link made earlier in this command.
			y := lit(t + p[len(l):])
			if strings.Contains(t, dyn) {
				y = arg{s: t, dyn: true}
			}
			links := a.links
			a.links = nil
			a.writeTarget(y, kind, pos, end)
			a.links = links
		}
	}
	pc := a.classify(p)
	switch pc {
	case pcNull:
		return
	case pcDevTCP:
		a.add("network.reverse-shell", Deny, pos, end, "Writing to "+p+" sends data over the network")
		return
	case pcDevice:
		a.add("device.write", Deny, pos, end, "Writing to "+p)
		return
	}
	suffix, d := a.writeDecision(pc)
	if suffix == "" {
		a.add("root.change", Ask, pos, end, a.writeVerb()+" "+display(p))
		return
	}
	detail := a.writeVerb() + " " + display(p)
	if pc == pcProtected && a.policyProtected(p, nil) {
		// Say which list protects it: the policy's, not the Git-hooks and control-file one.
		detail += ", a protected path of the policy (protected_paths)"
	}
	a.add(kind+"."+suffix, d, pos, end, detail)
}

// sortedKeys returns the keys of m in order (so that findings come in a fixed order).
func sortedKeys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeVerb names the kind of change the command being judged makes to the paths it
// writes, for finding details.
func (a *analyzer) writeVerb() string {
	switch a.verb {
	case "":
		return "Writing"
	}
	return a.verb
}

// display renders a path for a message.
func display(p string) string { return strings.ReplaceAll(p, dyn, "…") }

// critical returns a destructive rule id when deleting (or moving, or recursively changing)
// p destroys the system, the home directory or the workspace: the root, a system root or a
// directory right below one, the home directory or all of its entries, the workspace root or
// all of its entries, or an ancestor of any of these.
func (a *analyzer) critical(p string) string {
	comps := splitPath(p)
	if len(comps) == 0 {
		return "destructive.rm-root"
	}
	last := comps[len(comps)-1]
	everything := last == "*" || last == ".*" || last == "*.*"
	parent := "/" + strings.Join(comps[:len(comps)-1], "/")
	if everything {
		p = parent
		comps = comps[:len(comps)-1]
		if len(comps) == 0 {
			return "destructive.rm-root"
		}
	}
	if h := a.ctx.Home; h != "" && (p == h || within(h, p)) {
		return "destructive.rm-home"
	}
	if w := a.ctx.Workspace; w != "" && (p == w || within(w, p)) {
		return "destructive.rm-workspace"
	}
	if compRoot(comps[0]) && len(comps) <= 2 && !strings.Contains(p, dyn) {
		if len(comps) == 1 || criticalSecond(comps) {
			return "destructive.rm-root"
		}
	}
	if len(comps) == 1 && hasWild(comps[0]) {
		return "destructive.rm-root"
	}
	return ""
}

// criticalSecond reports whether a two-component system path is essential (/usr/bin,
// /var/lib, /etc/ssh …) rather than an ordinary subdirectory.
func criticalSecond(c []string) bool {
	switch c[0] {
	case "usr":
		switch c[1] {
		case "bin", "sbin", "lib", "lib64", "lib32", "libexec", "share", "include", "local":
			return true
		}
	case "var":
		switch c[1] {
		case "lib", "log", "spool", "cache", "db", "backups":
			return true
		}
	case "etc", "bin", "sbin", "lib", "lib64", "boot", "sys", "proc", "dev":
		return true
	case "home", "users":
		return true
	}
	return false
}

// credentialHome lists credential stores relative to a home directory.
var credentialHome = [][]string{
	{".ssh"}, {".aws"}, {".gnupg"}, {".netrc"}, {".config", "gh"}, {".kube"},
	{".docker", "config.json"}, {".git-credentials"}, {".npmrc"}, {".pypirc"},
	{".cargo", "credentials"}, {".cargo", "credentials.toml"}, {".config", "gcloud"},
	{".azure"}, {".password-store"}, {".vault-token"}, {".config", "hub"},
	{".terraform.d", "credentials.tfrc.json"}, {".local", "share", "keyrings"},
	{"library", "keychains"}, {".config", "op"}, {".pgpass"}, {".my.cnf"},
	{".config", "github-copilot"}, {".config", "git", "credentials"}, {".claude", ".credentials.json"}, {".bash_history"},
	{".zsh_history"}, {".python_history"}, {".mysql_history"}, {".psql_history"},
	{".node_repl_history"}, {".sqlite_history"}, {".histfile"}, {".local", "share", "fish", "fish_history"},
	// Browser profiles: saved passwords, their keys and session cookies.
	{".mozilla"}, {".config", "google-chrome"}, {".config", "chromium"},
	{".config", "bravesoftware"}, {".config", "microsoft-edge"}, {".config", "vivaldi"},
	{".thunderbird"}, {"library", "application support", "google", "chrome"},
	{"library", "application support", "firefox"}, {"library", "cookies"},
}

// credentialNames are file names of private keys and token files, wherever they are
// outside the workspace.
var credentialNames = map[string]bool{
	"id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true, "id_ecdsa_sk": true,
	"id_ed25519_sk": true, ".netrc": true, ".git-credentials": true, ".pgpass": true,
	"shadow": true, "gshadow": true, "authorized_keys": true,
}

// isCredential reports whether reading p may read a credential.
func (a *analyzer) isCredential(p string) bool {
	if a.policyCredential(p) {
		return true
	}
	for f := range a.credCopy {
		if within(p, f) {
			return true // cp ~/.ssh/id_rsa k; cat ~/.ssh/id_rsa > k
		}
	}
	if len(a.links) > 0 {
		// ln -s ~/.ssh/id_rsa k: reading k reads the key.
		links := a.links
		a.links = nil
		defer func() { a.links = links }()
		for l, t := range links {
			if within(p, l) && !strings.Contains(t, dyn) && a.isCredential(t+p[len(l):]) {
				return true
			}
		}
	}
	if home := a.ctx.Home; home != "" && (p == home || within(home, p)) {
		return true // the home directory (or a parent of it) holds every store
	}
	if home := a.ctx.Home; home != "" && within(p, home) && p != home && a.homeCredential(splitPath(p[len(home):])) {
		return true // also when the workspace is the home directory
	}
	if a.ctx.Workspace != "" && within(p, a.ctx.Workspace) {
		return false
	}
	comps := splitPath(p)
	if len(comps) == 0 {
		return false
	}
	for _, c := range comps {
		switch strings.ToLower(c) {
		case ".ssh", ".aws", ".gnupg", ".kube", ".password-store", ".azure":
			return true
		}
	}
	last := strings.ToLower(comps[len(comps)-1])
	if credentialNames[last] {
		return true
	}
	if comps[0] == "proc" && (last == "environ" || last == "mem") {
		return true // another process's environment or memory
	}
	switch path.Ext(last) {
	case ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore":
		return true
	}
	if len(comps) >= 2 && comps[0] == "etc" && (comps[1] == "shadow" || comps[1] == "gshadow" || comps[1] == "sudoers" || (comps[1] == "ssh" && (len(comps) == 2 || strings.HasSuffix(last, "_key")))) {
		return true
	}
	return false
}

// markCredCopy records that path p (a file or a directory) now holds credential content.
func (a *analyzer) markCredCopy(p string) {
	if strings.Contains(p, dyn) {
		return
	}
	if a.credCopy == nil {
		a.credCopy = map[string]bool{}
	}
	a.credCopy[p] = true
}

// homeCredential reports whether a home-relative path may read a credential store: a store,
// a directory holding one (~/.docker, ~/.config: reading it recursively reads the store), or
// a glob at the top of the home directory (~/.*).
func (a *analyzer) homeCredential(rel []string) bool {
	if len(rel) > 0 && !hasWild(rel[0]) && !firstComps[strings.ToLower(rel[0])] {
		return false // no store starts with this name
	}
	for _, pat := range credentialHome {
		if underPattern(rel, pat) {
			return true
		}
		if len(rel) > 0 && len(rel) < len(pat) && underPattern(pat[:len(rel)], rel) {
			return true
		}
	}
	return len(rel) == 1 && hasWild(rel[0])
}

// credentialArg returns the credential path an argument (an operand, an option value after
// '=', or a curl-style @file) names, and whether it names one.
func (a *analyzer) credentialArg(x arg) (string, bool) {
	s := x.s
	if !strings.Contains(s, "/") && !strings.HasPrefix(s, "~") && !strings.HasPrefix(s, ".") {
		if !credentialNames[strings.ToLower(s)] || a.cwd == "" {
			return "", false
		}
	}
	if strings.HasPrefix(s, "-") {
		i := strings.IndexByte(s, '=')
		if i < 0 {
			return "", false
		}
		s = s[i+1:]
	}
	s = strings.TrimPrefix(s, "@")
	s = strings.TrimPrefix(s, "<")
	s = strings.TrimPrefix(s, "file://")
	if i := strings.Index(s, "=@"); i >= 0 {
		s = s[i+2:]
	}
	y := x
	y.s = s
	p, ok := a.resolve(y)
	if !ok || !a.isCredential(p) {
		return "", false
	}
	return p, true
}
