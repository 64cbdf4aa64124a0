package safety

import (
	"os/exec"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// TestArgvMatchesBash builds the argv of commands the way Check does and compares it with
// the argv real bash builds (printf one field a line), for quoting, ANSI-C strings, brace
// expansion, tilde, and parameters the checker knows.
func TestArgvMatchesBash(t *testing.T) {
	bash := testenv.RequireTool(t, "bash")
	words := []string{
		`\rm`, `r''m`, `"r"m`, `$'\x72\x6d'`, `$'\162\155'`, `$'\u0072m'`, `$'a\tb'`, `$'\cA'`,
		`--ext\-diff`, `"a\"b"`, `"a\$b"`, `'a\b'`, `a\ b`, `"a\\b"`, `"\q"`,
		`{a,b}`, `x{1..3}y`, `{a,b}{c,d}`, `{1..10..3}`, `{c..a}`, `a{,b}`, `{a}`, `{a,{b,c}}`,
		`~`, `~/x`, `x=~/y`, `~root/z`, `{x,~/}`, `"~"`, `'~/x'`, `\~`,
		`$HOME`, `${HOME}`, `"$HOME/x"`, `$PWD`, `${PWD%/*}`, `${HOME#/}`,
		`$(echo rm)`, "`echo rm`", `$(printf 'r\x6d')`, `"$(pwd)"`,
		`"$'x'"`, `$"x"`, `a"b"'c'`, `$'\''`, `"a b"`, `a\\b`, `'\'`, `"${HOME}"x`, `\$HOME`,
		`"\$(echo x)"`, `'$(echo x)'`, `{a,'b c'}`, `"{a,b}"`, `{a\,b}`, `x={a,b}`, `--opt=~/x`,
		`a=b=~/c`, `~+`, `"$PWD"/..`,
	}
	home := "/home/dev"
	cwd := t.TempDir()
	for _, w := range words {
		cmd := exec.Command(bash, "-c", "cd "+shellQuote(cwd)+" && printf '%s\\n' "+w)
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash %s: %v", w, err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")

		f, err := parse("printf %s\\n "+w, Bash)
		if err != nil {
			t.Fatalf("parse %s: %v", w, err)
		}
		a := &analyzer{ctx: Context{Home: home, Workspace: cwd, Cwd: cwd}, cwd: cwd, curDialect: Bash}
		a.src = source{text: "printf %s\\n " + w}
		call := f.Stmts[0].Cmd.(*syntax.CallExpr)
		var got []string
		for _, x := range a.word(nil, call.Args[2], false) {
			if x.dyn {
				t.Fatalf("%s: evaluated as a run-time value", w)
			}
			got = append(got, x.s)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("%s: checker builds %q, bash builds %q", w, got, want)
		}
	}
}

// TestArgvMatchesDash does the same for a POSIX sh (dash): no tilde after = in arguments.
// ($'…' and brace expansion are left out on purpose: /bin/sh may be bash, which has both,
// and the checker judges the expanded form, the one that can do harm.)
func TestArgvMatchesDash(t *testing.T) {
	dash := testenv.RequireTool(t, "dash")
	home := "/home/dev"
	cwd := t.TempDir()
	for _, w := range []string{`x=~/y`, `~/x`, `"a\"b"`, `\rm`, `r''m`, `$HOME`} {
		cmd := exec.Command(dash, "-c", "cd "+shellQuote(cwd)+" && printf '%s\\n' "+w)
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("dash %s: %v", w, err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		src := "printf %s\\n " + w
		f, err := parse(src, POSIX)
		if err != nil {
			t.Fatalf("parse %s: %v", w, err)
		}
		a := &analyzer{ctx: Context{Home: home, Workspace: cwd, Cwd: cwd, Dialect: POSIX}, cwd: cwd, curDialect: POSIX}
		a.src = source{text: src}
		var got []string
		for _, x := range a.word(nil, f.Stmts[0].Cmd.(*syntax.CallExpr).Args[2], false) {
			got = append(got, x.s)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("%s: checker builds %q, dash builds %q", w, got, want)
		}
	}
}
