package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// GroupMembers returns the pids of the live (not zombie) processes whose process group is
// pgid, read from /proc/*/stat (proc(5): field 5 is pgrp). It skips the test off Linux.
func GroupMembers(t testing.TB, pgid int) []int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc (Linux)")
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended meanwhile
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		// f[0] is the state, f[2] the process group.
		if len(f) < 3 || string(f[0]) == "Z" || string(f[0]) == "X" {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// WaitGroupGone waits up to d for process group pgid to have no live member and returns the
// members left when it gave up (nil when the group is gone).
func WaitGroupGone(t testing.TB, pgid int, d time.Duration) []int {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		m := GroupMembers(t, pgid)
		if len(m) == 0 || time.Now().After(deadline) {
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
}
