package gitsafe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Rule ids of repository refusals (DESIGN.md "rule id").
const (
	RuleConfigExec    = "git.config-exec"       // a setting could start a program
	RuleConfigSyntax  = "git.config-syntax"     // a configuration file gitsafe cannot read as git would
	RuleForeignOwner  = "git.foreign-owner"     // owned by another uid (CVE-2022-24765)
	RuleOutside       = "git.outside-workspace" // a gitdir, commondir or alternate outside the workspace
	RuleNotRepository = "git.not-repository"    // no repository at the workspace root
)

// ErrNotRepository is wrapped by the *LayoutError of a workspace with no .git at its root.
// gitsafe never looks for a repository above the workspace or in it as a bare repository.
var ErrNotRepository = errors.New("not a git repository (no .git at the workspace root)")

// Finding is one setting that makes gitsafe refuse a repository.
type Finding struct {
	Rule   string `json:"rule"`   // RuleConfigExec
	Key    string `json:"key"`    // e.g. "core.fsmonitor", "filter.lfs.clean"
	Value  string `json:"value"`  // the setting's value as git reads it
	File   string `json:"file"`   // the configuration file that holds it
	Line   int    `json:"line"`   // 1-based line in File
	Reason string `json:"reason"` // why it is refused
}

// ConfigError is a repository refused because of its configuration: every Finding, in the
// order git would read them.
type ConfigError struct {
	Findings []Finding
}

// Error names the first finding's rule, key, file and line, and how many more there are.
func (e *ConfigError) Error() string {
	f := e.Findings[0]
	msg := fmt.Sprintf("refused: %s: %s in %s:%d: %s", f.Rule, f.Key, f.File, f.Line, f.Reason)
	if n := len(e.Findings) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// LayoutError is a repository refused for where its parts are or who owns them.
type LayoutError struct {
	Rule   string // RuleForeignOwner, RuleOutside, RuleNotRepository, RuleConfigSyntax
	Path   string
	Reason string
	Err    error // the underlying error, if any
}

// Error names the rule, the path and the reason.
func (e *LayoutError) Error() string {
	msg := fmt.Sprintf("refused: %s: %s: %s", e.Rule, e.Path, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error (ErrNotRepository, a stat error …), or nil.
func (e *LayoutError) Unwrap() error { return e.Err }

// Options configures a Repo. The zero value selects the defaults.
type Options struct {
	// Git is the absolute path of the git executable; empty means LookGit($PATH).
	Git string
	// MaxOutput caps each git command's kept standard output in bytes (DefaultMaxOutput).
	MaxOutput int
	// Timeout limits each git command (DefaultTimeout).
	Timeout time.Duration
}

// Repo is the repository at the root of a workspace, reached only through the hardened
// runner. Every operation first runs Check. A Repo holds no open files and may be used by
// several goroutines at once.
type Repo struct {
	workspace string // absolute, symlinks resolved
	git       string
	maxOutput int
	timeout   time.Duration
	// afterCheck, when set (tests), runs between Check and git's start: the window in
	// which a racing writer would swap the repository's files.
	afterCheck func()
}

// Open returns the Repo of the workspace directory. It resolves the workspace's path and
// the git executable but does not judge the repository: every operation runs Check
// first, so a refusal comes from the operation. It fails with ErrGitNotFound when no git
// is found and with the stat error when the workspace cannot be resolved.
func Open(workspace string, opts Options) (*Repo, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	r := &Repo{workspace: abs, git: opts.Git, maxOutput: opts.MaxOutput, timeout: opts.Timeout}
	if r.git == "" {
		if r.git, err = LookGit(os.Getenv("PATH")); err != nil {
			return nil, err
		}
	} else if !filepath.IsAbs(r.git) {
		return nil, fmt.Errorf("git %q: %w", r.git, ErrGitNotFound)
	}
	if r.maxOutput <= 0 {
		r.maxOutput = DefaultMaxOutput
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	return r, nil
}

// Workspace returns the absolute, symlink-free path of the workspace root.
func (r *Repo) Workspace() string { return r.workspace }

// layout is where a checked repository's parts are, and the configuration bytes that were
// checked: git is run on these bytes (pin.go), never on a second read of the files.
type layout struct {
	gitDir    string // $GIT_DIR
	commonDir string // where config, objects and refs live (differs in a linked worktree)

	config         []byte // commonDir/config as checked (nil when absent)
	worktreeConfig bool   // extensions.worktreeConfig is on: git also reads gitDir/config.worktree
	configWorktree []byte // gitDir/config.worktree as checked (when worktreeConfig)
	stamp          []byte // layoutStamp when checked
}

// Check reports whether git may run on the repository now, and returns the refusal if not:
//   - a *LayoutError when the workspace root has no .git (ErrNotRepository), when the
//     workspace, .git, the gitdir or the common dir is owned by another uid than ours
//     (CVE-2022-24765), when .git is a symlink, or when a .git file, a commondir file, an
//     object alternate or a symbolic link among the gitdir's parts (objects, refs, config …)
//     points outside the workspace;
//   - a *ConfigError naming each setting of the repository's configuration (config, the
//     worktree's config.worktree when extensions.worktreeConfig is on, and every file they
//     include) that could start a program, with its key and file;
//   - a *LayoutError with RuleConfigSyntax when a configuration file cannot be read.
//
// Check runs before every git command; system and global configuration are never read by
// gitsafe's git, so only the repository's own files are judged.
func (r *Repo) Check() error {
	_, err := r.check()
	return err
}

func (r *Repo) check() (layout, error) {
	l, err := r.checkLayout()
	if err != nil {
		return layout{}, err
	}
	if l.stamp, err = layoutStamp(l); err != nil {
		return layout{}, err
	}
	if err := checkConfig(&l); err != nil {
		return layout{}, err
	}
	return l, nil
}

func (r *Repo) checkLayout() (layout, error) {
	ws := r.workspace
	if err := checkOwner(ws); err != nil {
		return layout{}, err
	}
	dotGit := filepath.Join(ws, ".git")
	fi, err := os.Lstat(dotGit)
	if errors.Is(err, fs.ErrNotExist) {
		return layout{}, &LayoutError{Rule: RuleNotRepository, Path: ws, Reason: "no .git at the workspace root", Err: ErrNotRepository}
	}
	if err != nil {
		return layout{}, &LayoutError{Rule: RuleNotRepository, Path: dotGit, Reason: "cannot read .git", Err: err}
	}
	if err := checkOwner(dotGit); err != nil {
		return layout{}, err
	}
	var l layout
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return layout{}, &LayoutError{Rule: RuleOutside, Path: dotGit, Reason: ".git is a symbolic link"}
	case fi.IsDir():
		l.gitDir = dotGit
	case fi.Mode().IsRegular():
		target, err := readGitFile(dotGit)
		if err != nil {
			return layout{}, err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(ws, target)
		}
		if l.gitDir, err = inside(ws, target, dotGit, "the .git file points outside the workspace"); err != nil {
			return layout{}, err
		}
		if err := checkOwner(l.gitDir); err != nil {
			return layout{}, err
		}
	default:
		return layout{}, &LayoutError{Rule: RuleNotRepository, Path: dotGit, Reason: ".git is neither a directory nor a file"}
	}
	l.commonDir = l.gitDir
	// Any gitdir may name its common dir (gitrepository-layout(5) "commondir").
	cf := filepath.Join(l.gitDir, "commondir")
	if data, err := readRepoFile(cf); err == nil {
		target := strings.TrimRight(string(data), "\r\n")
		if !filepath.IsAbs(target) {
			target = filepath.Join(l.gitDir, target)
		}
		if l.commonDir, err = inside(ws, target, cf, "commondir points outside the workspace"); err != nil {
			return layout{}, err
		}
		if err := checkOwner(l.commonDir); err != nil {
			return layout{}, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return layout{}, &LayoutError{Rule: RuleNotRepository, Path: cf, Reason: "cannot read commondir", Err: err}
	}
	for _, dir := range []string{l.gitDir, l.commonDir} {
		if err := checkLinks(ws, dir); err != nil {
			return layout{}, err
		}
	}
	if err := checkAlternates(ws, l.commonDir); err != nil {
		return layout{}, err
	}
	return l, nil
}

// gitdirParts are the parts of a gitdir that the read-only tools make git read
// (gitrepository-layout(5)).
var gitdirParts = []string{
	"HEAD", "config", "config.worktree", "index", "packed-refs", "shallow", "refs",
	"objects", "objects/info", "objects/pack", "info", "info/exclude", "info/attributes",
}

// checkLinks refuses a symbolic link among dir's gitdirParts that resolves outside the
// workspace: a linked objects or refs directory reads another repository just as an object
// alternate or commondir would.
func checkLinks(ws, dir string) error {
	for _, name := range gitdirParts {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if _, err := inside(ws, p, p, "a symbolic link in the gitdir points outside the workspace"); err != nil {
			return err
		}
	}
	return nil
}

// readGitFile returns the path a ".git" file names ("gitdir: PATH", gitrepository-layout(5)).
func readGitFile(path string) (string, error) {
	data, err := readRepoFile(path)
	if err != nil {
		return "", &LayoutError{Rule: RuleNotRepository, Path: path, Reason: "cannot read the .git file", Err: err}
	}
	s := strings.TrimRight(string(data), "\r\n")
	target, ok := strings.CutPrefix(s, "gitdir: ")
	if !ok || target == "" || strings.ContainsAny(target, "\n\x00") {
		return "", &LayoutError{Rule: RuleNotRepository, Path: path, Reason: "the .git file is not \"gitdir: PATH\""}
	}
	return target, nil
}

// checkAlternates refuses object alternates outside the workspace
// (gitrepository-layout(5) "objects/info/alternates"): they would let git read another
// repository's objects.
func checkAlternates(ws, commonDir string) error {
	objects := filepath.Join(commonDir, "objects")
	file := filepath.Join(objects, "info", "alternates")
	data, err := readRepoFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &LayoutError{Rule: RuleOutside, Path: file, Reason: "cannot read alternates", Err: err}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '"' {
			// C-quoted path; refuse rather than unquote: no in-workspace alternate needs it.
			return &LayoutError{Rule: RuleOutside, Path: file, Reason: "quoted alternate path"}
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		if _, err := inside(ws, line, file, "an object alternate points outside the workspace"); err != nil {
			return err
		}
	}
	return nil
}

// inside returns target with symlinks resolved when it lies within the directory ws (which
// has none), or a *LayoutError naming from (the file that pointed at target).
func inside(ws, target, from, reason string) (string, error) {
	resolved, err := filepath.EvalSymlinks(filepath.Clean(target))
	if err != nil {
		return "", &LayoutError{Rule: RuleOutside, Path: from, Reason: reason + " (" + target + " cannot be resolved)", Err: err}
	}
	rel, err := filepath.Rel(ws, resolved)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", &LayoutError{Rule: RuleOutside, Path: from, Reason: reason + " (" + resolved + ")"}
	}
	return resolved, nil
}

// maxIncludeDepth is git's own limit on nested includes (config.c MAX_INCLUDE_DEPTH).
const maxIncludeDepth = 10

// checkConfig reads the repository's configuration files and returns a *ConfigError
// listing every setting hazard refuses. It keeps the bytes it judged in l, so that git reads
// exactly those (an include is itself a finding, so they are the whole configuration).
func checkConfig(l *layout) error {
	var findings []Finding
	entries, data, err := readConfigTree(filepath.Join(l.commonDir, "config"), 0, &findings)
	if err != nil {
		return err
	}
	l.config = data
	worktreeConfig := false
	for _, e := range entries {
		if e.Key == "extensions.worktreeconfig" {
			v, ok := parseBool(e)
			worktreeConfig = v || !ok
		}
	}
	if worktreeConfig {
		_, data, err := readConfigTree(filepath.Join(l.gitDir, "config.worktree"), 0, &findings)
		if err != nil {
			return err
		}
		l.worktreeConfig, l.configWorktree = true, data
	}
	if len(findings) > 0 {
		return &ConfigError{Findings: findings}
	}
	return nil
}

// readConfigTree parses file (absent is empty, as for git), appends its hazards to
// findings, and follows its include.path and includeIf.*.path settings whatever their
// condition, so the refusal also names what the included files hold. It returns file's
// entries and its bytes (nil when absent).
func readConfigTree(file string, depth int, findings *[]Finding) ([]configEntry, []byte, error) {
	data, err := readRepoFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, &LayoutError{Rule: RuleConfigSyntax, Path: file, Reason: "cannot read configuration", Err: err}
	}
	entries, err := parseConfig(data, file)
	if err != nil {
		return nil, nil, &LayoutError{Rule: RuleConfigSyntax, Path: file, Reason: "configuration git may read differently", Err: err}
	}
	for _, e := range entries {
		reason := hazard(e)
		if reason == "" {
			continue
		}
		*findings = append(*findings, Finding{Rule: RuleConfigExec, Key: e.Key, Value: e.Value, File: file, Line: e.Line, Reason: reason})
		section, _, name := splitKey(e.Key)
		if (section == "include" || section == "includeif") && name == "path" && e.Value != "" && depth < maxIncludeDepth {
			inc := e.Value
			if strings.HasPrefix(inc, "~") {
				continue // our git's HOME is /dev/null: nothing to follow
			}
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(file), inc)
			}
			if _, _, err := readConfigTree(inc, depth+1, findings); err != nil {
				var le *LayoutError
				if errors.As(err, &le) && le.Rule == RuleConfigSyntax {
					continue // already refused for the include itself
				}
				return nil, nil, err
			}
		}
	}
	return entries, data, nil
}
