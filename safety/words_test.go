package safety

import (
	"reflect"
	"testing"
)

func TestANSIC(t *testing.T) {
	for in, want := range map[string]string{
		`\x72\x6d`:      "rm",
		`\162\155`:      "rm",
		`\u0072m`:       "rm",
		`\U0001F600`:    "\U0001F600",
		`a\tb\nc`:       "a\tb\nc",
		`\'`:            "'",
		`\cA`:           "\x01",
		`\e[0m`:         "\x1b[0m",
		`plain`:         "plain",
		`\q`:            `\q`,
		`trailing\`:     `trailing\`,
		`\x`:            `\x`,
		`\101`:          "A",
		`\0101`:         "\b1",
		`mixed\x2fpath`: "mixed/path",
	} {
		if got := ansiC(in); got != want {
			t.Errorf("ansiC(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShellMatch(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"/*", "/proj", true},
		{"/*", "/home/dev/proj", true},
		{"*.go", "a.go", true},
		{"?", "ab", false},
		{"[ab]c", "bc", true},
		{`\*`, "*", true},
		{"x", "y", false},
	} {
		if got := shellMatch(c.pat, c.s); got != c.want {
			t.Errorf("shellMatch(%q, %q) = %v", c.pat, c.s, got)
		}
	}
}

func TestSplitEnvString(t *testing.T) {
	for in, want := range map[string][]string{
		`rm -rf /`:           {"rm", "-rf", "/"},
		`bash -c "rm -rf /"`: {"bash", "-c", "rm -rf /"},
		`a 'b c' d\ e`:       {"a", "b c", "d e"},
		`x # comment`:        {"x"},
		`"a\"b"`:             {`a"b`},
	} {
		got, ok := splitEnvString(in)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("splitEnvString(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	if _, ok := splitEnvString(`a 'b`); ok {
		t.Error("unclosed quote accepted")
	}
}

func TestParseArgs(t *testing.T) {
	argv := []arg{lit("sed"), lit("-ni"), lit("-e"), lit("p"), lit("--in-place=.bak"), lit("--expr=s/a/b/"), lit("f"), lit("--"), lit("-x")}
	p := parseArgs(argv, &sedSpec)
	if !p.has("n") || !p.has("i") || !p.has("--in-place") {
		t.Errorf("flags: %+v", p.opts)
	}
	if o, ok := p.get("--expression"); !ok || o.val.s != "s/a/b/" {
		t.Errorf("--expr prefix: %+v", p.opts)
	}
	if len(p.ops) != 2 || p.ops[0].s != "f" || p.ops[1].s != "-x" {
		t.Errorf("operands: %+v", p.ops)
	}
	w := parseArgs([]arg{lit("nice"), lit("-n"), lit("5"), lit("rm"), lit("-rf"), lit("/")}, &wrappers["nice"].opts)
	if w.rest != 3 {
		t.Errorf("nice: rest = %d, want 3", w.rest)
	}
}

func TestClassify(t *testing.T) {
	a := &analyzer{ctx: caseContext("user"), cwd: "/home/dev/proj"}
	for p, want := range map[string]pathClass{
		"/dev/null":                        pcNull,
		"/dev/sda":                         pcDevice,
		"/dev/tcp/1.2.3.4/80":              pcDevTCP,
		"/home/dev/proj/x":                 pcWorkspace,
		"/home/dev/proj/.git/hooks/x":      pcProtected,
		"/home/dev/proj/sub/.Claude/x":     pcProtected,
		"/home/dev/proj/\x00":              pcDynamic,
		"/tmp/x":                           pcTmp,
		"/home/dev/.bashrc":                pcPersistence,
		"/home/other/.ssh/authorized_keys": pcPersistence,
		"/etc/sudoers.d/x":                 pcPersistence,
		"/etc/hosts":                       pcSystem,
		"/home/dev/notes.txt":              pcOutside,
		"/srv/x":                           pcSystem,
	} {
		if got := a.classify(p); got != want {
			t.Errorf("classify(%q) = %d, want %d", p, got, want)
		}
	}
}
