package helperd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/s-code-dev/s-code/audit"
	"github.com/s-code-dev/s-code/internal/peerauth"
	"github.com/s-code-dev/s-code/internal/peercred"
)

// Rule ids of the limits (DESIGN.md "rule id").
const (
	RuleLimitConnections = "limit.connections" // the uid has MaxConnsPerUID connections open
	RuleLimitCalls       = "limit.calls"       // the uid has MaxCallsPerUID calls in progress
	RuleLimitRate        = "limit.rate"        // the uid calls faster than CallRate (burst CallBurst)
	RuleTooLarge         = "request.too-large" // a message is larger than MaxMessageSize
)

// Defaults of Limits.
const (
	DefaultMaxConnsPerUID = 64
	// DefaultMaxCallsPerUID is above DefaultMaxConcurrent, so that an owner's commands
	// waiting for a slot are not refused.
	DefaultMaxCallsPerUID = 2 * DefaultMaxConcurrent
	// DefaultCallRate is above what one owner needs at full speed (one command is two
	// calls, Plan and Exec; the goal is 1,000 commands/s from 32 clients): the rate limit
	// keeps one uid from taking the helper from the others, not the owner from working.
	DefaultCallRate        = 4000 // calls per second
	DefaultCallBurst       = 8000
	DefaultRefusalInterval = 10 * time.Second
	// maxRefusalKeys bounds the (uid, rule) pairs the refusal summarizer tracks; beyond it
	// refusals share one key, so memory stays bounded however many uids call.
	maxRefusalKeys = 4096
)

// Limits bound what one uid can take of a helper, so that no caller, admitted or refused,
// can keep the helper from serving its owner or from writing its audit log. Every limit is
// per uid (the kernel's peer credentials): one uid's calls never use another's allowance.
// Zero fields take the defaults.
type Limits struct {
	// MaxConnsPerUID is how many connections one uid may have open at once; a further
	// connection is closed at its handshake (DefaultMaxConnsPerUID).
	MaxConnsPerUID int
	// MaxCallsPerUID is how many calls one uid may have in progress at once (a running
	// command is one call); a further call fails with ResourceExhausted
	// (DefaultMaxCallsPerUID).
	MaxCallsPerUID int
	// CallRate is how many calls per second one uid may start, sustained; CallBurst how
	// many at once after a quiet time (a token bucket; DefaultCallRate, DefaultCallBurst).
	CallRate  float64
	CallBurst int
	// RefusalInterval is how often refusals are summarized: of one uid and rule, the first
	// refusal of an interval is an audit record of its own, the others one summarizing
	// record at the interval's end (DefaultRefusalInterval).
	RefusalInterval time.Duration
}

func (l *Limits) defaults() {
	if l.MaxConnsPerUID <= 0 {
		l.MaxConnsPerUID = DefaultMaxConnsPerUID
	}
	if l.MaxCallsPerUID <= 0 {
		l.MaxCallsPerUID = DefaultMaxCallsPerUID
	}
	if l.CallRate <= 0 {
		l.CallRate = DefaultCallRate
	}
	if l.CallBurst <= 0 {
		l.CallBurst = DefaultCallBurst
	}
	if l.RefusalInterval <= 0 {
		l.RefusalInterval = DefaultRefusalInterval
	}
}

// limiter counts what each uid holds.
type limiter struct {
	lim Limits

	mu      sync.Mutex // guards the maps
	conns   map[uint32]int
	calls   map[uint32]int
	buckets map[uint32]*bucket
}

// bucket is a token bucket: tokens, refilled at CallRate up to CallBurst.
type bucket struct {
	tokens float64
	last   time.Time
}

// refill adds the tokens earned since the last refill.
func (b *bucket) refill(now time.Time, l Limits) {
	b.tokens = min(float64(l.CallBurst), b.tokens+now.Sub(b.last).Seconds()*l.CallRate)
	b.last = now
}

func newLimiter(l Limits) *limiter {
	l.defaults()
	return &limiter{lim: l, conns: map[uint32]int{}, calls: map[uint32]int{}, buckets: map[uint32]*bucket{}}
}

// acquireConn reports whether uid may open one more connection, and counts it if so.
func (l *limiter) acquireConn(uid uint32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns[uid] >= l.lim.MaxConnsPerUID {
		return false
	}
	l.conns[uid]++
	return true
}

func (l *limiter) releaseConn(uid uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns[uid]--; l.conns[uid] <= 0 {
		delete(l.conns, uid)
	}
}

// acquireCall returns "" and counts the call when uid may start one more, else the rule id
// of the limit it is over.
func (l *limiter) acquireCall(uid uint32, now time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[uid]
	if b == nil {
		b = &bucket{tokens: float64(l.lim.CallBurst), last: now}
		l.buckets[uid] = b
	}
	b.refill(now, l.lim)
	if l.calls[uid] >= l.lim.MaxCallsPerUID {
		return RuleLimitCalls
	}
	if b.tokens < 1 {
		return RuleLimitRate
	}
	b.tokens--
	l.calls[uid]++
	return ""
}

func (l *limiter) releaseCall(uid uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls[uid]--; l.calls[uid] <= 0 {
		delete(l.calls, uid)
	}
	// A full bucket of an idle uid carries no state: drop it, so the map stays small.
	if b := l.buckets[uid]; b != nil && l.calls[uid] == 0 {
		if b.refill(time.Now(), l.lim); b.tokens >= float64(l.lim.CallBurst) {
			delete(l.buckets, uid)
		}
	}
}

// refusalKey is what the summarizer groups refusals by.
type refusalKey struct {
	uid      uint32
	known    bool // the uid is known (peer credentials were read)
	rule     string
	overflow bool // the key of every uid beyond maxRefusalKeys
}

// refusalCount is the refusals of one key in the current interval beyond the first.
type refusalCount struct {
	since time.Time
	n     int
	last  audit.Record
}

// refusals writes refusal records so that a burst costs at most two records per key and
// interval: the first refusal in full, then one summary of the rest.
type refusals struct {
	interval time.Duration
	write    func(*audit.Record)

	mu      sync.Mutex // guards the fields below
	keys    map[refusalKey]*refusalCount
	timer   *time.Timer
	stopped bool
}

func newRefusals(interval time.Duration, write func(*audit.Record)) *refusals {
	return &refusals{interval: interval, write: write, keys: map[refusalKey]*refusalCount{}}
}

// note records the refusal r under key: written now when it is the key's first in this
// interval, else counted for the summary.
func (f *refusals) note(key refusalKey, r *audit.Record) {
	f.mu.Lock()
	if _, ok := f.keys[key]; !ok && len(f.keys) >= maxRefusalKeys {
		key = refusalKey{rule: key.rule, overflow: true}
	}
	c, ok := f.keys[key]
	if ok {
		if c.n == 0 {
			c.since = time.Now()
		}
		c.n++
		c.last = *r
		f.mu.Unlock()
		return
	}
	f.keys[key] = &refusalCount{}
	if f.timer == nil && !f.stopped {
		f.timer = time.AfterFunc(f.interval, f.flush)
	}
	f.mu.Unlock()
	f.write(r)
}

// flush writes one summary for each key refused more than once in the interval, forgets
// keys that were quiet, and re-arms the timer while keys remain.
func (f *refusals) flush() {
	f.mu.Lock()
	var out []audit.Record
	for k, c := range f.keys {
		if c.n == 0 {
			delete(f.keys, k)
			continue
		}
		s := c.last
		who := "callers without peer credentials"
		switch {
		case k.overflow:
			who = fmt.Sprintf("callers of more than %d uids", maxRefusalKeys)
		case k.known:
			who = fmt.Sprintf("uid %d", k.uid)
		}
		s.Reason = fmt.Sprintf("%s: %d more refusal(s) of %s since %s (summarized: one record per %v); the last: %s", k.rule, c.n, who, c.since.UTC().Format(time.RFC3339), f.interval, s.Reason)
		out = append(out, s)
		c.n = 0
	}
	f.timer = nil
	if len(f.keys) > 0 && !f.stopped {
		f.timer = time.AfterFunc(f.interval, f.flush)
	}
	f.mu.Unlock()
	for i := range out {
		f.write(&out[i])
	}
}

// stop writes the pending summaries and stops the timer.
func (f *refusals) stop() {
	f.mu.Lock()
	f.stopped = true
	if f.timer != nil {
		f.timer.Stop()
	}
	f.mu.Unlock()
	f.flush()
}

// auditRefusal records a refused connection or call through the summarizer.
func (s *Server) auditRefusal(r *audit.Record) {
	key := refusalKey{}
	if r.Peer != nil {
		key = refusalKey{uid: r.Peer.UID, known: true}
	}
	if r.Verdict != nil && len(r.Verdict.Rules) > 0 {
		key.rule = r.Verdict.Rules[0]
	}
	s.refusals.note(key, r)
}

func (s *Server) refusalRecord(c *peercred.Creds, rule, reason string) *audit.Record {
	r := &audit.Record{Kind: audit.KindRefused, Helper: s.cfg.Role.String(), Verdict: denialSummary(rule, nil), Reason: rule + ": " + reason}
	if c != nil {
		r.Peer = auditPeer(*c)
	}
	return r
}

// limitCreds wraps the peer-credential transport credentials with the per-uid connection
// limit: a connection over it is closed at the handshake and its refusal audited.
type limitCreds struct {
	credentials.TransportCredentials
	s *Server
}

// ServerHandshake reads the peer credentials (the wrapped credentials) and admits the
// connection when its uid is under MaxConnsPerUID.
func (c limitCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, ai, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		return out, ai, err
	}
	pa, ok := ai.(peerauth.AuthInfo)
	if !ok {
		out.Close()
		return nil, nil, errors.New("helperd: handshake without peer credentials")
	}
	uid := pa.Creds.UID
	if !c.s.lim.acquireConn(uid) {
		out.Close()
		c.s.auditRefusal(c.s.refusalRecord(&pa.Creds, RuleLimitConnections, fmt.Sprintf("uid %d already has %d connections open", uid, c.s.lim.lim.MaxConnsPerUID)))
		return nil, nil, fmt.Errorf("helperd: %s: uid %d has too many connections open", RuleLimitConnections, uid)
	}
	return &countedConn{Conn: out, release: sync.OnceFunc(func() { c.s.lim.releaseConn(uid) })}, ai, nil
}

// Clone returns a copy sharing the server.
func (c limitCreds) Clone() credentials.TransportCredentials {
	return limitCreds{TransportCredentials: c.TransportCredentials.Clone(), s: c.s}
}

// countedConn releases its uid's connection count once, when closed.
type countedConn struct {
	net.Conn
	release func()
}

func (c *countedConn) Close() error {
	c.release()
	return c.Conn.Close()
}

// callMark is put in every call's context by the stats handler; the interceptors set seen,
// so that a call refused before any interceptor ran (a unary request over MaxMessageSize is
// refused while it is decoded) is still audited.
type callMark struct {
	method string
	seen   bool // set by the interceptors (the call's goroutine); read at the call's end
}

type callMarkKey struct{}

// limitCall checks the call limits of the caller in ctx; the returned release must be
// called when the call ends (nil when refused).
func (s *Server) limitCall(ctx context.Context, method string) (func(), error) {
	if m, ok := ctx.Value(callMarkKey{}).(*callMark); ok {
		m.seen = true
	}
	c, err := peerauth.FromContext(ctx)
	if err != nil {
		return func() {}, nil // authorize refuses and audits it
	}
	if rule := s.lim.acquireCall(c.UID, time.Now()); rule != "" {
		reason := fmt.Sprintf("%s: uid %d has %d calls in progress", method, c.UID, s.lim.lim.MaxCallsPerUID)
		if rule == RuleLimitRate {
			reason = fmt.Sprintf("%s: uid %d calls faster than %g per second", method, c.UID, s.lim.lim.CallRate)
		}
		s.auditRefusal(s.refusalRecord(&c, rule, reason))
		return nil, status.Errorf(codes.ResourceExhausted, "the %s helper refuses this call: %s: %s", s.cfg.Role, rule, reason)
	}
	return sync.OnceFunc(func() { s.lim.releaseCall(c.UID) }), nil
}

func (s *Server) unaryLimit(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	release, err := s.limitCall(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	defer release()
	return h(ctx, req)
}

func (s *Server) streamLimit(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	release, err := s.limitCall(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	defer release()
	return h(srv, &sizeWatchStream{ServerStream: ss, s: s, method: info.FullMethod})
}

// sizeWatchStream audits a stream message refused for its size.
type sizeWatchStream struct {
	grpc.ServerStream
	s      *Server
	method string
}

func (w *sizeWatchStream) RecvMsg(m any) error {
	err := w.ServerStream.RecvMsg(m)
	if status.Code(err) == codes.ResourceExhausted {
		w.s.auditTooLarge(w.Context(), w.method, err)
	}
	return err
}

func (s *Server) auditTooLarge(ctx context.Context, method string, err error) {
	var c *peercred.Creds
	if pc, perr := peerauth.FromContext(ctx); perr == nil {
		c = &pc
	}
	s.auditRefusal(s.refusalRecord(c, RuleTooLarge, fmt.Sprintf("%s: a message over %d bytes was refused: %v", method, MaxMessageSize, status.Convert(err).Message())))
}

// callWatch is the stats handler that marks each call and audits a call refused with
// ResourceExhausted before any interceptor saw it (a unary request over MaxMessageSize).
type callWatch struct{ s *Server }

func (w callWatch) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, callMarkKey{}, &callMark{method: info.FullMethodName})
}

func (w callWatch) HandleRPC(ctx context.Context, st stats.RPCStats) {
	end, ok := st.(*stats.End)
	if !ok || status.Code(end.Error) != codes.ResourceExhausted {
		return
	}
	if m, ok := ctx.Value(callMarkKey{}).(*callMark); ok && !m.seen {
		w.s.auditTooLarge(ctx, m.method, end.Error)
	}
}

func (callWatch) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (callWatch) HandleConn(context.Context, stats.ConnStats)                       {}
