//go:build unix

package audit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadersRefuseNonRegularFiles plants a FIFO, a directory and a symbolic link under the
// names of a log file and of the seal key state: Verify, Read and Follow must refuse the
// file at once (a *PermissionError; for the key state, a bad-seal problem), never block.
func TestReadersRefuseNonRegularFiles(t *testing.T) {
	last := fileName(1)
	plants := []struct {
		name  string
		plant func(t *testing.T, path string)
	}{
		{"FIFO", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink to a FIFO", func(t *testing.T, p string) {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(fifo, p); err != nil {
				t.Fatal(err)
			}
		}},
	}
	readers := []struct {
		name string
		file string
		run  func(dir string) error
	}{
		{"Verify", last, func(dir string) error { _, err := Verify(dir, nil); return err }},
		{"Verify seal key state", DefaultSealKeyFile, func(dir string) error {
			rep, err := Verify(dir, readKey(t, dir))
			// The state is read after the chain: a bad one is the report's problem.
			if err == nil && rep.Problem != nil && rep.Problem.Kind == ProblemBadSeal && strings.HasPrefix(rep.Problem.Detail, "read seal key state: audit log: ") {
				return &PermissionError{Path: DefaultSealKeyFile, Problem: rep.Problem.Detail}
			}
			return err
		}},
		{"Read", last, func(dir string) error { return Read(dir, Filter{}, func(*Record) error { return nil }) }},
		{"Follow", last, func(dir string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			return Follow(ctx, dir, 0, 10*time.Millisecond, Filter{}, func(*Record) error { return nil })
		}},
	}
	for _, rd := range readers {
		for _, pl := range plants {
			t.Run(rd.name+"/"+pl.name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "log")
				makeLog(t, dir, 5, Options{})
				p := filepath.Join(dir, rd.file)
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				pl.plant(t, p)
				done := make(chan error, 1)
				go func() { done <- rd.run(dir) }()
				select {
				case err := <-done:
					var pe *PermissionError
					if !errors.As(err, &pe) {
						t.Fatalf("%s = %v, want a *PermissionError", rd.name, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s blocked for 10s on %s", rd.name, rd.file)
				}
			})
		}
	}
}

// TestVerifyNotesPermissions: a whole chain in a directory or file others may read is still
// whole, but the report says what the writer would refuse.
func TestVerifyNotesPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log")
	makeLog(t, dir, 5, Options{})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, fileName(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(dir, nil)
	if err != nil || !rep.Whole {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{"has mode 0755; want 0700", fileName(1) + " has mode 0644; want 0600"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}
