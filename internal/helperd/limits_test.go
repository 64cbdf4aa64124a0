package helperd_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/local"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/execrun"
	"github.com/s-code-dev/s-code/internal/helperd"
	"github.com/s-code-dev/s-code/internal/testenv"
	helperv1 "github.com/s-code-dev/s-code/proto/scode/helper/v1"
	"github.com/s-code-dev/s-code/safety"
)

// flood is the child process of TestFloodKeepsOwnerServed (HELPERD_TEST_FLOOD=socket): it
// opens floodConns connections, makes floodCalls calls on each and one request over the
// message size limit, prints "ready" and the count of each status code, and holds its
// connections open until its standard input ends.
func flood(sock string) int {
	const floodConns, floodCalls = 20, 30
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	codesSeen := map[codes.Code]int{}
	var wg sync.WaitGroup
	var conns []*grpc.ClientConn
	for range floodConns {
		conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(local.NewCredentials()))
		if err != nil {
			fmt.Println("dial", err)
			return 3
		}
		conns = append(conns, conn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := helperv1.NewHelperClient(conn)
			for range floodCalls {
				_, err := c.Status(ctx, &helperv1.StatusRequest{})
				mu.Lock()
				codesSeen[status.Code(err)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// A connection of its own (the others are over the limit or hold their slot).
	for _, c := range conns[1:] {
		c.Close()
	}
	time.Sleep(200 * time.Millisecond)
	fresh, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(local.NewCredentials()))
	if err != nil {
		fmt.Println("dial", err)
		return 3
	}
	conns = append(conns, fresh)
	big := strings.Repeat("x", helperd.MaxMessageSize+1)
	_, err = helperv1.NewHelperClient(fresh).Check(ctx, &helperv1.CheckRequest{Command: big}, grpc.MaxCallSendMsgSize(4<<20), grpc.WaitForReady(true))
	fmt.Printf("big=%s\n", status.Code(err))
	for c, n := range codesSeen {
		fmt.Printf("%s=%d\n", c, n)
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	for _, c := range conns {
		c.Close()
	}
	return 0
}

// TestFloodKeepsOwnerServed: another uid opening many connections and making many calls,
// refused or over its limits, cannot keep the helper from serving its owner or from
// auditing: while the flood holds its connections, the owner's calls and commands work; the
// refusals are audited, bursts as one summarizing record per interval; the over-size request
// is refused with its own audit record.
func TestFloodKeepsOwnerServed(t *testing.T) {
	testenv.RequireRoot(t)
	exe := testenv.PublicExecutable(t)
	const interval = 300 * time.Millisecond
	sock, aud := publicServer(t, helperd.Config{Role: safety.RoleUser, Authorize: helperd.SameUID(0),
		Limits: helperd.Limits{MaxConnsPerUID: 4, MaxCallsPerUID: 4, CallRate: 20, CallBurst: 10, RefusalInterval: interval}})

	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = []string{"HELPERD_TEST_FLOOD=" + sock, "PATH=" + execrun.SafePath}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if sc.Text() == "ready" {
			break
		}
	}
	t.Logf("flood client:\n%s", out.String())
	if !strings.Contains(out.String(), "big=ResourceExhausted") {
		t.Fatalf("the over-size request was not refused as too large: %s", out.String())
	}
	if strings.Contains(out.String(), "\nOK=") {
		t.Fatalf("a call of the refused uid succeeded: %s", out.String())
	}

	// The flood still holds its connections: the owner is served.
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(local.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := helperv1.NewHelperClient(conn)
	// (The owner's own allowance is CallBurst calls at once: it uses half.)
	for i := range 5 {
		if _, err := c.Status(context.Background(), &helperv1.StatusRequest{}); err != nil {
			t.Fatalf("owner's Status %d during the flood: %v", i, err)
		}
	}
	e := &env{client: c, aud: aud, work: t.TempDir()}
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "echo served", Cwd: e.work, Approval: approve()}, nil)
	if r.err != nil || r.denied != nil || r.stdout.String() != "served\n" {
		t.Fatalf("owner's command during the flood: err %v denied %v out %q", r.err, r.denied, r.stdout.String())
	}
	if _, ok := aud.find(audit.KindExit, r.requestID); !ok {
		t.Fatal("the owner's command has no exit record: auditing stopped")
	}

	// The refusals are audited, bounded, and summarized.
	time.Sleep(2 * interval)
	stdin.Close()
	refused := map[string]int{}
	summaries := 0
	aud.mu.Lock()
	for _, rec := range aud.records {
		if rec.Kind != audit.KindRefused || rec.Peer == nil || rec.Peer.UID != 65534 {
			continue
		}
		refused[rec.Verdict.Rules[0]]++
		if strings.Contains(rec.Reason, "more refusal(s) of uid 65534") {
			summaries++
		}
	}
	aud.mu.Unlock()
	t.Logf("refusal records of uid 65534: %v (%d summaries)", refused, summaries)
	total := 0
	for _, n := range refused {
		total += n
	}
	if total == 0 || total > 30 {
		t.Fatalf("%d refusal records for 600+ refused calls and connections: want them summarized, not dropped or one each", total)
	}
	if summaries == 0 {
		t.Fatal("no summarizing record")
	}
	if refused[helperd.RuleTooLarge] == 0 {
		t.Fatalf("no %s record", helperd.RuleTooLarge)
	}
	if refused[helperd.RuleLimitConnections] == 0 {
		t.Fatalf("no %s record", helperd.RuleLimitConnections)
	}
}

// TestOversizeAudited: the owner's own over-size messages, a unary request and a stream's
// start message, are refused and audited (the first at once, the second of the same
// interval in the summary), and the helper serves the next call.
func TestOversizeAudited(t *testing.T) {
	e := newEnv(t, func(c *helperd.Config) { c.Limits.RefusalInterval = 200 * time.Millisecond })
	big := strings.Repeat("x", helperd.MaxMessageSize+1)
	_, err := e.client.Check(ctx(t), &helperv1.CheckRequest{Command: big}, grpc.MaxCallSendMsgSize(4<<20))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("over-size Check: %v", err)
	}
	st, err := e.client.Exec(ctx(t), grpc.MaxCallSendMsgSize(4<<20))
	if err != nil {
		t.Fatal(err)
	}
	st.Send(&helperv1.ExecRequest{Msg: &helperv1.ExecRequest_Start{Start: &helperv1.ExecStart{Command: big, Cwd: e.work, Approval: approve()}}})
	for {
		if _, err := st.Recv(); err != nil {
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("over-size Exec start: %v", err)
			}
			break
		}
	}
	time.Sleep(500 * time.Millisecond)
	n := 0
	e.aud.mu.Lock()
	for _, rec := range e.aud.records {
		if rec.Kind == audit.KindRefused && rec.Verdict != nil && rec.Verdict.Rules[0] == helperd.RuleTooLarge && rec.Peer != nil && rec.Peer.UID == uint32(os.Geteuid()) {
			n++
			t.Logf("record: %s", rec.Reason)
		}
	}
	e.aud.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d %s records, want 2 (the unary request, then a summary of the stream message)", n, helperd.RuleTooLarge)
	}
	if _, err := e.client.Status(ctx(t), &helperv1.StatusRequest{}); err != nil {
		t.Fatalf("Status after the refusals: %v", err)
	}
}

// TestCallLimit: a uid with MaxCallsPerUID commands running gets ResourceExhausted
// (limit.calls) for one more, audited, and is served again once one ends.
func TestCallLimit(t *testing.T) {
	e := newEnv(t, func(c *helperd.Config) { c.Limits.MaxCallsPerUID = 2 })
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.exec(ctx(t), &helperv1.ExecStart{Command: "sleep 1", Cwd: e.work, Approval: approve()}, nil)
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); e.srv.Running() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the two commands did not start")
		}
	}
	r := e.exec(ctx(t), &helperv1.ExecStart{Command: "echo third", Cwd: e.work, Approval: approve()}, nil)
	if status.Code(r.err) != codes.ResourceExhausted || !strings.Contains(r.err.Error(), helperd.RuleLimitCalls) {
		t.Fatalf("third call: err %v denied %v", r.err, r.denied)
	}
	if rec, ok := e.aud.find(audit.KindRefused, ""); !ok || rec.Verdict.Rules[0] != helperd.RuleLimitCalls {
		t.Fatalf("refusal record %+v %v", rec, ok)
	}
	wg.Wait()
	r = e.exec(ctx(t), &helperv1.ExecStart{Command: "echo again", Cwd: e.work, Approval: approve()}, nil)
	if r.err != nil || r.stdout.String() != "again\n" {
		t.Fatalf("after the limit: err %v out %q", r.err, r.stdout.String())
	}
}
