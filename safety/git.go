package safety

import "strings"

// gitGlobal lists git's global options that take an argument.
var gitGlobalArg = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true, "--config-env": true, "--super-prefix": true, "--exec-path": false, "--list-cmds": true, "--attr-source": true}

// hGit judges git: global options (-C, -c, --config-env, --exec-path, --git-dir,
// --work-tree, -p) and then the subcommand.
func hGit(a *analyzer, argv []arg, c *callInfo) eff {
	cwd := a.cwd
	defer func() { a.cwd = cwd }()
	workTree, wtSet := "", false // --work-tree: the directory Git changes ("" unknown)
	i := 1
	for i < len(argv) {
		s := argv[i].s
		if !strings.HasPrefix(s, "-") {
			break
		}
		name, val, hasEq := strings.Cut(s, "=")
		var v arg
		if strings.HasPrefix(s, "-c") && len(s) > 2 {
			name, v, hasEq = "-c", subArg(argv[i], s[2:]), true
		} else if hasEq {
			v = subArg(argv[i], val)
		} else if gitGlobalArg[name] && i+1 < len(argv) {
			i++
			v = argv[i]
		}
		i++
		switch name {
		case "-C":
			if q, ok := a.resolve(v); ok && !strings.Contains(q, dyn) {
				a.cwd = q
			} else {
				a.cwd = ""
			}
		case "-c":
			k, val, _ := strings.Cut(v.s, "=")
			if strings.HasPrefix(v.s, dyn) || gitExecSetting(k, val, v.dyn) {
				a.find(c, "git.config-exec", Deny, "git -c "+display(k)+gitKeyWhy(k, val, v.dyn))
			} else if gitPagerOn(k, val) {
				a.find(c, "git.pager", Ask, "git -c "+display(k)+" turns the pager on")
			}
		case "--config-env":
			k, _, _ := strings.Cut(v.s, "=")
			if v.dyn || gitExecKey(k) {
				a.find(c, "git.config-exec", Deny, "git --config-env "+display(k)+gitKeyWhy(k, "", true))
			} else {
				a.find(c, "git.config-set", Ask, "git --config-env reads a configuration value from the environment")
			}
		case "--exec-path":
			if hasEq {
				a.find(c, "git.exec-path", Deny, "")
			}
		case "--git-dir", "--work-tree", "--namespace":
			a.find(c, "git.repo-override", Ask, "")
			if name == "--work-tree" {
				workTree, wtSet = "", true
				if q, ok := a.resolve(v); ok && !strings.Contains(q, dyn) {
					workTree = q
				}
			}
		case "-p", "--paginate":
			a.find(c, "git.pager", Ask, "")
		case "--version", "--help", "-h", "--html-path", "--man-path", "--info-path":
			return 0
		}
	}
	if i >= len(argv) {
		return 0
	}
	if w := a.ctx.Workspace; w != "" && a.ctx.Role != RoleRoot && (a.cwd == "" || !within(a.cwd, w)) {
		a.find(c, "git.repo-override", Ask, "Git runs in a directory outside the workspace, whose repository configuration can run programs")
	}
	sub := argv[i]
	if sub.dyn {
		a.find(c, "dynamic.command", Ask, "The git subcommand is only known at run time")
		return 0
	}
	if !wtSet {
		workTree = a.cwd
	}
	if gitChangesWorkTree[sub.s] && a.ctx.Role != RoleRoot && a.ctx.Workspace != "" && !within(workTree, a.ctx.Workspace) {
		// git -C ~ reset --hard, git --work-tree=/home/dev checkout -- .bashrc: the files
		// changed are those of a work tree outside the workspace.
		d := workTree
		if d == "" {
			d = dyn
		}
		a.writeTarget(arg{s: d + "/" + dyn, dyn: true}, "write", c.pos, c.end)
	}
	args := argv[i:]
	for _, x := range args[1:] {
		if strings.HasPrefix(x.s, "--upload-pack") || strings.HasPrefix(x.s, "--receive-pack") || (x.s == "--exec" || strings.HasPrefix(x.s, "--exec=")) && sub.s != "rebase" {
			a.find(c, "git.config-exec", Deny, "git "+sub.s+" "+x.s+" runs a program")
			return 0
		}
		if (sub.s == "clone" || sub.s == "init") && (x.s == "--template" || strings.HasPrefix(x.s, "--template=")) {
			// The template's hooks are copied into the repository; clone runs post-checkout.
			a.find(c, "git.config-exec", Deny, "git "+sub.s+" --template installs the hooks of a template directory")
			return 0
		}
	}
	switch sub.s {
	case "status", "blame", "annotate", "shortlog", "describe", "rev-parse", "rev-list",
		"ls-files", "ls-tree", "cat-file", "whatchanged", "show-ref", "for-each-ref",
		"name-rev", "merge-base", "count-objects", "cherry", "diff-tree", "diff-files",
		"diff-index", "check-ignore", "check-attr", "check-ref-format", "var", "verify-commit",
		"verify-tag", "fsck", "help", "version", "show-branch", "range-diff", "grep",
		"log", "show", "diff", "hash-object", "get-tar-commit-id",
		"check-mailmap", "column", "interpret-trailers", "patch-id", "stripspace", "verify-pack",
		"show-index", "mktree", "fsck-objects", "merge-tree":
		return a.gitReadOnly(args, c)
	case "branch":
		return a.gitList(args, c, []string{"-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--contains", "--no-contains", "--merged", "--no-merged", "--show-current", "--points-at", "--sort", "--format", "--column", "--no-column", "--color", "--no-color", "-i", "--ignore-case", "--abbrev", "--no-abbrev"})
	case "tag":
		return a.gitList(args, c, []string{"-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "--column", "--no-column", "--color", "-i", "--ignore-case", "-v", "--verify"})
	case "remote":
		if len(args) == 1 || args[1].s == "-v" || args[1].s == "--verbose" || args[1].s == "get-url" || args[1].s == "show" && len(args) > 2 && args[2].s == "-n" {
			return 0
		}
	case "stash":
		if len(args) > 1 && (args[1].s == "list" || args[1].s == "show") {
			return 0
		}
	case "worktree":
		if len(args) > 1 && args[1].s == "list" {
			return 0
		}
		if len(args) > 2 && args[1].s == "add" {
			for _, x := range args[2:] {
				if !strings.HasPrefix(x.s, "-") {
					a.writeTarget(x, "write", c.pos, c.end)
					break
				}
			}
		}
	case "reflog":
		if len(args) == 1 || args[1].s == "show" || strings.HasPrefix(args[1].s, "-") && args[1].s != "--delete" || !isGitReflogVerb(args[1].s) {
			return 0
		}
	case "notes":
		if len(args) == 1 || args[1].s == "list" || args[1].s == "show" {
			return 0
		}
	case "submodule":
		if len(args) == 1 || args[1].s == "status" || args[1].s == "summary" {
			return 0
		}
		if args[1].s == "foreach" {
			rest := args[2:]
			for len(rest) > 0 && strings.HasPrefix(rest[0].s, "-") {
				rest = rest[1:]
			}
			a.find(c, "git.state", Ask, "git submodule foreach runs a command in every submodule")
			if len(rest) > 0 {
				return a.nested(joinArgs(rest), POSIX, c)
			}
			return 0
		}
	case "config":
		return a.gitConfig(args, c)
	case "bisect":
		if len(args) > 2 && args[1].s == "run" {
			a.find(c, "git.state", Ask, "")
			return a.judge(args[2:], c)
		}
	case "rebase":
		for j, x := range args {
			if (x.s == "-x" || x.s == "--exec") && j+1 < len(args) {
				a.nested(args[j+1], POSIX, c)
			} else if strings.HasPrefix(x.s, "--exec=") {
				a.nested(subArg(x, x.s[7:]), POSIX, c)
			}
		}
	case "clone":
		var ops []arg
		for j := 1; j < len(args); j++ {
			s := args[j].s
			if strings.HasPrefix(s, "-") {
				switch s {
				case "-b", "--branch", "-o", "--origin", "--depth", "--reference", "--separate-git-dir", "-j", "--jobs", "--filter", "--template", "-u", "--upload-pack", "-c", "--config", "--shallow-since", "--shallow-exclude", "--bundle-uri", "--server-option", "--ref-format":
					if s == "-c" || s == "--config" || s == "-u" || s == "--upload-pack" || s == "--template" {
						if j+1 < len(args) {
							k, val, _ := strings.Cut(args[j+1].s, "=")
							if s == "-u" || s == "--upload-pack" || s == "--template" || gitExecSetting(k, val, args[j+1].dyn) {
								a.find(c, "git.config-exec", Deny, "git clone "+s)
							}
						}
					}
					j++
				}
				continue
			}
			ops = append(ops, args[j])
		}
		a.find(c, "git.state", Ask, "git clone downloads a repository")
		if len(ops) >= 2 {
			a.writeTarget(ops[1], "write", c.pos, c.end)
		} else if len(ops) == 1 {
			a.writeTarget(lit(a.cwdOrDyn()+"/"+dyn), "write", c.pos, c.end)
		}
		return effNetwork
	case "difftool", "filter-branch":
		a.find(c, "exec.tool-exec", Ask, "git "+sub.s+" runs programs")
		for j := 1; j < len(args); j++ {
			s := args[j].s
			if j+1 < len(args) && (s == "-x" || s == "--extcmd" || strings.HasSuffix(s, "-filter") && strings.HasPrefix(s, "--") || s == "--setup") {
				a.nested(args[j+1], POSIX, c)
				j++
			} else if strings.HasPrefix(s, "--extcmd=") {
				a.nested(subArg(args[j], s[len("--extcmd="):]), POSIX, c)
			}
		}
		return 0
	case "send-email":
		a.find(c, "network.access", Ask, "git send-email sends mail")
		for j := 1; j < len(args); j++ {
			s := args[j].s
			name, val, eq := strings.Cut(s, "=")
			switch name {
			case "--sendmail-cmd", "--to-cmd", "--cc-cmd", "--header-cmd", "--smtp-server":
				v := subArg(args[j], val)
				if !eq && j+1 < len(args) {
					j++
					v = args[j]
				}
				if name == "--smtp-server" && !strings.HasPrefix(v.s, "/") {
					continue
				}
				a.nested(v, POSIX, c)
			}
		}
		return effNetwork
	case "mergetool", "instaweb", "filter-repo", "daemon", "web--browse", "credential", "credential-store", "credential-cache", "upload-pack", "receive-pack", "shell", "fast-import", "archimport", "cvsimport", "svn", "p4", "request-pull":
		a.find(c, "exec.tool-exec", Ask, "git "+sub.s+" runs configured programs or talks to other systems")
		return 0
	case "bundle":
		// git bundle create FILE …: the bundle file is written; list-heads and verify read.
		for j := 1; j < len(args); j++ {
			if args[j].s == "create" {
				for _, x := range args[j+1:] {
					if !strings.HasPrefix(x.s, "-") {
						if x.s != "-" {
							a.writeTarget(x, "write", c.pos, c.end)
						}
						return 0
					}
				}
			}
		}
		return 0
	case "archive", "format-patch", "bugreport", "diagnose":
		for _, x := range args {
			if x.s == "--stdout" {
				return 0
			}
		}
		for j, x := range args {
			if (x.s == "-o" || x.s == "--output" || x.s == "--output-directory") && j+1 < len(args) {
				a.writeTarget(args[j+1], "write", c.pos, c.end)
				return 0
			}
			if strings.HasPrefix(x.s, "--output=") || strings.HasPrefix(x.s, "--output-directory=") {
				_, v, _ := strings.Cut(x.s, "=")
				a.writeTarget(subArg(x, v), "write", c.pos, c.end)
				return 0
			}
		}
		if sub.s == "archive" {
			return 0
		}
		a.writeTarget(lit(a.cwdOrDyn()+"/"+dyn), "write", c.pos, c.end)
		return 0
	case "apply", "am":
		strip := 1
		for _, x := range args[1:] {
			if strings.HasPrefix(x.s, "-p") && len(x.s) > 2 {
				strip = atoiOr(x.s[2:], 1)
			}
		}
		a.patchTargets(c, strip)
	case "add", "commit", "push", "pull", "fetch", "merge", "reset", "checkout", "switch",
		"restore", "cherry-pick", "revert", "clean", "gc", "init", "mv", "rm",
		"prune", "repack", "maintenance", "sparse-checkout", "lfs", "update-index", "update-ref",
		"symbolic-ref", "replace", "pack-refs", "commit-tree", "read-tree",
		"write-tree", "checkout-index", "merge-file", "mktag", "fast-export", "ls-remote",
		"citool", "gui", "gitk", "rerere", "subtree", "stage", "unstage":
	default:
		a.find(c, "unknown.command", Ask, "git "+sub.s+" is not a known Git command (it may be an alias or an external program)")
		return 0
	}
	a.find(c, "git.state", Ask, "")
	switch sub.s {
	case "push", "pull", "fetch", "ls-remote", "clone":
		return effNetwork
	}
	return 0
}

// isGitReflogVerb reports whether s is a reflog subcommand that changes the reflog.
// gitChangesWorkTree lists Git subcommands that change, create or delete files of the work
// tree.
var gitChangesWorkTree = map[string]bool{
	"reset": true, "checkout": true, "switch": true, "restore": true, "clean": true,
	"merge": true, "pull": true, "rebase": true, "cherry-pick": true, "revert": true,
	"stash": true, "am": true, "apply": true, "rm": true, "mv": true, "read-tree": true,
	"checkout-index": true, "sparse-checkout": true, "bisect": true, "submodule": true,
	"merge-file": true, "lfs": true,
}

func isGitReflogVerb(s string) bool { return s == "expire" || s == "delete" || s == "drop" }

// gitReadOnly judges read-only git subcommands: --output writes; --ext-diff and
// --open-files-in-pager run programs.
func (a *analyzer) gitReadOnly(args []arg, c *callInfo) eff {
	for j, x := range args[1:] {
		s := x.s
		if s == "--" {
			break
		}
		switch {
		case strings.HasPrefix(s, "--output="):
			a.writeTarget(subArg(x, s[len("--output="):]), "write", c.pos, c.end)
		case s == "--output" && j+2 < len(args):
			a.writeTarget(args[j+2], "write", c.pos, c.end)
		case s == "--ext-diff", strings.HasPrefix(s, "--open-files-in-pager"), s == "-O" && args[0].s == "grep", strings.HasPrefix(s, "-O") && args[0].s == "grep":
			a.find(c, "exec.tool-exec", Ask, "This git option runs an external program")
		case strings.HasPrefix(s, "--upload-pack") || strings.HasPrefix(s, "--exec="):
			a.find(c, "git.config-exec", Deny, "")
		}
	}
	return 0
}

// gitList judges git branch and git tag: listing is read-only, anything else changes refs.
func (a *analyzer) gitList(args []arg, c *callInfo, listOpts []string) eff {
	listing := true
	hasList := false
	for _, x := range args[1:] {
		s := x.s
		if strings.HasPrefix(s, "-") {
			name, _, _ := strings.Cut(s, "=")
			ok := false
			for _, l := range listOpts {
				if name == l {
					ok = true
				}
			}
			if name == "-l" || name == "--list" {
				hasList = true
			}
			if !ok {
				listing = false
			}
			continue
		}
		if !hasList {
			listing = false
		}
	}
	if listing {
		return 0
	}
	a.find(c, "git.state", Ask, "")
	return 0
}

// gitConfig judges git config: reading is allowed; setting a key that runs programs is
// denied; other sets ask; --file writes another file.
func (a *analyzer) gitConfig(args []arg, c *callInfo) eff {
	var ops []arg
	get, verb := false, false
	for j := 1; j < len(args); j++ {
		s := args[j].s
		switch {
		case s == "--get" || s == "--get-all" || s == "--get-regexp" || s == "--get-urlmatch" || s == "-l" || s == "--list" || s == "--show-origin" && len(args) == 3 || s == "--get-color" || s == "--get-colorbool":
			get = true
		case s == "-f" || s == "--file" || s == "--blob" || s == "--default" || s == "--type" || s == "--comment":
			if (s == "-f" || s == "--file") && j+1 < len(args) {
				a.writeTarget(args[j+1], "write", c.pos, c.end)
			}
			j++
		case strings.HasPrefix(s, "--file="):
			a.writeTarget(subArg(args[j], s[len("--file="):]), "write", c.pos, c.end)
		case s == "-e" || s == "--edit":
			a.find(c, "git.config-exec", Deny, "git config --edit opens an editor on the configuration")
			return 0
		case strings.HasPrefix(s, "-"):
		default:
			ops = append(ops, args[j])
		}
	}
	if len(ops) > 0 {
		switch ops[0].s {
		case "get", "list":
			return 0
		case "set", "unset", "rename-section", "remove-section", "edit":
			if ops[0].s == "edit" {
				a.find(c, "git.config-exec", Deny, "git config edit opens an editor on the configuration")
				return 0
			}
			if ops[0].s == "unset" || ops[0].s == "remove-section" {
				a.find(c, "git.config-set", Ask, "")
				return 0
			}
			ops = ops[1:]
			verb = true
		}
	}
	if hasOpt(args, "--unset", "--unset-all", "--remove-section") {
		a.find(c, "git.config-set", Ask, "")
		return 0
	}
	if get || !verb && len(ops) <= 1 && !hasOpt(args, "--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section") {
		return 0
	}
	val, valDyn := "", false
	if len(ops) > 1 {
		val, valDyn = ops[1].s, ops[1].dyn
	}
	if len(ops) > 0 && (ops[0].dyn || gitExecSetting(ops[0].s, val, valDyn)) {
		a.find(c, "git.config-exec", Deny, "git config "+display(ops[0].s)+gitKeyWhy(ops[0].s, val, valDyn))
		return 0
	}
	a.find(c, "git.config-set", Ask, "")
	return 0
}

func hasOpt(args []arg, names ...string) bool {
	for _, x := range args {
		for _, n := range names {
			if x.s == n {
				return true
			}
		}
	}
	return false
}
