// Package tracingtest runs a small OpenTelemetry collector inside a test:
// an OTLP receiver on a loopback port, over gRPC (the LogsService on a
// real gRPC server) or over HTTP (protobuf POSTs to /v1/logs on an
// httptest server), that keeps what it receives for the test to check.
// It can refuse exports, or hold them, to play a collector that is down
// or stuck. It receives logs (LogsService, /v1/logs) and spans
// (TraceService, /v1/traces). StartDiscard starts one that counts spans
// and keeps none, for benchmarks.
package tracingtest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	collogs "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Protocols of a Collector.
const (
	GRPC = "grpc"
	HTTP = "http"
)

// LogRecord is one log record the collector received, with its resource
// and instrumentation scope.
type LogRecord struct {
	// Body is the record's body (the log message), when it is a string.
	Body string
	// SeverityNumber is the OpenTelemetry severity (INFO is 9, WARN 13).
	SeverityNumber int32
	// SeverityText is the severity as the source wrote it ("INFO").
	SeverityText string
	// TimeUnixNano is the record's timestamp.
	TimeUnixNano uint64
	// Attributes are the record's attributes: string, int64, float64,
	// bool, []byte, []any or map[string]any values.
	Attributes map[string]any
	// Resource holds the attributes of the record's resource.
	Resource map[string]any
	// Scope and ScopeVersion name the instrumentation scope.
	Scope, ScopeVersion string
}

// Collector is an in-process OTLP receiver. Start one with StartGRPC or
// StartHTTP; it stops when the test ends. It is safe for concurrent use.
type Collector struct {
	protocol string
	endpoint string

	mu       sync.Mutex
	logs     []LogRecord
	spans    []Span
	requests int
	refuse   bool
	hold     chan struct{}      // not nil: exports wait until it is closed
	discard  bool               // spans are counted, not kept (StartDiscard)
	counted  int                // spans counted by a discarding collector
	changed  chan struct{}      // closed and replaced whenever something arrives
	bodies   chan *bytes.Buffer // the discarding collector's free body buffers, kept across collections
}

func newCollector(protocol string) *Collector {
	return &Collector{protocol: protocol, changed: make(chan struct{}), bodies: make(chan *bytes.Buffer, 8)}
}

// StartGRPC starts a collector serving the OTLP/gRPC LogsService on a
// loopback port.
func StartGRPC(t testing.TB) *Collector {
	t.Helper()
	c := newCollector(GRPC)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tracingtest: listen: %v", err)
	}
	srv := grpc.NewServer()
	collogs.RegisterLogsServiceServer(srv, &logsService{c: c})
	coltrace.RegisterTraceServiceServer(srv, &traceService{c: c})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	c.endpoint = ln.Addr().String()
	return c
}

// StartHTTP starts a collector serving OTLP/HTTP (protobuf bodies,
// gzip-compressed or not) on a loopback port, at /v1/logs and
// /v1/traces.
func StartHTTP(t testing.TB) *Collector {
	t.Helper()
	c := newCollector(HTTP)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/logs", c.serveHTTP)
	mux.HandleFunc("POST /v1/traces", c.serveTracesHTTP)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c.endpoint = srv.URL
	return c
}

// Protocol is GRPC or HTTP.
func (c *Collector) Protocol() string { return c.protocol }

// Endpoint is the collector's address as a config writes it in
// logging.otlp.endpoint or tracing.endpoint: host:port for gRPC, the
// base URL (http://host:port, without /v1/logs) for HTTP.
func (c *Collector) Endpoint() string { return c.endpoint }

// Logs returns the records received so far, in arrival order.
func (c *Collector) Logs() []LogRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]LogRecord(nil), c.logs...)
}

// Requests is the number of export requests received, refused ones
// included.
func (c *Collector) Requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requests
}

// Refuse makes the collector refuse every export (gRPC UNAVAILABLE, HTTP
// 503) while on is true; refused records are not kept.
func (c *Collector) Refuse(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refuse = on
}

// Hold makes exports wait, unanswered, until release is called (or the
// exporter gives up); the records of a held export are kept once
// released. Requests counts held exports as they arrive.
func (c *Collector) Hold() (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := make(chan struct{})
	c.hold = h
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			if c.hold == h {
				c.hold = nil
			}
			c.mu.Unlock()
			close(h)
		})
	}
}

// WaitLogs waits until cond holds for the records received, and returns
// them; the test fails if it does not within timeout.
func (c *Collector) WaitLogs(t testing.TB, timeout time.Duration, what string, cond func([]LogRecord) bool) []LogRecord {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		logs, changed := append([]LogRecord(nil), c.logs...), c.changed
		c.mu.Unlock()
		if cond(logs) {
			return logs
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("tracingtest: %s: not within %s; the collector has %d records from %d requests", what, timeout, len(logs), c.Requests())
			return nil
		}
	}
}

// WaitRequests waits until the collector has received at least n export
// requests; the test fails if it does not within timeout.
func (c *Collector) WaitRequests(t testing.TB, timeout time.Duration, n int) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		got, changed := c.requests, c.changed
		c.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("tracingtest: %d export requests within %s, want %d", got, timeout, n)
		}
	}
}

// arrive counts a request and says whether to refuse it and what to wait
// for first.
func (c *Collector) arrive() (refuse bool, hold chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests++
	c.signal()
	return c.refuse, c.hold
}

// signal wakes the waiters; c.mu is held.
func (c *Collector) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// keep stores the records of an export request.
func (c *Collector) keep(req *collogs.ExportLogsServiceRequest) {
	var got []LogRecord
	for _, rl := range req.GetResourceLogs() {
		res := attributes(rl.GetResource().GetAttributes())
		for _, sl := range rl.GetScopeLogs() {
			for _, lr := range sl.GetLogRecords() {
				got = append(got, LogRecord{
					Body:           lr.GetBody().GetStringValue(),
					SeverityNumber: int32(lr.GetSeverityNumber()),
					SeverityText:   lr.GetSeverityText(),
					TimeUnixNano:   lr.GetTimeUnixNano(),
					Attributes:     attributes(lr.GetAttributes()),
					Resource:       res,
					Scope:          sl.GetScope().GetName(),
					ScopeVersion:   sl.GetScope().GetVersion(),
				})
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logs = append(c.logs, got...)
	c.signal()
}

// logsService is the gRPC LogsService.
type logsService struct {
	collogs.UnimplementedLogsServiceServer
	c *Collector
}

// Export implements collogs.LogsServiceServer.
func (s *logsService) Export(ctx context.Context, req *collogs.ExportLogsServiceRequest) (*collogs.ExportLogsServiceResponse, error) {
	if err := s.c.admitGRPC(ctx); err != nil {
		return nil, err
	}
	s.c.keep(req)
	return &collogs.ExportLogsServiceResponse{}, nil
}

// serveHTTP is the OTLP/HTTP logs endpoint.
func (c *Collector) serveHTTP(w http.ResponseWriter, r *http.Request) {
	var req collogs.ExportLogsServiceRequest
	c.exportHTTP(w, r, &req, &collogs.ExportLogsServiceResponse{}, func() { c.keep(&req) })
}

// admitGRPC holds a gRPC export while the test holds exports and refuses
// it while the test refuses them (codes.Unavailable).
func (c *Collector) admitGRPC(ctx context.Context) error {
	refuse, hold := c.arrive()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	if refuse {
		return status.Error(codes.Unavailable, "tracingtest: collector refuses exports")
	}
	return nil
}

// exportHTTP serves one OTLP/HTTP export: held or refused (503) as the
// test says, then the protobuf body decoded into req, kept by keep, and
// answered with resp.
func (c *Collector) exportHTTP(w http.ResponseWriter, r *http.Request, req, resp proto.Message, keep func()) {
	refuse, hold := c.arrive()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if refuse {
		http.Error(w, "tracingtest: collector refuses exports", http.StatusServiceUnavailable)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, fmt.Sprintf("tracingtest: Content-Type %q, want application/x-protobuf", ct), http.StatusUnsupportedMediaType)
		return
	}
	b, ok := readBody(w, r, nil)
	if !ok {
		return
	}
	if err := proto.Unmarshal(b, req); err != nil {
		http.Error(w, "tracingtest: decode: "+err.Error(), http.StatusBadRequest)
		return
	}
	keep()
	out, err := proto.Marshal(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = io.Copy(w, bytes.NewReader(out))
}

// readBody reads an export's body, gunzipped when it says so, into buf
// (reset first) or, when buf is nil, into a new slice; a body that
// cannot be read is answered 400 and ok is false.
func readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer) (b []byte, ok bool) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "tracingtest: gzip: "+err.Error(), http.StatusBadRequest)
			return nil, false
		}
		defer zr.Close()
		body = zr
	}
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	if r.ContentLength > 0 {
		// With room for ReadFrom's last read, which finds the end of
		// the body, so that a body of the announced length never
		// reallocates the buffer.
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		http.Error(w, "tracingtest: read: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return buf.Bytes(), true
}

// attributes converts OTLP key-values to a map.
func attributes(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = value(kv.GetValue())
	}
	return m
}

// value converts an OTLP value.
func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		out := make([]any, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return attributes(x.KvlistValue.GetValues())
	default:
		return nil
	}
}
