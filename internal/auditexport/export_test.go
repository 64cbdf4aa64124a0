package auditexport

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/s-code-dev/s-code/audit"
)

// otlpServer is a real OTLP/HTTP logs endpoint on 127.0.0.1 (optionally TLS): it decodes
// each request and keeps its records; while down it answers 503, while hung it never answers.
type otlpServer struct {
	addr   string
	caFile string
	down   atomic.Bool
	hang   chan struct{} // while not nil, requests wait on it

	mu      sync.Mutex // guards the fields below
	records []got
	headers []http.Header
}

// got is one record the server received.
type got struct {
	event, body string
	attrs       map[string]string
}

func startServer(t *testing.T, withTLS bool) *otlpServer {
	t.Helper()
	s := &otlpServer{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(s.serve)}
	if withTLS {
		cert, caPEM := selfSigned(t)
		s.caFile = filepath.Join(t.TempDir(), "ca.pem")
		if err := os.WriteFile(s.caFile, caPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}})
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *otlpServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	hang := s.hang
	s.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
			return
		}
	}
	if s.down.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path != "/v1/logs" {
		http.Error(w, "path", http.StatusNotFound)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var req collogspb.ExportLogsServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.headers = append(s.headers, r.Header.Clone())
	for _, rl := range req.GetResourceLogs() {
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				g := got{event: lr.GetEventName(), body: lr.GetBody().GetStringValue(), attrs: map[string]string{}}
				for _, kv := range lr.GetAttributes() {
					g.attrs[kv.GetKey()] = anyString(kv.GetValue())
				}
				for _, kv := range rl.GetResource().GetAttributes() {
					g.attrs["resource."+kv.GetKey()] = kv.GetValue().GetStringValue()
				}
				s.records = append(s.records, g)
			}
		}
	}
	s.mu.Unlock()
	resp, _ := proto.Marshal(&collogspb.ExportLogsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

// anyString returns a string or int value as text, anything else in protobuf's text form.
func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	}
	return strings.Join(strings.Fields(prototext.Format(v)), "")
}

func (s *otlpServer) received() []got {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]got(nil), s.records...)
}

// waitFor waits up to 20 s until the server holds n records.
func (s *otlpServer) waitFor(t *testing.T, n int) []got {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := s.received()
		if len(r) >= n {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the endpoint has %d records after 20s, want %d", len(r), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func selfSigned(t *testing.T) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test collector"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// writeSecret writes a credential file of the helper's user, mode 0600.
func writeSecret(t *testing.T, value string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func newExporter(t *testing.T, cfg Config, env map[string]string) *Exporter {
	t.Helper()
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	e, err := New(cfg, Settings{Service: "s-code-userhelper", Version: "test", Role: "user", LogDir: "/var/log/test",
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		e.Shutdown(ctx)
	})
	return e
}

// openLog opens a real audit log that tells e of its records.
func openLog(t *testing.T, e *Exporter) *audit.Log {
	t.Helper()
	l, err := audit.Open(filepath.Join(t.TempDir(), "audit"), audit.Options{DisableJournal: true, SealEvery: 5, Observer: e})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func appendN(t *testing.T, l *audit.Log, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		code := i
		if err := l.Append(context.Background(), &audit.Record{Kind: audit.KindExit, Command: fmt.Sprintf("echo %d", i), ExitCode: &code,
			Peer: &audit.Peer{UID: 1000, GID: 1000, PID: 42}, Env: []string{"A=1", "B=2"}}, true); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExportOverTLSWithHeaders: a TLS endpoint verified with ca_file, headers from an env:
// and a file: handle, each record's fields as attributes, its line as the body.
func TestExportOverTLSWithHeaders(t *testing.T) {
	srv := startServer(t, true)
	cfg := Config{Endpoint: srv.addr, Protocol: ProtocolHTTP, CAFile: srv.caFile,
		Headers: map[string]string{"Authorization": "env:OTEL_TOKEN", "X-Tenant": "file:" + writeSecret(t, "tenant-7")}}
	e := newExporter(t, cfg, map[string]string{"OTEL_TOKEN": "Bearer s3cret-token"})
	l := openLog(t, e)
	appendN(t, l, 3)
	recs := srv.waitFor(t, 3)
	srv.mu.Lock()
	h := srv.headers[0]
	srv.mu.Unlock()
	if h.Get("Authorization") != "Bearer s3cret-token" || h.Get("X-Tenant") != "tenant-7" {
		t.Fatalf("headers: %v", h)
	}
	r := recs[0]
	if r.event != EventRecord || !strings.HasPrefix(r.body, `{"seq":1,`) {
		t.Fatalf("first record: %+v", r)
	}
	want := map[string]string{
		"scode.audit.seq": "1", "scode.audit.kind": "exit", "scode.audit.command": "echo 0", "scode.audit.exit_code": "0",
		"scode.audit.seal_index": "0", "scode.audit.prev": "", "resource.service.name": "s-code-userhelper",
		"resource.scode.audit.log_dir": "/var/log/test", "resource.scode.helper.role": "user",
	}
	for k, v := range want {
		if got := r.attrs[k]; got != v {
			t.Errorf("attribute %s = %q, want %q", k, got, v)
		}
	}
	if !strings.Contains(r.body, `"hash":"`+r.attrs["scode.audit.hash"]+`"`) || len(r.attrs["scode.audit.hash"]) != 64 {
		t.Errorf("hash attribute %q is not the body's", r.attrs["scode.audit.hash"])
	}
	if p := r.attrs["scode.audit.peer"]; !strings.Contains(p, `key:"uid"value:{int_value:1000}`) {
		t.Errorf("peer attribute is not a map of the peer: %s", p)
	}
	if r2 := recs[1]; r2.attrs["scode.audit.prev"] != r.attrs["scode.audit.hash"] {
		t.Errorf("second record's prev %q is not the first's hash", r2.attrs["scode.audit.prev"])
	}
	for _, k := range []string{"scode.audit.hash", "scode.audit.prev", "scode.audit.peer", "scode.audit.env", "scode.audit.time"} {
		if _, ok := r.attrs[k]; !ok {
			t.Errorf("attribute %s missing (have %v)", k, r.attrs)
		}
	}
	if st := e.Stats(); st.Exported != 3 || st.Failed != 0 || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestExportRefusesUntrustedTLS: without the CA, the self-signed endpoint is refused, and
// that is a counted failure, never a record sent in the clear.
func TestExportRefusesUntrustedTLS(t *testing.T) {
	srv := startServer(t, true)
	e := newExporter(t, Config{Endpoint: srv.addr, Protocol: ProtocolHTTP}, nil)
	l := openLog(t, e)
	appendN(t, l, 1)
	deadline := time.Now().Add(10 * time.Second)
	for e.Stats().Failed == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st := e.Stats()
	if st.Failed == 0 || !strings.Contains(st.LastError, "certificate") || st.Backlog != 1 || len(srv.received()) != 0 {
		t.Fatalf("stats %+v, received %d", st, len(srv.received()))
	}
}

// TestOutageRetriesThenGap: while the endpoint is down the records wait (retried and
// counted); once the queue is full the rest are dropped and counted; when the endpoint is
// back, the queued records arrive, then one gap record naming exactly the dropped seqs,
// then what came after. Appends never waited for any of it.
func TestOutageRetriesThenGap(t *testing.T) {
	srv := startServer(t, false)
	srv.down.Store(true)
	e := newExporter(t, Config{Endpoint: srv.addr, Protocol: ProtocolHTTP, Insecure: true, Queue: 4}, nil)
	l := openLog(t, e)
	start := time.Now()
	appendN(t, l, 10) // seq 1..12: a seal after every 5 records (seq 6 and 12)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("appends took %s with the endpoint down", d)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.Stats().Failed < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st := e.Stats()
	if st.Backlog != 4 || st.Dropped != 8 || st.Failed < 2 || st.Exported != 0 {
		t.Fatalf("during the outage: %+v", st)
	}
	srv.down.Store(false)
	recs := srv.waitFor(t, 5)
	appendN(t, l, 1)
	recs = srv.waitFor(t, 6)
	var seqs []string
	for _, r := range recs {
		if r.event == EventGap {
			seqs = append(seqs, fmt.Sprintf("gap(%s..%s n=%s)", num(r.attrs["scode.audit.gap.first_seq"]), num(r.attrs["scode.audit.gap.last_seq"]), num(r.attrs["scode.audit.gap.count"])))
			continue
		}
		seqs = append(seqs, num(r.attrs["scode.audit.seq"]))
	}
	if got := strings.Join(seqs, " "); got != "1 2 3 4 gap(5..12 n=8) 13" {
		t.Fatalf("arrived: %s", got)
	}
	if st := e.Stats(); st.Exported != 5 || st.Dropped != 8 || st.Backlog != 0 || st.LastError != "" {
		t.Fatalf("after the outage: %+v", st)
	}
}

func num(s string) string { return strings.TrimPrefix(s, "int_value:") }

// TestHungEndpointBlocksNothing: an endpoint that accepts and never answers: appends go on
// at full speed, each export attempt ends at the timeout and is counted, and Shutdown gives
// up at its deadline saying which records were not sent.
func TestHungEndpointBlocksNothing(t *testing.T) {
	srv := startServer(t, false)
	srv.hang = make(chan struct{})
	defer close(srv.hang)
	e := newExporter(t, Config{Endpoint: srv.addr, Protocol: ProtocolHTTP, Insecure: true, Timeout: "300ms"}, nil)
	l := openLog(t, e)
	start := time.Now()
	appendN(t, l, 50)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("50 appends took %s with the endpoint hung", d)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.Stats().Failed == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if st := e.Stats(); st.Failed == 0 || st.Exported != 0 {
		t.Fatalf("stats %+v", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	err := e.Shutdown(ctx)
	if !errors.Is(err, ErrBacklog) || !strings.Contains(err.Error(), "(seq 1 to 60)") {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Fatalf("Shutdown took %s", d)
	}
}
