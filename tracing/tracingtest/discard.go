package tracingtest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// StartDiscard starts a collector serving OTLP/HTTP at /v1/traces (as
// StartHTTP) that counts the spans it receives and keeps none of them:
// it walks the protobuf body to count the spans without decoding them
// into messages, and answers with an empty response. A benchmark
// exports to it so that the collector's own work (decoding, keeping)
// does not weigh on the process it measures; Spans and WaitSpans see
// nothing, SpanCount and WaitSpanCount count.
func StartDiscard(t testing.TB) *Collector {
	t.Helper()
	c := newCollector(HTTP)
	c.discard = true
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", c.serveDiscardHTTP)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c.endpoint = srv.URL
	return c
}

// SpanCount is the number of spans received: kept ones, or counted ones
// for a collector of StartDiscard.
func (c *Collector) SpanCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.discard {
		return c.counted
	}
	return len(c.spans)
}

// WaitSpanCount waits until the collector has received at least n spans
// (SpanCount); the test fails if it does not within timeout.
func (c *Collector) WaitSpanCount(t testing.TB, timeout time.Duration, n int) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		got, changed := c.counted, c.changed
		if !c.discard {
			got = len(c.spans)
		}
		c.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("tracingtest: %d spans within %s, want %d", got, timeout, n)
		}
	}
}

// serveDiscardHTTP is the OTLP/HTTP traces endpoint of a discarding
// collector.
func (c *Collector) serveDiscardHTTP(w http.ResponseWriter, r *http.Request) {
	c.arrive()
	var buf *bytes.Buffer
	select {
	case buf = <-c.bodies:
	default:
		buf = new(bytes.Buffer)
	}
	defer func() {
		select {
		case c.bodies <- buf:
		default:
		}
	}()
	b, ok := readBody(w, r, buf)
	if !ok {
		return
	}
	n, err := countSpans(b)
	if err != nil {
		http.Error(w, "tracingtest: decode: "+err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.counted += n
	c.signal()
	c.mu.Unlock()
	// An empty ExportTraceServiceResponse is zero bytes of protobuf.
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// OTLP field numbers walked by countSpans: ExportTraceServiceRequest
// .resource_spans, ResourceSpans.scope_spans, ScopeSpans.spans.
const (
	fieldResourceSpans = 1
	fieldScopeSpans    = 2
	fieldSpans         = 2
)

// countSpans counts the spans of an encoded ExportTraceServiceRequest.
func countSpans(b []byte) (int, error) {
	n := 0
	err := eachField(b, fieldResourceSpans, func(rs []byte) error {
		return eachField(rs, fieldScopeSpans, func(ss []byte) error {
			return eachField(ss, fieldSpans, func([]byte) error {
				n++
				return nil
			})
		})
	})
	return n, err
}

// eachField calls f with the bytes of each length-delimited field num of
// the encoded message b, skipping the other fields.
func eachField(b []byte, num protowire.Number, f func([]byte) error) error {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return protowire.ParseError(l)
			}
			if err := f(v); err != nil {
				return err
			}
			b = b[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
	}
	return nil
}
