package configs

import (
	"errors"
	"net/url"
	"strings"
)

// OTLPLogsPath is the path of the OTLP/HTTP logs endpoint, which
// ExportURL appends for protocol http.
const OTLPLogsPath = "/v1/logs"

// defaultOTLP is the block as it starts when the file (or the
// environment) writes it: export off, over gRPC.
func defaultOTLP() *OTLP {
	return &OTLP{Protocol: OTLPGRPC}
}

// ExportURL is the URL the log is exported to, made from Endpoint as
// aviso-server makes it: surrounding spaces removed; http:// put in
// front when there is no scheme ("otel-collector:4317" is
// http://otel-collector:4317, and TLS needs an explicit https://); and
// for protocol http, trailing slashes removed and /v1/logs appended
// unless the URL already ends with it. It is "" when Endpoint is blank.
func (o *OTLP) ExportURL() string {
	e := strings.TrimSpace(o.Endpoint)
	if e == "" {
		return ""
	}
	if !strings.Contains(e, "://") {
		e = "http://" + e
	}
	if o.Protocol == OTLPHTTP {
		e = strings.TrimRight(e, "/")
		if !strings.HasSuffix(e, OTLPLogsPath) {
			e += OTLPLogsPath
		}
	}
	return e
}

// OTLPExport is where the log is exported: the protocol and ExportURL.
// The zero value means no export.
type OTLPExport struct {
	Protocol string
	URL      string
}

// Export returns the export the block asks for, and false when there is
// none (no block, or enabled false).
func (l Logging) Export() (OTLPExport, bool) {
	if l.OTLP == nil || !l.OTLP.Enabled {
		return OTLPExport{}, false
	}
	return OTLPExport{Protocol: l.OTLP.Protocol, URL: l.OTLP.ExportURL()}, true
}

// otlp checks the `logging.otlp` block with aviso-server's rules: the
// protocol is grpc or http (lower case) whether or not export is on;
// the endpoint is required when it is on and unchecked when it is off.
// herald also refuses, at startup rather than at the first export, an
// endpoint the exporter could not use: not an http(s) URL with a host,
// or one carrying a user name or password (aviso-server's exporter
// refuses those too).
func (v *validator) otlp() {
	o := v.c.Logging.OTLP
	if o == nil {
		return
	}
	const p = "logging.otlp."
	v.oneOf(p+"protocol", o.Protocol, OTLPGRPC, OTLPHTTP)
	if !o.Enabled {
		return
	}
	raw := o.ExportURL()
	if raw == "" {
		v.global(p+"endpoint", "required when logging.otlp.enabled is true: the collector's address, e.g. otel-collector:4317 (grpc) or otel-collector:4318 (http)")
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		v.global(p+"endpoint", "must be host:port or an http(s) URL, got %s: %v", quote(o.Endpoint), unwrapURLError(err))
	case u.Scheme != "http" && u.Scheme != "https":
		v.global(p+"endpoint", "must be host:port or an http:// or https:// URL, got scheme %s in %s", quote(u.Scheme), quote(o.Endpoint))
	case u.Hostname() == "":
		v.global(p+"endpoint", "must name a host, got %s", quote(o.Endpoint))
	case u.User != nil:
		v.global(p+"endpoint", "must not carry a user name or password; the exporter sends no credentials from the URL")
	}
}

// unwrapURLError returns the cause of a url.Parse error without the
// operation and the URL, which the message already shows.
func unwrapURLError(err error) error {
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
