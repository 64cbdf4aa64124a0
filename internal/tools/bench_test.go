package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/wsfs"
)

// BenchmarkReadFile10MiB runs read_file on a 10 MiB file of 100-byte lines, whole, and
// reports MiB/s (the JSON encoding of the result included, as the server sends it).
func BenchmarkReadFile10MiB(b *testing.B) {
	dir := b.TempDir()
	line := strings.Repeat("x", 99) + "\n"
	data := strings.Repeat(line, 10<<20/len(line))
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(data), 0o644); err != nil {
		b.Fatal(err)
	}
	root, err := wsfs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	env := &Env{Root: root}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		res, err := ReadFile(context.Background(), env, ReadFileInput{Path: "big.txt"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGrepGoSrc runs the grep tool and ripgrep (rg, if installed) over the Go
// distribution's src tree for the same patterns and reports each one's wall time per search
// and the ratio. GOSRC overrides the tree.
func BenchmarkGrepGoSrc(b *testing.B) {
	src := os.Getenv("GOSRC")
	if src == "" {
		src = filepath.Join(runtimeGOROOT(b), "src")
	}
	if _, err := os.Stat(src); err != nil {
		b.Skipf("no Go source tree: %v", err)
	}
	rg, rgErr := exec.LookPath("rg")
	root, err := wsfs.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	env := &Env{Root: root}
	for _, c := range []struct{ name, pattern string }{
		{"literal", `sync\.Mutex`},
		{"regex", `func \(\w+ \*\w+\) Unmarshal[A-Z]\w*\(`},
		{"rare", `ErrNotSupportedBySCodeBench`},
	} {
		b.Run(c.name, func(b *testing.B) {
			var toolD, rgD time.Duration
			for range b.N {
				t := time.Now()
				res, err := grepTool(context.Background(), env, GrepInput{Pattern: c.pattern, FilesOnly: true, MaxResults: MaxMatchesLimit})
				toolD += time.Since(t)
				if err != nil {
					b.Fatal(err)
				}
				if rgErr == nil {
					t = time.Now()
					out, err := exec.Command(rg, "-l", "--no-messages", c.pattern, src).Output()
					rgD += time.Since(t)
					if err != nil && len(out) != 0 {
						b.Fatal(err)
					}
					if n := strings.Count(string(out), "\n"); n != len(res.Files) && !res.Truncated {
						b.Logf("%s: grep found %d files, rg %d (rg skips hidden files)", c.name, len(res.Files), n)
					}
				}
			}
			b.ReportMetric(float64(toolD.Microseconds())/1000/float64(b.N), "grep-ms")
			if rgErr == nil {
				b.ReportMetric(float64(rgD.Microseconds())/1000/float64(b.N), "rg-ms")
				b.ReportMetric(float64(toolD)/float64(rgD), "grep/rg")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

func runtimeGOROOT(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}
