package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// rechain rewrites every record of the log's files from the first changed one on, with
// hashes recomputed, as an attacker without the seal key would: seals are kept as they were.
func rechain(t *testing.T, dir string, edit func(r *Record)) {
	t.Helper()
	prev := ""
	for _, path := range logFiles(t, dir) {
		var out [][]byte
		for _, line := range readLines(t, path) {
			var r Record
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			edit(&r)
			r.Prev = prev
			nl, err := encodeLine(&r)
			if err != nil {
				t.Fatal(err)
			}
			prev = r.Hash
			out = append(out, bytes.TrimSuffix(nl, []byte("\n")))
		}
		writeLines(t, path, out)
	}
}

// TestVerifyCorruption damages a real log in each way an attacker or a fault could and
// checks that Verify names the first bad record and what is wrong.
func TestVerifyCorruption(t *testing.T) {
	type want struct {
		whole bool
		kind  ProblemKind
		file  int // index of the file the problem names; -1 for any
		line  int // 0 for any
	}
	cases := []struct {
		name    string
		opts    Options
		damage  func(t *testing.T, dir string)
		noKey   want
		withKey want
	}{
		{
			name: "intact",
			damage: func(t *testing.T, dir string) {
			},
			noKey:   want{whole: true},
			withKey: want{whole: true},
		},
		{
			name: "changed byte",
			damage: func(t *testing.T, dir string) {
				p := logFiles(t, dir)[0]
				lines := readLines(t, p)
				lines[4] = bytes.Replace(lines[4], []byte("record 4"), []byte("record 5"), 1)
				writeLines(t, p, lines)
			},
			noKey:   want{kind: ProblemModified, line: 5},
			withKey: want{kind: ProblemModified, line: 5},
		},
		{
			name: "deleted line",
			damage: func(t *testing.T, dir string) {
				p := logFiles(t, dir)[0]
				lines := readLines(t, p)
				writeLines(t, p, append(lines[:4:4], lines[5:]...))
			},
			noKey:   want{kind: ProblemMissing, line: 5},
			withKey: want{kind: ProblemMissing, line: 5},
		},
		{
			name: "two lines swapped",
			damage: func(t *testing.T, dir string) {
				p := logFiles(t, dir)[0]
				lines := readLines(t, p)
				lines[4], lines[5] = lines[5], lines[4]
				writeLines(t, p, lines)
			},
			noKey:   want{kind: ProblemReordered, line: 5},
			withKey: want{kind: ProblemReordered, line: 5},
		},
		{
			name: "inserted copy of a line",
			damage: func(t *testing.T, dir string) {
				p := logFiles(t, dir)[0]
				lines := readLines(t, p)
				lines = append(lines[:6:6], append([][]byte{lines[2]}, lines[6:]...)...)
				writeLines(t, p, lines)
			},
			noKey:   want{kind: ProblemInserted, line: 7},
			withKey: want{kind: ProblemInserted, line: 7},
		},
		{
			name: "inserted forged line",
			damage: func(t *testing.T, dir string) {
				p := logFiles(t, dir)[0]
				lines := readLines(t, p)
				forged := []byte(`{"seq":7,"time":"2026-01-01T00:00:00Z","kind":"exit","prev":"","hash":"` + string(bytes.Repeat([]byte("0"), 64)) + `"}`)
				lines = append(lines[:6:6], append([][]byte{forged}, lines[6:]...)...)
				writeLines(t, p, lines)
			},
			noKey:   want{kind: ProblemInserted, line: 7},
			withKey: want{kind: ProblemInserted, line: 7},
		},
		{
			name: "record edited and its hash recomputed",
			damage: func(t *testing.T, dir string) {
				p := logFiles(t, dir)[0]
				lines := readLines(t, p)
				var r Record
				json.Unmarshal(lines[4], &r)
				r.Command = "echo harmless"
				nl, _ := encodeLine(&r)
				lines[4] = bytes.TrimSuffix(nl, []byte("\n"))
				writeLines(t, p, lines)
			},
			noKey:   want{kind: ProblemModified, line: 5},
			withKey: want{kind: ProblemModified, line: 5},
		},
		{
			name: "cut tail inside a record",
			damage: func(t *testing.T, dir string) {
				fs := logFiles(t, dir)
				p := fs[len(fs)-1]
				fi, _ := os.Stat(p)
				os.Truncate(p, fi.Size()-10)
			},
			noKey:   want{kind: ProblemTruncated, file: -1},
			withKey: want{kind: ProblemTruncated, file: -1},
		},
		{
			name: "cut tail at a line boundary, removing the last seal",
			damage: func(t *testing.T, dir string) {
				fs := logFiles(t, dir)
				p := fs[len(fs)-1]
				lines := readLines(t, p)
				writeLines(t, p, lines[:len(lines)-3])
			},
			noKey:   want{whole: true}, // undetectable from the chain alone
			withKey: want{kind: ProblemTruncated, file: -1},
		},
		{
			name: "whole chain rewritten consistently, seals kept",
			damage: func(t *testing.T, dir string) {
				rechain(t, dir, func(r *Record) {
					if r.Command == "echo record 9" {
						r.Command = "echo nothing to see"
					}
				})
			},
			noKey:   want{whole: true}, // undetectable from the chain alone
			withKey: want{kind: ProblemBadSeal, file: -1},
		},
		{
			name: "whole log rewritten from scratch with a new key",
			damage: func(t *testing.T, dir string) {
				other := filepath.Join(t.TempDir(), "forged")
				makeLog(t, other, 40, Options{SealEvery: 10})
				for _, p := range logFiles(t, dir) {
					os.Remove(p)
				}
				for _, p := range append(logFiles(t, other), filepath.Join(other, DefaultSealKeyFile)) {
					b, _ := os.ReadFile(p)
					os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o600)
				}
			},
			noKey:   want{whole: true},
			withKey: want{kind: ProblemBadSeal, file: -1},
		},
		{
			name: "rotated file removed",
			opts: Options{MaxFileBytes: 2048},
			damage: func(t *testing.T, dir string) {
				fs := logFiles(t, dir)
				if len(fs) < 4 {
					t.Fatalf("want >= 4 files, have %d", len(fs))
				}
				os.Remove(fs[1])
			},
			noKey:   want{kind: ProblemMissingFile, file: 2, line: 1},
			withKey: want{kind: ProblemMissingFile, file: 2, line: 1},
		},
		{
			name: "first file removed without retention",
			opts: Options{MaxFileBytes: 2048},
			damage: func(t *testing.T, dir string) {
				os.Remove(logFiles(t, dir)[0])
			},
			noKey:   want{kind: ProblemMissingFile, file: -1},
			withKey: want{kind: ProblemMissingFile, file: -1},
		},
		{
			name: "end of a rotated file cut",
			opts: Options{MaxFileBytes: 2048},
			damage: func(t *testing.T, dir string) {
				p := logFiles(t, dir)[1]
				lines := readLines(t, p)
				writeLines(t, p, lines[:len(lines)-2])
			},
			noKey:   want{kind: ProblemTruncated, file: 1},
			withKey: want{kind: ProblemTruncated, file: 1},
		},
		{
			name: "seal key state removed",
			damage: func(t *testing.T, dir string) {
				os.Remove(filepath.Join(dir, DefaultSealKeyFile))
			},
			noKey:   want{whole: true},
			withKey: want{kind: ProblemBadSeal, file: -1},
		},
		{
			name: "seal record removed with its neighbours relinked",
			damage: func(t *testing.T, dir string) {
				p := logFiles(t, dir)[0]
				lines := readLines(t, p)
				var out [][]byte
				for _, l := range lines {
					if !bytes.Contains(l, []byte(`"seal_index":1,`)) {
						out = append(out, l)
					}
				}
				writeLines(t, p, out)
				seq := uint64(0)
				rechain(t, dir, func(r *Record) { seq++; r.Seq = seq })
			},
			noKey:   want{kind: ProblemBadSeal, file: -1},
			withKey: want{kind: ProblemBadSeal, file: -1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "audit")
			opts := tc.opts
			opts.SealEvery = 10
			key := makeLog(t, dir, 60, opts)
			files := logFiles(t, dir)
			tc.damage(t, dir)
			for _, k := range []struct {
				name string
				key  []byte
				w    want
			}{{"without key", nil, tc.noKey}, {"with key", key, tc.withKey}} {
				rep := mustVerify(t, dir, k.key)
				if k.w.whole {
					if !rep.Whole || rep.Problem != nil {
						t.Fatalf("%s: want whole, got %+v", k.name, rep.Problem)
					}
					continue
				}
				if rep.Whole || rep.Problem == nil {
					t.Fatalf("%s: want %s, got a whole log (%+v)", k.name, k.w.kind, rep)
				}
				p := rep.Problem
				if p.Kind != k.w.kind {
					t.Fatalf("%s: want %s, got %s", k.name, k.w.kind, p)
				}
				if k.w.file >= 0 && p.File != filepath.Base(files[k.w.file]) {
					t.Fatalf("%s: want file %s, got %s", k.name, filepath.Base(files[k.w.file]), p)
				}
				if k.w.line > 0 && p.Line != k.w.line {
					t.Fatalf("%s: want line %d, got %s", k.name, k.w.line, p)
				}
				t.Logf("%s: %s", k.name, p)
			}
		})
	}
}
