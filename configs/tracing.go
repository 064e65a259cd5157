package configs

import (
	"math"
	"net/url"
	"strings"
)

// OTLPTracesPath is the path of the OTLP/HTTP traces endpoint, which
// Tracing.ExportURL appends for protocol http.
const OTLPTracesPath = "/v1/traces"

// Defaults of the `tracing` block.
const (
	// DefaultTraceSampleRatio samples every trace that starts in herald.
	DefaultTraceSampleRatio = 1.0
	// DefaultTraceQueueSize is the spans that may wait for export.
	DefaultTraceQueueSize = 2048
)

// Tracing is herald's `tracing` block: when Enabled, herald records spans
// of its notifies (one `publish <event_type>` span each, the backend
// store beneath it), of each delivery burst of a stream and of each HTTP
// request, exports them to an OpenTelemetry collector at Endpoint over
// Protocol, and carries the W3C trace context (traceparent, tracestate)
// of each notification to its subscribers as CloudEvent extension
// attributes. Without the block, or with enabled false, herald neither
// records spans nor stores or delivers any trace context, and its
// notifications are byte for byte what they were without tracing.
//
// The block is read at startup: a reload that changes it is refused.
type Tracing struct {
	Enabled bool `yaml:"enabled"`
	// Endpoint is the collector's address: a URL, or host:port (then
	// http:// is assumed). See ExportURL.
	Endpoint string `yaml:"endpoint"`
	// Protocol is OTLPGRPC (the default) or OTLPHTTP, in lower case.
	Protocol string `yaml:"protocol"`
	// SampleRatio is the share of the traces that start in herald (a
	// notify without a traceparent) that are recorded, from 0 to 1
	// (default 1). A notify that carries a traceparent follows its
	// sampled flag (parent-based sampling).
	SampleRatio float64 `yaml:"sample_ratio"`
	// MaxQueueSize bounds the finished spans waiting for export (default
	// 2048): when the collector is slow or down, the spans that do not
	// fit are dropped (and counted), never waited for.
	MaxQueueSize int `yaml:"max_queue_size"`
}

// defaultTracing is the block as it starts when the file (or the
// environment) writes it: tracing off, over gRPC, every trace sampled.
func defaultTracing() *Tracing {
	return &Tracing{Protocol: OTLPGRPC, SampleRatio: DefaultTraceSampleRatio, MaxQueueSize: DefaultTraceQueueSize}
}

// On reports whether tracing is enabled: the block is present with
// enabled true.
func (t *Tracing) On() bool { return t != nil && t.Enabled }

// ExportURL is the URL spans are exported to, made from Endpoint as
// logging.otlp's is (see OTLP.ExportURL): http:// put in front when
// there is no scheme and, for protocol http, /v1/traces appended unless
// the URL already ends with it. It is "" when Endpoint is blank.
func (t *Tracing) ExportURL() string {
	e := strings.TrimSpace(t.Endpoint)
	if e == "" {
		return ""
	}
	if !strings.Contains(e, "://") {
		e = "http://" + e
	}
	if t.Protocol == OTLPHTTP {
		e = strings.TrimRight(e, "/")
		if !strings.HasSuffix(e, OTLPTracesPath) {
			e += OTLPTracesPath
		}
	}
	return e
}

// tracing checks the `tracing` block: the protocol is grpc or http, the
// ratio within [0, 1] and the queue positive whether or not tracing is
// on; the endpoint, when it is on, an http(s) URL (or host:port) with a
// host and no credentials, as logging.otlp's.
func (v *validator) tracing() {
	t := v.c.Tracing
	if t == nil {
		return
	}
	const p = "tracing."
	v.oneOf(p+"protocol", t.Protocol, OTLPGRPC, OTLPHTTP)
	if math.IsNaN(t.SampleRatio) || t.SampleRatio < 0 || t.SampleRatio > 1 {
		v.global(p+"sample_ratio", "must be between 0 and 1 (the share of new traces recorded), got %v", t.SampleRatio)
	}
	v.positive(p+"max_queue_size", int64(t.MaxQueueSize))
	if !t.Enabled {
		return
	}
	raw := t.ExportURL()
	if raw == "" {
		v.global(p+"endpoint", "required when tracing.enabled is true: the collector's address, e.g. otel-collector:4317 (grpc) or otel-collector:4318 (http)")
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.global(p+"endpoint", "must be host:port or an http(s) URL, got %s: %v", quote(t.Endpoint), unwrapURLError(err))
	case u.Scheme != "http" && u.Scheme != "https":
		v.global(p+"endpoint", "must be host:port or an http:// or https:// URL, got scheme %s in %s", quote(u.Scheme), quote(t.Endpoint))
	case u.Hostname() == "":
		v.global(p+"endpoint", "must name a host, got %s", quote(t.Endpoint))
	case u.User != nil:
		v.global(p+"endpoint", "must not carry a user name or password; the exporter sends no credentials from the URL")
	}
}
