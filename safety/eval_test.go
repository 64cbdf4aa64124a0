package safety

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// evalCases are a script prefix and a word: TestEvalMatchesBash runs the prefix and prints
// the word's fields with real bash, and compares them with the fields the checker computes
// after judging the same prefix.
var evalCases = []struct{ prefix, word string }{
	{`printf -v x '%s-%s' a b`, `"$x"`},
	{`printf -v x '\x72\x6d\101\0101'`, `"$x"`},
	{`printf -v x '%5s|%-3d|%x|%o|%X|%c|%%|%i|%u' ab 7 255 8 255 xyz 9 3`, `"$x"`},
	{`printf -v x '%b|%b' 'a\tb\0101\x41\101' 'q\cz'`, `"$x"`},
	{`printf -v x '%s,' a b c`, `"$x"`},
	{`printf -v x '%03d|%+d|% d|%-4s|%.2s|%*d' 7 5 6 ab abc 4 1`, `"$x"`},
	{`printf -v x '%d|%d|%d' 0x1f 010 "'A"`, `"$x"`},
	{`printf -v x '%.10s|%010.2s|%-10c|' abcdefghijklmn xyz q`, `"$x"`},
	{`printf -v x '%05s|%+5s|% s|%#x|%#o|%-05d|%.3d|%5.1s|%-+4d|%x' ab cd ef 255 8 3 7 xyz 5 -1`, `"$x"`},
	{`printf -v x 'a\"b\'"'"'c\?d\qe\\f'`, `"$x"`},
	{`printf -v x '%s'`, `"[$x]"`},
	{`x=$(printf '%s %s\n\n' rm -rf)`, `"$x"`},
	{`x=$(echo -e 'a\x41\tb')`, `"$x"`},
	{`x=$(echo -n hi there)`, `"$x"`},
	{`x=$(echo -ne 'p\0101')`, `"$x"`},
	{`read -r a b <<< '  one two three  '`, `"$a|$b"`},
	{`read a <<< 'x\ y\\z'`, `"$a"`},
	{`read -r a <<< 'x\ y'`, `"$a"`},
	{`read -a arr <<< 'p q  r'`, `"${arr[@]}"`},
	{`read -r <<< ' keep  spaces '`, `"[$REPLY]"`},
	{`read -r a b c <<< 'one'`, `"[$a][$b][$c]"`},
	{`read -d , a <<< 'x y,z'`, `"$a"`},
	{"read -r a b <<EOF\nfirst line\nsecond\nEOF", `"$a|$b"`},
	{`IFS= read -r a b <<< '  x  y  '`, `"[$a][$b]"`},
	{`y=x; x=val`, `"${!y}"`},
	{`printf -v x '%s %s|' a`, `"$x"`},
	{`x=' a  b '; y=$x`, `"[$y]"`},
	{`a=(x y); b=("${a[@]}" z)`, `"${b[@]}" "${#b[@]}" "${a}"`},
	{`s='a b'; a=($s c)`, `"${a[@]}" "${#a[@]}"`},
	{`s=abc; x=5`, `"${s:(-1)}" $(( x<<2 )) $(( 1 ? 2 : 3 )) $(( x == 5 || y ))`},
	{`read -r a <<< ''; read b c <<< 'one'`, `"[$a][$b][$c]"`},
	{`x=$'a	b  c'; read -r p q <<< "$x"`, `"[$p][$q]"`},
	{`declare -u y=; y+=ab; declare -i n; n=3+4`, `"$y" "$n"`},
	{`a=(x); a+=(y z); a[0]=w; unset b`, `"${a[@]}"`},
	{`x=ab; y=${x}c; z="${y}d"`, `"$z"`},
	{"mapfile -t arr <<EOF\nrm -rf\nsecond line\nEOF", `"${arr[@]}" "${#arr[@]}"`},
	{`readarray -t -d , arr <<< 'a,b c,d'`, `"${arr[0]}" "${arr[1]}" "${#arr[2]}" "${#arr[@]}"`},
	{`x=héllo`, `"${#x}"`},
	{`s=abcdef`, `"${s:1:3}" "${s: -2}" "${s:2}" "${s:1:-1}" "${s:10}"`},
	{`s=aXbXc`, `"${s/X/-}" "${s//X/-}" "${s/#a/A}" "${s/%c/C}" "${s//[Xa]/_}" "${s/X*/!}"`},
	{`s=hello; t=HELLO`, `"${s^^}" "${t,,}" "${s^}" "${t,}"`},
	{`e=; x=set`, `"${e:-def}" "[${e-def}]" "${x:+alt}" "[${e:+alt}]" "${e+alt}" "${x:-def}"`},
	{`a=(one "two three" four)`, `"${a[@]}" "${a[1]}" "${a[-1]}" "${#a[@]}" "x${a[@]}y" "${a[*]}"`},
	{`a=(one "two three" four)`, `${a[@]}`},
	{`a=(p q r s)`, `"${a[@]:1}" "${a[@]:1:2}"`},
	{`a=(p q); a+=(r); a[1]=Q; a[3]=z`, `"${a[@]}"`},
	{`a=(p q); a=Z`, `"${a[@]}"`},
	{`a=()`, `"${a[@]}" end`},
	{`i=1; a=(x y z)`, `"${a[i]}" "${a[i+1]}" "${a[$i]}"`},
	{``, `$((3+4*2)) $((1<<4)) $((10%3)) $((-7/2)) $((2**10)) $((0x1f+010+2#11)) $((5>3?1:0)) $((!0)) $((~5)) $((7&3|8^1))`},
	{`n=4; m=n+1`, `$((n*n)) $((m*2)) $(( n > 3 && m < 9 )) $((64#_)) $((36#z))`},
	{`declare -l l=ABC; declare -u u2=abc; declare -i i=3*4`, `"$l" "$u2" "$i"`},
	{`declare -l l; l=MiXeD`, `"$l"`},
	{`c=ab; c+=cd`, `"$c"`},
	{`set -- x "y z" w; shift`, `"$@"`},
	{`set -- x "y z" w; shift 2`, `"$@" "$1"`},
	{`eval 'x=from-eval'`, `"$x"`},
	{`x=abc; eval 'y=$x-1'`, `"$y"`},
	{``, `"${#IFS}"`},
	{`x=word; y=`, `${x:=other} ${y:=made} "$y"`},
}

// TestEvalMatchesBash checks that every value the checker computes (printf, echo, read,
// parameter operators, arrays, "$@", arithmetic, declare attributes) is the value bash
// computes, field for field.
func TestEvalMatchesBash(t *testing.T) {
	bash := testenv.RequireTool(t, "bash")
	home := "/home/dev"
	cwd := t.TempDir()
	for _, tc := range evalCases {
		script := tc.prefix
		if script != "" {
			script += "\n"
		}
		script += "printf '%s\\n' " + tc.word
		cmd := exec.Command(bash, "-c", "cd "+shellQuote(cwd)+"\n"+script)
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bash %q: %v", script, err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")

		f, err := parse(script, Bash)
		if err != nil {
			t.Fatalf("parse %q: %v", script, err)
		}
		a := &analyzer{ctx: Context{Home: home, Workspace: cwd, Cwd: cwd}, cwd: cwd, curDialect: Bash}
		a.src = source{text: script}
		a.stmts(f.Stmts[:len(f.Stmts)-1])
		call := f.Stmts[len(f.Stmts)-1].Cmd.(*syntax.CallExpr)
		var got []string
		for _, w := range call.Args[2:] {
			for _, x := range a.word(nil, w, false) {
				if x.dyn {
					t.Errorf("%q: %s is evaluated as a run-time value", script, tc.word)
				}
				got = append(got, x.s)
			}
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("%q:\n checker computes %q\n    bash computes %q", script, got, want)
		}
	}
}

// TestEvalUnknown checks that values the checker cannot know stay run-time parts instead
// of being guessed.
func TestEvalUnknown(t *testing.T) {
	for _, tc := range []struct{ prefix, word string }{
		{``, `"$UNSET_FROM_ENV"`},
		{``, `"${X:-d}"`},
		{`printf -v x '%q' a`, `"$x"`},
		{`printf -v x '%f' 1`, `"$x"`},
		{`printf -v x '%d' 12abc`, `"$x"`},
		{`read -n 2 x <<< abc`, `"$x"`},
		{`IFS=, read a b <<< 'x,y'`, `"$a"`},
		{`read x`, `"$x"`},
		{`a=($UNKNOWN)`, `"${a[@]}"`},
		{`a=(*)`, `"${a[@]}"`},
		{`a[5]=x`, `"${a[@]}"`},
		{``, `$((1/0))`},
		{``, `$((x=1))`},
		{`declare -A m=([k]=v)`, `"${m[k]}"`},
		{`declare -n r=x; x=1`, `"$r"`},
		{`x=1; unset x`, `"$x"`},
		{`set -- a b; shift $N`, `"$@"`},
		{``, `"${a[@]}"`},
		{`x=$(date)`, `"$x"`},
		{`x=ls; unset x`, `"${x:-def}"`},
		{``, `${y:=made}`},
		{`set -- rmx -rf`, `"${@/%x/}"`},
		{`set -- a b`, `"${#@}"`},
		{"while read -r a b; do :; done <<EOF\n1 one\nEOF", `"$a"`},
	} {
		script := tc.prefix
		if script != "" {
			script += "\n"
		}
		script += "printf '%s\\n' " + tc.word
		f, err := parse(script, Bash)
		if err != nil {
			t.Fatalf("parse %q: %v", script, err)
		}
		a := &analyzer{ctx: Context{Home: "/home/dev", Workspace: "/w", Cwd: "/w"}, cwd: "/w", curDialect: Bash}
		a.src = source{text: script}
		a.stmts(f.Stmts[:len(f.Stmts)-1])
		call := f.Stmts[len(f.Stmts)-1].Cmd.(*syntax.CallExpr)
		vs := a.word(nil, call.Args[2], false)
		if len(vs) == 0 || !vs[0].dyn {
			t.Errorf("%q: %s evaluates to %+v, want a run-time value", script, tc.word, vs)
		}
	}
}

// TestPythonProbe checks the recogniser of read-only python -c programs against programs
// that do more than read.
func TestPythonProbe(t *testing.T) {
	for _, tc := range []struct {
		code     string
		isolated bool
		want     bool
	}{
		{`import sys; print(sys.version)`, false, true},
		{"import sys\nprint(sys.version_info[:2])\n", false, true},
		{`import os; print(os.path.join(os.getcwd(), "x"))`, false, true},
		{`import sys; v = sys.version.split()[0]; print(v)`, false, true},
		{`import json; print(json.dumps({"a": [1, 2]}, indent=2))`, true, true},
		{`import math; print(math.sqrt(2), math.pi)`, true, true},
		{`import json; print(1)`, false, false},
		{`print(1)`, false, false},
		{`import os; os.system("id")`, false, false},
		{`import os; print(os.environ["TOKEN"])`, false, false},
		{`import os; os.remove("x")`, false, false},
		{`import sys; sys.modules["os"].system("id")`, false, false},
		{`import os as print; print`, false, false},
		{`from os import system; system("id")`, false, false},
		{`import sys; print = sys.exit`, false, false},
		{`import sys; print(().__class__.__bases__)`, false, false},
		{`import sys; print(f"{sys.version}")`, false, false},
		{`import sys; exec("print(1)")`, false, false},
		{`import sys; print(open("/etc/passwd").read())`, false, false},
		{`import sys; print(eval("1"))`, false, false},
		{"import sys\nif 1:\n  print(1)", false, false},
		{`import sys; [print(x) for x in sys.path]`, false, false},
		{`import sys; print(sorted(sys.path, key=lambda p: p))`, false, false},
		{`import os; print(sorted(["a"], key=os.system))`, false, false},
		{`import sys; print("""x""")`, false, false},
		{`import sys; sys.stdout.write("x\n")`, false, true},
		{`import sys; sys.stdout.close()`, false, false},
		{`import sys; sys.path.append("/tmp")`, false, false},
		{`import subprocess; print(1)`, true, false},
		{`import sys; help()`, false, false},
	} {
		if got := pyReadOnly(tc.code, tc.isolated); got != tc.want {
			t.Errorf("pyReadOnly(%q, isolated=%v) = %v, want %v", tc.code, tc.isolated, got, tc.want)
		}
	}
}

// TestPythonProbeRuns runs every program the recogniser accepts in TestPythonProbe with
// real python3 in an empty directory, to check that they are valid Python that only prints.
func TestPythonProbeRuns(t *testing.T) {
	py := testenv.RequireTool(t, "python3")
	dir := t.TempDir()
	for _, code := range []string{
		`import sys; print(sys.version)`,
		`import os; print(os.path.join(os.getcwd(), "x"))`,
		`import sys; v = sys.version.split()[0]; print(v)`,
		`import sys; sys.stdout.write("x\n")`,
		`import sys, os; print(sys.executable, os.sep, file=sys.stderr)`,
	} {
		if !pyReadOnly(code, false) {
			t.Fatalf("pyReadOnly(%q) = false", code)
		}
		cmd := exec.Command(py, "-c", code)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("python3 -c %q: %v\n%s", code, err, out)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the programs wrote %d files", len(ents))
	}
}

// TestSQLReadOnly checks the recogniser of read-only SQL.
func TestSQLReadOnly(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{`SELECT * FROM t`, true},
		{`select count(*) from t; select 1;`, true},
		{"-- comment\nSELECT 'delete' FROM t", true},
		{".tables\n.schema t\nSELECT 1", true},
		{`PRAGMA table_info(t)`, true},
		{`WITH x AS (SELECT 1) SELECT * FROM x`, true},
		{`DELETE FROM t`, false},
		{`SELECT 1; DROP TABLE t`, false},
		{`WITH x AS (SELECT 1) DELETE FROM t`, false},
		{`SELECT writefile('/tmp/x', 'y')`, false},
		{`SELECT edit('x', 'vi')`, false},
		{`SELECT load_extension('/tmp/x.so')`, false},
		{`SELECT readfile('/home/dev/.ssh/id_rsa')`, false},
		{`ATTACH '/tmp/x.db' AS x`, false},
		{`PRAGMA journal_mode=WAL`, false},
		{`VACUUM INTO '/tmp/copy.db'`, false},
		{`.shell id`, false},
		{`.output /tmp/x`, false},
		{`.once |sh`, false},
		{`SELECT 1 /* x`, false},
		{`SELECT "writefile"('/tmp/x', 1)`, false},
	} {
		if got := sqlReadOnly(tc.sql); got != tc.want {
			t.Errorf("sqlReadOnly(%q) = %v, want %v", tc.sql, got, tc.want)
		}
	}
}

// FuzzEval feeds arbitrary text to the evaluation code: as a whole command to Check, as
// printf formats, %b arguments, echo operands, arithmetic constants and expressions, Python
// programs and SQL. Seeds are the cases of the evaluate and agent-work classes and the
// words of TestEvalMatchesBash. It checks that nothing panics (Check would report
// internal.panic), that computed values stay within the evaluation budget, and that arrays
// survive their encoding.
func FuzzEval(f *testing.F) {
	for _, c := range evalSeedCases(f) {
		f.Add(c)
	}
	for _, tc := range evalCases {
		f.Add(tc.prefix + "\n" + "echo " + tc.word)
	}
	ctx := Context{Role: RoleUser, Workspace: "/home/dev/proj", Cwd: "/home/dev/proj", Home: "/home/dev"}
	f.Fuzz(func(t *testing.T, s string) {
		v := Check(s, ctx)
		for _, fd := range v.Findings {
			if fd.Rule == "internal.panic" {
				t.Fatalf("Check(%q) panicked", s)
			}
		}
		if out, ok := printfFormat(s, []string{"a", "1", s}); ok && len(out) > maxEvalLen+2*maxPrintfWidth+len(s) {
			t.Fatalf("printfFormat(%q) produced %d bytes", s, len(out))
		}
		expandB(s)
		echoText(strings.Fields(s), false)
		parseArithInt(s)
		printfInt(s)
		pyReadOnly(s, true)
		sqlReadOnly(s)
		xs := strings.Split(s, " ")
		if back, ok := decodeArray(encodeArray(xs)); !ok || strings.Join(back, " ") != s {
			t.Fatalf("array %q does not survive its encoding: %q", xs, back)
		}
		if x, err := syntax.NewParser().Arithmetic(strings.NewReader(s)); err == nil {
			a := &analyzer{ctx: ctx, cwd: ctx.Cwd, top: s, src: source{text: s}, vars: map[string]string{"n": "4", "m": s}}
			a.arithValue(x, 0)
		}
	})
}

// evalSeedCases returns the commands of the evaluate and agent-work cases.
func evalSeedCases(tb testing.TB) []string {
	data, err := os.ReadFile(filepath.Join("testdata", "classes.jsonl"))
	if err != nil {
		tb.Fatalf("read cases: %v", err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	for sc.Scan() {
		var c struct{ Class, Cmd string }
		if json.Unmarshal(sc.Bytes(), &c) == nil && (c.Class == "evaluate" || c.Class == "agent-work") {
			out = append(out, c.Cmd)
		}
	}
	if len(out) == 0 {
		tb.Fatal("no evaluate or agent-work cases")
	}
	return out
}
