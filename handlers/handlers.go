// Package handlers implements herald's HTTP endpoints, one file per
// endpoint family (notify, watch and replay streams, schema, admin,
// health), the Server-Sent Events writer, and the JSON bodies of the Aviso
// error model. Handlers translate HTTP to the notification registry and the
// engine and back; they hold no routing or middleware (package api wires
// them) and no storage logic (package engine).
package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"herald/configs"
	"herald/engine"
	"herald/notification"
	"herald/stream"
)

// Options configure the handlers.
type Options struct {
	// Registry holds the compiled schemas.
	Registry *notification.Registry
	// Engine stores and streams notifications.
	Engine engine.Engine
	// Watch holds the streaming settings.
	Watch configs.WatchEndpoint
	// MaxBodyBytes bounds request bodies (413 beyond it).
	MaxBodyBytes int64
	// ReadBodyTimeout bounds the time to read a request body.
	ReadBodyTimeout time.Duration
	// StreamWriteTimeout bounds the write of one SSE event; a client that
	// reads nothing for that long is disconnected (default 30 s).
	StreamWriteTimeout time.Duration
	// StaticFilesPath holds index.html for the homepage ("" = built-in).
	StaticFilesPath string
	// Version is the server version shown on the homepage.
	Version string
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Auth is the authentication policy; the zero value (auth disabled)
	// makes every stream public.
	Auth AuthPolicy
	// ECPDS checks destinations on streams using the ecpds plugin; nil
	// when no `ecpds` block is configured.
	ECPDS *ECPDS
	// CORSManaged tells the SSE writer that package api sets the CORS
	// headers; otherwise event streams carry Aviso's
	// `Access-Control-Allow-Origin: *`.
	CORSManaged bool
}

// Handlers serves the endpoints. Create it with New.
type Handlers struct {
	reg          atomic.Pointer[notification.Registry]
	eng          engine.Engine
	watch        configs.WatchEndpoint
	maxBody      int64
	bodyTimeout  time.Duration
	writeTimeout time.Duration
	static       string
	version      string
	log          *slog.Logger
	now          func() time.Time
	auth         AuthPolicy
	ecpds        *ECPDS
	corsManaged  bool

	// running holds the watch and replay streams being served, to end
	// them on shutdown and reload; streams counts those whose event
	// stream has started.
	running stream.Set
	streams atomic.Int64
}

// Streams returns the number of watch and replay streams open now (their
// SSE response started and not yet ended).
func (h *Handlers) Streams() int { return int(h.streams.Load()) }

// New returns handlers for opts.
func New(opts Options) *Handlers {
	h := &Handlers{
		eng:          opts.Engine,
		watch:        opts.Watch,
		maxBody:      opts.MaxBodyBytes,
		bodyTimeout:  opts.ReadBodyTimeout,
		writeTimeout: opts.StreamWriteTimeout,
		static:       opts.StaticFilesPath,
		version:      opts.Version,
		log:          opts.Logger,
		now:          opts.Now,
		auth:         opts.Auth,
		ecpds:        opts.ECPDS,
		corsManaged:  opts.CORSManaged,
	}
	h.reg.Store(opts.Registry)
	if h.log == nil {
		h.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.writeTimeout <= 0 {
		h.writeTimeout = DefaultStreamWriteTimeout
	}
	if h.maxBody <= 0 {
		h.maxBody = 1 << 20
	}
	if h.watch.ReplayBatchSize <= 0 {
		h.watch.ReplayBatchSize = 100
	}
	if h.watch.MaxHistoricalNotifications <= 0 {
		h.watch.MaxHistoricalNotifications = 10000
	}
	if h.watch.LiveQueueSize <= 0 {
		h.watch.LiveQueueSize = 4096
	}
	if h.watch.MaxLagSec <= 0 {
		h.watch.MaxLagSec = configs.DefaultMaxLagSec
	}
	return h
}

// Registry returns the schemas currently served.
func (h *Handlers) Registry() *notification.Registry { return h.reg.Load() }

// SetRegistry replaces the schemas served by new requests.
func (h *Handlers) SetRegistry(r *notification.Registry) { h.reg.Store(r) }

// Shutdown tells every open stream to end with `connection-closing`
// reason `server_shutdown`. It returns at once; streams end promptly.
func (h *Handlers) Shutdown() {
	h.running.EndAll(&stream.Stop{Reason: stream.Shutdown})
}

type ctxKey struct{}

// WithRequestID returns ctx carrying the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// RequestID returns the request id carried by ctx ("" if none).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// WriteJSON writes v as a JSON response with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"code":"INTERNAL_ERROR","error":"internal_error","message":"response encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// errBodyTooLarge and errBodyTimeout classify body read failures.
var (
	errBodyTooLarge = errors.New("request body too large")
	errBodyTimeout  = errors.New("request body read timed out")
)

// readBody reads the request body within the size and time limits.
func (h *Handlers) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	if h.bodyTimeout > 0 {
		_ = rc.SetReadDeadline(h.now().Add(h.bodyTimeout))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		// The deadline stays in force: the server must not wait for the
		// rest of a body that did not come before answering and closing.
		_ = r.Body.Close()
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return nil, errBodyTooLarge
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, errBodyTimeout
		}
		return nil, err
	}
	if h.bodyTimeout > 0 {
		// Streams live on after the body: clear the deadline.
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, nil
}

// writeBodyError answers a failed body read (413, 408 or 400).
func (h *Handlers) writeBodyError(w http.ResponseWriter, r *http.Request, label, code string, err error) {
	id := RequestID(r.Context())
	switch {
	case errors.Is(err, errBodyTooLarge):
		msg := "request body exceeds the limit of " + itoa(h.maxBody) + " bytes"
		WriteJSON(w, http.StatusRequestEntityTooLarge, ErrorBody{Code: "PAYLOAD_TOO_LARGE", Error: label, Message: msg, Details: msg, RequestID: id})
	case errors.Is(err, errBodyTimeout):
		msg := "request body was not received within " + h.bodyTimeout.String()
		WriteJSON(w, http.StatusRequestTimeout, ErrorBody{Code: "REQUEST_TIMEOUT", Error: label, Message: msg, Details: msg, RequestID: id})
	default:
		msg := "reading the request body failed: " + err.Error()
		WriteJSON(w, http.StatusBadRequest, ErrorBody{Code: code, Error: label, Message: msg, Details: msg, RequestID: id})
	}
}
