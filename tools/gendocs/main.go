// Command gendocs writes S-Code's man pages and shell completion scripts, generated from the
// programs themselves so that they never drift from the flags: s-code(1) and one page per
// subcommand (s-code-run(1) …) from the cobra command tree (github.com/spf13/cobra/doc),
// s-code-userhelper(8), s-code-roothelper(8) and s-code-sandbox(8) from the helpers' own
// --help, and the bash, zsh and fish completions of s-code. `make build` runs it.
//
// Usage: go run ./tools/gendocs -out DIR
//
// It writes DIR/man/man1/*.1, DIR/man/man8/*.8 and DIR/completions/{s-code.bash,_s-code,
// s-code.fish}. The pages' date is $SOURCE_DATE_EPOCH when set (reproducible builds), else
// today.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/s-code-dev/s-code/internal/cli"
	"github.com/s-code-dev/s-code/internal/daemon"
	"github.com/s-code-dev/s-code/internal/sandbox/launch"
	"github.com/s-code-dev/s-code/internal/version"
)

func main() {
	out := flag.String("out", "bin/share", "output `DIR`")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
}

func run(out string) error {
	date := time.Now().UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH=%q: %w", s, err)
		}
		date = time.Unix(n, 0).UTC()
	}
	man1, man8, comp := filepath.Join(out, "man", "man1"), filepath.Join(out, "man", "man8"), filepath.Join(out, "completions")
	for _, d := range []string{man1, man8, comp} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	root := cli.NewRoot(cli.IO{In: os.Stdin, Out: io.Discard, Err: io.Discard})
	root.DisableAutoGenTag = true
	hdr := &doc.GenManHeader{Title: "S-CODE", Section: "1", Date: &date, Source: "S-Code " + version.Version, Manual: "S-Code Manual"}
	if err := doc.GenManTree(root, hdr, man1); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	if err := completions(root, comp); err != nil {
		return err
	}
	for _, h := range helpers {
		if err := writeHelperPage(man8, h, date); err != nil {
			return err
		}
	}
	return nil
}

// completions writes the bash, zsh and fish scripts, as `s-code completion SHELL` prints them.
func completions(root *cobra.Command, dir string) error {
	for name, gen := range map[string]func(io.Writer) error{
		"s-code.bash": func(w io.Writer) error { return root.GenBashCompletionV2(w, true) },
		"_s-code":     root.GenZshCompletion,
		"s-code.fish": func(w io.Writer) error { return root.GenFishCompletion(w, true) },
	} {
		var b bytes.Buffer
		if err := gen(&b); err != nil {
			return fmt.Errorf("completion %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// helperPage is a section-8 page of one helper binary: its --help text is the options.
type helperPage struct {
	name, summary string
	description   []string // paragraphs
	files         [][2]string
	help          func(stderr io.Writer)
}

var helpers = []helperPage{
	{
		name:    "s-code-userhelper",
		summary: "the S-Code user helper: runs the commands s-code sends it, for its own user only",
		description: []string{
			"s-code-userhelper serves the S-Code helper service (gRPC) on a Unix socket taken from systemd socket activation (s-code-userhelper.socket) or launchd, or created with --listen PATH. It admits only callers with its own uid, read from the kernel (peer credentials), and refuses callers that run inside an S-Code sandbox.",
			"Every command is judged again by ShellSafety in the user context, recorded in a hash-chained, sealed audit log (request, start, exit; the start record is on disk before the command starts) and run through s-code-sandbox(8) in the sandbox profile of its workspace: writes only in the workspace, its private temporary directory and dependency caches, no network unless a person approved it for that one command.",
			"On SIGTERM it stops taking requests, lets running commands finish for the drain period (--drain), kills what remains and seals its audit log.",
		},
		files: [][2]string{
			{"$XDG_RUNTIME_DIR/s-code/user.sock", "the socket (directory 0700, socket 0600)"},
			{"$XDG_STATE_HOME/s-code/audit", "the audit log (~/.local/state/s-code/audit)"},
			{"$XDG_CACHE_HOME/s-code/tool-dependencies", "the per-workspace dependency caches (see s-code-cache(1))"},
		},
		help: func(stderr io.Writer) { daemon.RunUser(context.Background(), []string{"--help"}, io.Discard, stderr) },
	},
	{
		name:    "s-code-roothelper",
		summary: "the S-Code root helper: runs commands as root for the callers its policy names",
		description: []string{
			"s-code-roothelper serves the S-Code helper service on /run/s-code/root.sock (mode 0660, group s-code), taken from s-code-roothelper.socket or created with --listen PATH. It admits only the uids and groups named in [allow] of its root-owned policy; the default policy admits nobody.",
			"Commands are judged by ShellSafety in the root context (read-only diagnostics allow, changes ask, destruction and persistence deny, plus the policy's [safety] rules), audited in /var/log/s-code and run as root without a sandbox.",
		},
		files: [][2]string{
			{"/etc/s-code/roothelper.toml", "the policy: root-owned, not writable by group or others, strict TOML"},
			{"/run/s-code/root.sock", "the socket"},
			{"/var/log/s-code", "the audit log; never removed by the package"},
		},
		help: func(stderr io.Writer) { daemon.RunRoot(context.Background(), []string{"--help"}, io.Discard, stderr) },
	},
	{
		name:    "s-code-sandbox",
		summary: "the S-Code sandbox launcher: confines itself to a sandbox profile, then execs the command",
		description: []string{
			"s-code-sandbox is started by s-code-userhelper(8) and by s-code sandbox for each command, with the sandbox profile on its command line. It confines its own process (a private mount namespace with read-only bind mounts of the protected paths, no_new_privs, Landlock and seccomp on Linux; Seatbelt on macOS) and then execs the command. It exits 126 when the command cannot be confined or run, 127 when it is not found, 2 for usage errors.",
		},
		help: func(stderr io.Writer) { launch.Run([]string{"--help"}, stderr) },
	},
}

// writeHelperPage writes DIR/NAME.8 in man(7) markup.
func writeHelperPage(dir string, h helperPage, date time.Time) error {
	var usage bytes.Buffer
	h.help(&usage)
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %q 8 %q %q \"S-Code Manual\"\n", strings.ToUpper(h.name), date.Format("Jan 2006"), "S-Code "+version.Version)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(h.name), roff(h.summary))
	b.WriteString(".SH DESCRIPTION\n")
	for i, p := range h.description {
		if i > 0 {
			b.WriteString(".PP\n")
		}
		b.WriteString(roff(p) + "\n")
	}
	b.WriteString(".SH OPTIONS\n.nf\n")
	for _, line := range strings.Split(strings.TrimRight(usage.String(), "\n"), "\n") {
		b.WriteString(roff(line) + "\n")
	}
	b.WriteString(".fi\n")
	if len(h.files) > 0 {
		b.WriteString(".SH FILES\n")
		for _, f := range h.files {
			fmt.Fprintf(&b, ".TP\n.I %s\n%s\n", roff(f[0]), roff(f[1]))
		}
	}
	b.WriteString(".SH SEE ALSO\ns-code(1), s-code-run(1), s-code-status(1), s-code-audit(1)\n")
	return os.WriteFile(filepath.Join(dir, h.name+".8"), []byte(b.String()), 0o644)
}

// roff escapes text for a man(7) line: backslashes, and a leading dot or quote that would
// read as a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
