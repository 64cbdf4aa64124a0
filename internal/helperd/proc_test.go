package helperd_test

import (
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/testenv"
)

func groupGone(t *testing.T, pgid int) []int {
	t.Helper()
	if pgid <= 0 {
		t.Fatalf("no process group (pid %d)", pgid)
	}
	return testenv.WaitGroupGone(t, pgid, 5*time.Second)
}
