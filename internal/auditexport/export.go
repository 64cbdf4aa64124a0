package auditexport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.uber.org/zap"
	"google.golang.org/grpc/credentials"

	"github.com/s-code-dev/s-code/audit"
)

// Tuning of the worker.
const (
	maxBatch       = 512                    // records in one export request
	initialBackoff = 100 * time.Millisecond // wait after the first failed attempt
	maxBackoff     = 30 * time.Second       // longest wait between attempts
)

// ScopeName is the instrumentation scope of the exported records.
const ScopeName = "github.com/s-code-dev/s-code/audit"

// Settings are what the helper tells the exporter about itself, for the records' resource.
type Settings struct {
	// Service is the helper's program name (service.name), e.g. "s-code-userhelper".
	Service string
	// Version is the helper's version (service.version).
	Version string
	// Role is "user" or "root" (scode.helper.role).
	Role string
	// LogDir is the audit log's directory, absolute (scode.audit.log_dir): with host.name
	// it names the chain a central store follows.
	LogDir string
	// Getenv resolves env: handles; nil means os.Getenv.
	Getenv func(string) string
	// Logger receives the exporter's own events (failures, recoveries, drops); nil means none.
	Logger *zap.Logger
}

// Stats are the exporter's counts since it started, for the Status RPC.
type Stats struct {
	Endpoint string // HOST:PORT
	Protocol string // grpc or http
	// Backlog is how many records wait for export (gap records included).
	Backlog uint64
	// Exported is how many records the endpoint accepted; ExportedSeq is the seq of the last.
	Exported    uint64
	ExportedSeq uint64
	// Failed is how many export attempts failed (each is retried).
	Failed uint64
	// Dropped is how many records were not queued because the queue was full; each run of
	// them is reported by a gap record.
	Dropped uint64
	// LastError is the error of the last failed attempt, empty when the last one succeeded.
	LastError string
}

// item is one queued record: an audit record line, or a gap record (gap != nil).
type item struct {
	seq, sealIndex uint64
	line           []byte
	gap            *gapInfo
}

// gapInfo is a run of records that the full queue dropped.
type gapInfo struct {
	first, last, count uint64
	at                 time.Time
}

// Exporter is an audit.Observer that exports each record it is told of. Observe only
// queues; one worker goroutine exports in order, retrying with backoff for as long as the
// exporter runs. Its methods are safe for concurrent use.
type Exporter struct {
	cfg     Config
	set     Settings
	exp     sdklog.Exporter
	lp      *sdklog.LoggerProvider
	logger  otellog.Logger
	capture *captureProcessor
	log     *zap.Logger

	wake   chan struct{} // buffered 1: the queue has items
	stop   chan struct{} // closed by Shutdown: stop waiting between attempts
	cancel context.CancelFunc
	ctx    context.Context // canceled when Shutdown gives up
	done   chan struct{}   // closed when the worker returns

	// mu guards queue and gap. Observe takes it while the audit log's lock is held: never
	// hold mu while calling out (exports, logging).
	mu    sync.Mutex
	queue []item
	gap   *gapInfo

	exported, exportedSeq, failed, dropped atomic.Uint64
	lastErr                                atomic.Pointer[string]
	stopOnce                               sync.Once
}

var _ audit.Observer = (*Exporter)(nil)

// New returns an Exporter for cfg (a Config from LoadConfig), its header handles resolved
// and its OTLP exporter made (no connection is made yet: gRPC and HTTP connect on the first
// export). Start must be called for it to export.
func New(cfg Config, set Settings) (*Exporter, error) {
	if cfg.timeout == 0 {
		if err := cfg.check(); err != nil {
			return nil, fmt.Errorf("audit export: %w", err)
		}
	}
	if set.Getenv == nil {
		set.Getenv = os.Getenv
	}
	if set.Logger == nil {
		set.Logger = zap.NewNop()
	}
	headers, err := cfg.resolveHeaders(set.Getenv)
	if err != nil {
		return nil, fmt.Errorf("audit export: %w", err)
	}
	var tlsCfg *tls.Config
	if !cfg.Insecure {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName}
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, fmt.Errorf("audit export: ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("audit export: ca_file %s holds no PEM certificate", cfg.CAFile)
			}
			tlsCfg.RootCAs = pool
		}
	}
	// Every option is given, so that no OTEL_EXPORTER_OTLP_* variable of the helper's
	// environment changes where records go. The SDK's own retry is off: the worker retries.
	var exp sdklog.Exporter
	ctx := context.Background()
	switch cfg.Protocol {
	case ProtocolGRPC:
		opts := []otlploggrpc.Option{otlploggrpc.WithEndpoint(cfg.Endpoint), otlploggrpc.WithHeaders(headers),
			otlploggrpc.WithTimeout(cfg.timeout), otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false})}
		if tlsCfg == nil {
			opts = append(opts, otlploggrpc.WithInsecure())
		} else {
			opts = append(opts, otlploggrpc.WithTLSCredentials(credentials.NewTLS(tlsCfg)))
		}
		exp, err = otlploggrpc.New(ctx, opts...)
	case ProtocolHTTP:
		opts := []otlploghttp.Option{otlploghttp.WithEndpoint(cfg.Endpoint), otlploghttp.WithURLPath(cfg.URLPath),
			otlploghttp.WithHeaders(headers), otlploghttp.WithTimeout(cfg.timeout),
			otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false})}
		if tlsCfg == nil {
			opts = append(opts, otlploghttp.WithInsecure())
		} else {
			opts = append(opts, otlploghttp.WithTLSClientConfig(tlsCfg))
		}
		exp, err = otlploghttp.New(ctx, opts...)
	default:
		err = fmt.Errorf("protocol %q", cfg.Protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("audit export: %w", err)
	}
	host, _ := os.Hostname()
	res := resource.NewSchemaless(
		attribute.String("service.name", set.Service),
		attribute.String("service.version", set.Version),
		attribute.String("host.name", host),
		attribute.String("scode.helper.role", set.Role),
		attribute.String("scode.audit.log_dir", set.LogDir),
	)
	capture := &captureProcessor{}
	lp := sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(capture),
		sdklog.WithAttributeCountLimit(-1), sdklog.WithAttributeValueLengthLimit(-1))
	e := &Exporter{
		cfg: cfg, set: set, exp: exp, lp: lp, capture: capture, log: set.Logger,
		logger: lp.Logger(ScopeName, otellog.WithInstrumentationVersion(set.Version)),
		wake:   make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	return e, nil
}

// Start starts the worker. Records observed before Start wait in the queue.
func (e *Exporter) Start() {
	go e.run()
}

// Observe queues the record for export (audit.Observer). It never blocks: when the queue
// is full the record is counted as dropped, and a gap record naming the dropped run of seqs
// is queued before the next record that fits.
func (e *Exporter) Observe(seq, sealIndex uint64, line []byte) {
	e.mu.Lock()
	if len(e.queue) >= e.cfg.Queue {
		if e.gap == nil {
			e.gap = &gapInfo{first: seq}
		}
		e.gap.last, e.gap.at = seq, time.Now()
		e.gap.count++
		e.mu.Unlock()
		e.dropped.Add(1)
		return
	}
	if e.gap != nil {
		e.queue = append(e.queue, item{gap: e.gap})
		e.gap = nil
	}
	e.queue = append(e.queue, item{seq: seq, sealIndex: sealIndex, line: line})
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Stats returns the exporter's counts now.
func (e *Exporter) Stats() Stats {
	e.mu.Lock()
	backlog := uint64(len(e.queue))
	e.mu.Unlock()
	s := Stats{Endpoint: e.cfg.Endpoint, Protocol: e.cfg.Protocol, Backlog: backlog,
		Exported: e.exported.Load(), ExportedSeq: e.exportedSeq.Load(), Failed: e.failed.Load(), Dropped: e.dropped.Load()}
	if p := e.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	return s
}

// ErrBacklog reports records that Shutdown could not export before its context ended.
var ErrBacklog = errors.New("audit records were not exported")

// Shutdown exports what is queued until ctx ends, then stops the worker and the OTLP
// exporter. Records still queued then are not exported: the error (wrapping ErrBacklog)
// says how many and which seqs; the local log has them all.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.stopOnce.Do(func() { close(e.stop) })
	select {
	case e.wake <- struct{}{}:
	default:
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		e.cancel()
		<-e.done
	}
	e.cancel()
	var err error
	e.mu.Lock()
	if n := len(e.queue); n > 0 || e.gap != nil {
		first, last := e.seqRange()
		err = fmt.Errorf("%w: %d queued (seq %d to %d), %d dropped in all; the local log has them", ErrBacklog, n, first, last, e.dropped.Load())
	}
	e.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if serr := e.exp.Shutdown(sctx); serr != nil && err == nil {
		err = fmt.Errorf("audit export: shutdown: %w", serr)
	}
	return err
}

// seqRange returns the first and last seq of the queued records (gap records aside). The
// caller holds mu.
func (e *Exporter) seqRange() (first, last uint64) {
	for _, it := range e.queue {
		if it.gap != nil {
			continue
		}
		if first == 0 {
			first = it.seq
		}
		last = it.seq
	}
	return first, last
}

// run exports the queue in order until Shutdown: a batch is removed from the queue only
// once the endpoint accepted it, and a failed attempt is retried with exponential backoff.
func (e *Exporter) run() {
	defer close(e.done)
	for {
		e.mu.Lock()
		n := min(len(e.queue), maxBatch)
		batch := append([]item(nil), e.queue[:n]...)
		e.mu.Unlock()
		if n == 0 {
			select {
			case <-e.wake:
				continue
			case <-e.stop:
				return
			}
		}
		recs := e.records(batch)
		if !e.exportWithRetry(recs) {
			return
		}
		e.mu.Lock()
		e.queue = append(e.queue[:0], e.queue[n:]...)
		// The queue has room again: report the records it dropped now, not only when the
		// next record comes. Everything still queued is older than them.
		if e.gap != nil && len(e.queue) < e.cfg.Queue {
			e.queue = append(e.queue, item{gap: e.gap})
			e.gap = nil
		}
		e.mu.Unlock()
		var sent, lastSeq uint64
		for _, it := range batch {
			if it.gap == nil {
				sent++
				lastSeq = it.seq
			}
		}
		e.exported.Add(sent)
		if lastSeq > 0 {
			e.exportedSeq.Store(lastSeq)
		}
	}
}

// exportWithRetry exports recs until the endpoint accepts them; it reports false when the
// exporter is shut down first (while stopping, it keeps trying until Shutdown's context
// ends).
func (e *Exporter) exportWithRetry(recs []sdklog.Record) bool {
	backoff := initialBackoff
	failing := false
	for {
		err := e.exp.Export(e.ctx, recs)
		if err == nil {
			e.lastErr.Store(nil)
			if failing {
				e.log.Info("audit export recovered", zap.String("endpoint", e.cfg.Endpoint))
			}
			return true
		}
		if e.ctx.Err() != nil {
			return false
		}
		e.failed.Add(1)
		msg := err.Error()
		e.lastErr.Store(&msg)
		if !failing {
			e.log.Warn("audit export failed; retrying", zap.String("endpoint", e.cfg.Endpoint), zap.Error(err))
			failing = true
		}
		select {
		case <-time.After(backoff):
		case <-e.stop:
			// Stopping: one more attempt right away, then the next ones at the pace of
			// backoff until Shutdown's context ends (which cancels e.ctx).
			select {
			case <-time.After(backoff):
			case <-e.ctx.Done():
				return false
			}
		case <-e.ctx.Done():
			return false
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// records turns queued items into log records, through the logger so that each carries the
// resource and the scope.
func (e *Exporter) records(batch []item) []sdklog.Record {
	e.capture.reset()
	for _, it := range batch {
		var r otellog.Record
		if it.gap != nil {
			gapRecord(&r, it.gap)
		} else {
			auditRecord(&r, it.seq, it.sealIndex, it.line)
		}
		e.logger.Emit(e.ctx, r)
	}
	return e.capture.take()
}

// captureProcessor keeps the records the logger emits, for the worker to export itself (the
// SDK's processors would drop or retry on their own terms).
type captureProcessor struct {
	mu   sync.Mutex // guards recs
	recs []sdklog.Record
}

var _ sdklog.Processor = (*captureProcessor)(nil)

func (p *captureProcessor) OnEmit(_ context.Context, r *sdklog.Record) error {
	p.mu.Lock()
	p.recs = append(p.recs, r.Clone())
	p.mu.Unlock()
	return nil
}

func (p *captureProcessor) Enabled(context.Context, sdklog.EnabledParameters) bool { return true }
func (p *captureProcessor) Shutdown(context.Context) error                         { return nil }
func (p *captureProcessor) ForceFlush(context.Context) error                       { return nil }

func (p *captureProcessor) reset() {
	p.mu.Lock()
	p.recs = nil
	p.mu.Unlock()
}

func (p *captureProcessor) take() []sdklog.Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.recs
	p.recs = nil
	return r
}
