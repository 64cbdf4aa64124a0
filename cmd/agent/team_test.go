package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/s-code-dev/s-code/internal/testenv"
)

// Uids and gids of the team approval test: a requester and an approver (both in the
// approvers group), and a colleague who may use the root helper but is not an approver.
const (
	teamRequester  = 61001
	teamApprover   = 61002
	teamColleague  = 61003
	teamApprovers  = 61100 // the approvers group
	teamSocketGID  = 61200 // the group that may connect to the root helper's socket
	teamTimeoutSec = 4
)

// teamUser runs the test binary as s-code with uid (and the given supplementary groups).
func teamUser(bin, dir string, uid uint32, groups []uint32, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, "s-code"), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "XDG_CONFIG_HOME=" + dir + "/.config"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: groups}}
	return cmd
}

// TestTeamApprovals runs a real root helper whose policy names an approvers group, and
// three real uids against it: a request that needs an approver waits as pending; the
// requester cannot approve it, nor can a uid outside the group; another approver's
// approval runs it, a deny or the timeout does not; the audit log records both uids.
func TestTeamApprovals(t *testing.T) {
	testenv.RequireRoot(t)
	bin := testenv.PublicDir(t)
	testenv.CopyExecutable(t, os.Args[0], filepath.Join(bin, "s-code"))
	testenv.CopyExecutable(t, os.Args[0], filepath.Join(bin, "s-code-roothelper"))
	dir := testenv.PublicDir(t)
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(ws, teamRequester, teamRequester)
	policy := filepath.Join(dir, "roothelper.toml")
	os.WriteFile(policy, []byte(fmt.Sprintf(`[allow]
users = [%d, %d, %d]

[socket]
group = %d

[approvals]
group = %d
rules = ["write.*", "root.change"]
timeout = "%ds"
`, teamRequester, teamApprover, teamColleague, teamSocketGID, teamApprovers, teamTimeoutSec)), 0o644)
	sock := filepath.Join(dir, "root.sock")
	auditDir := filepath.Join(t.TempDir(), "audit")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	helper := exec.CommandContext(ctx, filepath.Join(bin, "s-code-roothelper"), "--listen", sock, "--policy", policy, "--audit-dir", auditDir)
	var hlog bytes.Buffer
	helper.Stdout, helper.Stderr = &hlog, &hlog
	helper.Cancel = func() error { return helper.Process.Signal(syscall.SIGTERM) }
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		helper.Wait()
		if t.Failed() {
			t.Logf("root helper log:\n%s", hlog.String())
		}
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i > 200 {
			t.Fatalf("no socket: %s", hlog.String())
		}
		time.Sleep(25 * time.Millisecond)
	}

	requesterGroups := []uint32{teamSocketGID, teamApprovers} // an approver too, but not of their own request
	approverGroups := []uint32{teamSocketGID, teamApprovers}
	colleagueGroups := []uint32{teamSocketGID}
	pendingRE := regexp.MustCompile(`request ([0-9a-f]{32}) waits for a team approver`)

	// request starts s-code run --root for file name as the requester and returns the
	// pending id it prints, and a function that waits for its end (exit status, stderr).
	request := func(name string) (string, func() (int, string)) {
		cmd := teamUser(bin, ws, teamRequester, requesterGroups, "run", "--root", "--yes", "--socket", sock, "--", "touch "+filepath.Join(ws, name))
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		idc := make(chan string, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				all.WriteString(sc.Text() + "\n")
				if m := pendingRE.FindStringSubmatch(sc.Text()); m != nil {
					idc <- m[1]
				}
			}
		}()
		var id string
		select {
		case id = <-idc:
		case <-done:
			cmd.Wait()
			t.Fatalf("the request never went pending: %s", all.String())
		case <-time.After(10 * time.Second):
			t.Fatalf("no pending line: %s", all.String())
		}
		return id, func() (int, string) {
			<-done
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return code, all.String()
		}
	}
	approvals := func(uid uint32, groups []uint32, args ...string) (int, string) {
		out, err := teamUser(bin, dir, uid, groups, append([]string{"approvals", "--socket", sock}, args...)...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}

	// 1. approved by another approver: it runs.
	id, wait := request("ran-approved")
	code, out := approvals(teamApprover, approverGroups, "list")
	if code != 0 || !strings.Contains(out, id[:12]) || !strings.Contains(out, "touch") {
		t.Fatalf("approvals list by the approver: %d %s", code, out)
	}
	t.Logf("s-code approvals list:\n%s", out)
	if code, out := approvals(teamApprover, approverGroups, "show", id[:8]); code != 0 || !strings.Contains(out, fmt.Sprintf("from uid %d", teamRequester)) || !strings.Contains(out, "ran-approved") {
		t.Fatalf("approvals show: %d %s", code, out)
	}
	// The requester, though in the approvers group, cannot approve their own request.
	if code, out := approvals(teamRequester, requesterGroups, "approve", id); code != 1 || !strings.Contains(out, "approval.not-approver") || !strings.Contains(out, "cannot decide it") {
		t.Fatalf("the requester approving their own request: %d %s", code, out)
	}
	// A colleague outside the approvers group sees nothing and decides nothing.
	if code, out := approvals(teamColleague, colleagueGroups, "list"); code != 1 || !strings.Contains(out, "not in the approvers group") {
		t.Fatalf("approvals list by a non-approver: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran-approved")); err == nil {
		t.Fatal("the command ran before anyone approved it")
	}
	if code, out := approvals(teamApprover, approverGroups, "approve", id[:10]); code != 0 || !strings.Contains(out, "approved request "+id) {
		t.Fatalf("approve: %d %s", code, out)
	} else {
		t.Logf("s-code approvals approve:\n%s", out)
	}
	if code, out := wait(); code != 0 {
		t.Fatalf("the approved request exited %d: %s", code, out)
	} else {
		t.Logf("the requester's s-code run:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran-approved")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	// Decided once: a second decision finds nothing pending.
	if code, out := approvals(teamApprover, approverGroups, "deny", id); code != 1 || !strings.Contains(out, "no pending request") {
		t.Fatalf("deciding again: %d %s", code, out)
	}

	// 2. denied: it does not run.
	id, wait = request("ran-denied")
	if code, out := approvals(teamApprover, approverGroups, "deny", id); code != 0 || !strings.Contains(out, "denied request") {
		t.Fatalf("deny: %d %s", code, out)
	}
	if code, out := wait(); code != 126 || !strings.Contains(out, "approval.denied") || !strings.Contains(out, fmt.Sprint(teamApprover)) {
		t.Fatalf("the denied request: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran-denied")); err == nil {
		t.Fatal("a denied command ran")
	}

	// 3. nobody decides: after the policy's timeout it does not run.
	_, wait = request("ran-timeout")
	if code, out := wait(); code != 126 || !strings.Contains(out, "approval.timeout") {
		t.Fatalf("the request nobody decided: %d %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran-timeout")); err == nil {
		t.Fatal("a command nobody approved ran")
	}

	// The audit log: the approved run's start record names the requester (peer) and the
	// approver; the denied one names both too; refused decisions are denied records.
	logs, _ := filepath.Glob(filepath.Join(auditDir, "*.jsonl"))
	var audit strings.Builder
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		audit.Write(b)
	}
	a := audit.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(fmt.Sprintf(`"kind":"start".*"peer":\{"uid":%d.*ran-approved.*"approval":\{"channel":"team".*"approver":\{"uid":%d`, teamRequester, teamApprover)),
		regexp.MustCompile(fmt.Sprintf(`"kind":"denied".*"peer":\{"uid":%d.*ran-denied.*approval.denied.*"approver":\{"uid":%d`, teamRequester, teamApprover)),
		regexp.MustCompile(`"kind":"denied".*ran-timeout.*approval.timeout`),
		regexp.MustCompile(fmt.Sprintf(`"kind":"denied".*"peer":\{"uid":%d.*"command":"approvals approve [0-9a-f]{32}".*approval.not-approver`, teamRequester)),
	} {
		if !want.MatchString(a) {
			t.Errorf("audit log lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("audit log:\n%s", a)
	}
}
