package listener

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// The test binary doubles as a tiny helper daemon: with S_CODE_LISTENER_HELPER=1 it calls
// Listen with the Config described by the S_CODE_LISTENER_* variables, prints one status line
// ("source=systemd listen_env=" or "error=activation ..."), then answers one connection by
// echoing a line prefixed with the source.

const helperEnv = "S_CODE_LISTENER_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

func helperMain() int {
	cfg := Config{Path: os.Getenv("S_CODE_LISTENER_PATH"), Mode: 0o600, GID: -1}
	if n := os.Getenv("S_CODE_LISTENER_NAMES"); n != "" {
		cfg.Names = strings.Split(n, ",")
	}
	l, src, err := Listen(cfg)
	if err != nil {
		fmt.Printf("error=%s %v\n", errorKind(err), err)
		return 1
	}
	defer l.Close()
	// The LISTEN_* variables must be gone, so the commands a helper runs never see them.
	var left []string
	for _, k := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
		if _, ok := os.LookupEnv(k); ok {
			left = append(left, k)
		}
	}
	fmt.Printf("source=%s listen_env=%s\n", src, strings.Join(left, ","))
	c, err := l.Accept()
	if err != nil {
		fmt.Printf("accept: %v\n", err)
		return 1
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 1
	}
	fmt.Fprintf(c, "%s %s", src, line)
	return 0
}

// errorKind names the sentinel an error wraps, for the helper's status line.
func errorKind(err error) string {
	for _, k := range []struct {
		name string
		err  error
	}{
		{"activation", ErrActivation},
		{"no-listener", ErrNoListener},
		{"in-use", ErrInUse},
		{"not-socket", ErrNotSocket},
		{"unsafe-dir", ErrUnsafeDir},
		{"too-long", ErrPathTooLong},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	return "other"
}
