// Package handlers implements herald's HTTP endpoints, one file per
// endpoint family (notify, watch and replay streams, schema, admin,
// health), the Server-Sent Events writer and the transport of WebSocket
// sessions (the upgrade and the connection; package session implements
// the protocol); the JSON error bodies they answer with live in package
// api/httperr. Handlers translate HTTP to the notification registry and
// the engine and back; they hold no routing or middleware (package api
// wires them) and no storage logic (package engine).
package handlers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/session"
	"github.com/herald-gateway/herald/sse"
	"github.com/herald-gateway/herald/stream"
)

// Defaults of the request limits; the config file's defaults (package
// configs) are these values.
const (
	// DefaultMaxBodyBytes is the request body limit (1 MiB).
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxBatchNotifications is the most notifications one batch
	// notify may carry.
	DefaultMaxBatchNotifications = 1000
)

// Settings are what the configuration decides for the handlers. A config
// reload replaces them as a whole (Apply); each request reads them once
// when it starts, so an in-flight request finishes with the settings it
// began with.
type Settings struct {
	// Registry holds the compiled schemas.
	Registry *notification.Registry
	// Watch holds the streaming settings.
	Watch WatchSettings
	// MaxBodyBytes bounds request bodies (413 beyond it; default
	// DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxBatchNotifications bounds the notifications of one batch notify
	// (default DefaultMaxBatchNotifications).
	MaxBatchNotifications int
	// ReadBodyTimeout bounds the time to read a request body.
	ReadBodyTimeout time.Duration
	// StaticFilesPath holds index.html for the homepage ("" = built-in).
	StaticFilesPath string
	// Homepage is what the built-in homepage links besides the API.
	Homepage HomepageSettings
	// Auth is the authentication policy; the zero value (auth disabled)
	// makes every stream public.
	Auth auth.Policy
	// ECPDS checks destinations on streams using the ecpds plugin (an
	// *ecpds.Client); nil when no `ecpds` block is configured.
	ECPDS auth.DestinationChecker
	// CORSManaged tells the SSE writer that package api sets the CORS
	// headers; otherwise event streams carry Aviso's
	// `Access-Control-Allow-Origin: *`.
	CORSManaged bool
	// AllowedOrigins are the origins a WebSocket session may come from
	// (application.cors.allowed_origins); nil allows any, "*" too.
	AllowedOrigins []string
	// Authenticate verifies the credentials of a WebSocket session's auth
	// frame (an Authorization header value); nil when authentication is
	// disabled.
	Authenticate func(ctx context.Context, authorization string) (*auth.Identity, *auth.Error)
	// Session holds the limits of WebSocket sessions.
	Session SessionSettings

	// session are the settings of WebSocket sessions, derived from the
	// others when they are applied.
	session *session.Settings
}

// SessionSettings are the limits of one WebSocket session (the session
// block). Zero values take the defaults.
type SessionSettings = session.Limits

// WatchSettings are the settings of watch and replay streams (the
// watch_endpoint block). Zero values take the defaults.
type WatchSettings struct {
	// Heartbeat is the interval of SSE heartbeats (0: none).
	Heartbeat time.Duration
	// MaxDuration ends a watch after that long (0: never).
	MaxDuration time.Duration
	// ReplayBatchSize is the history page size (default
	// stream.DefaultReplayBatchSize).
	ReplayBatchSize int
	// ReplayBatchDelay is the pause between history pages.
	ReplayBatchDelay time.Duration
	// LiveQueueSize bounds the live notifications one watcher may have
	// waiting (default engine.DefaultLiveQueueSize).
	LiveQueueSize int
	// MaxLag ends a watcher whose oldest undelivered notification waited
	// longer (default stream.DefaultMaxLag).
	MaxLag time.Duration
	// SendBufferBytes caps the kernel send buffer of a stream connection
	// (0: the operating system's).
	SendBufferBytes int
}

// withDefaults returns s with its zero values replaced by defaults.
func (s Settings) withDefaults() *Settings {
	if s.MaxBodyBytes <= 0 {
		s.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if s.MaxBatchNotifications <= 0 {
		s.MaxBatchNotifications = DefaultMaxBatchNotifications
	}
	if s.Watch.ReplayBatchSize <= 0 {
		s.Watch.ReplayBatchSize = stream.DefaultReplayBatchSize
	}
	if s.Watch.LiveQueueSize <= 0 {
		s.Watch.LiveQueueSize = engine.DefaultLiveQueueSize
	}
	if s.Watch.MaxLag <= 0 {
		s.Watch.MaxLag = stream.DefaultMaxLag
	}
	s.Session = s.Session.WithDefaults()
	return &s
}

// Options configure the handlers.
type Options struct {
	// Settings are the initial settings (Apply replaces them).
	Settings Settings
	// Engine stores and streams notifications.
	Engine engine.Engine
	// StreamWriteTimeout bounds the write of one SSE event; a client that
	// reads nothing for that long is disconnected (default 30 s).
	StreamWriteTimeout time.Duration
	// Version is the server version shown on the homepage.
	Version string
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Observer is told what the handlers do (metrics); nil records
	// nothing.
	Observer Observer
	// Tracing traces notifies and deliveries; its zero value (tracing
	// off) records nothing and stores no trace context.
	Tracing engine.Tracing
}

// Handlers serves the endpoints. Create it with New.
type Handlers struct {
	set          atomic.Pointer[Settings]
	eng          engine.Engine
	writeTimeout time.Duration
	version      string
	log          *slog.Logger
	now          func() time.Time
	obs          Observer
	observing    bool // obs records something (not NoObserver)
	trace        engine.Tracing

	// running holds the watch and replay streams being served, to end
	// them on shutdown and reload; streams counts those whose event
	// stream has started.
	running stream.Set
	streams atomic.Int64
	// sessions counts the WebSocket sessions; sessionDeps is what they
	// need of the handlers.
	sessions    session.Counters
	sessionDeps session.Deps
}

// SessionDropped returns how many events DROPPING session subscriptions
// have discarded since the start.
func (h *Handlers) SessionDropped() uint64 { return h.sessions.Dropped() }

// SessionControlFrames returns how many frames sessions have queued on
// their control lanes (replies among them) since the start.
func (h *Handlers) SessionControlFrames() uint64 { return h.sessions.ControlFrames() }

// SessionSubscriptions returns the number of session subscriptions and
// replays whose stream is running now.
func (h *Handlers) SessionSubscriptions() int { return h.sessions.Subscriptions() }

// Sessions returns the number of WebSocket sessions open now.
func (h *Handlers) Sessions() int { return h.sessions.Open() }

// Streams returns the number of watch and replay streams open now (their
// SSE response started and not yet ended).
func (h *Handlers) Streams() int { return int(h.streams.Load()) }

// New returns handlers for opts.
func New(opts Options) *Handlers {
	h := &Handlers{
		eng:          opts.Engine,
		writeTimeout: opts.StreamWriteTimeout,
		version:      opts.Version,
		log:          opts.Logger,
		now:          opts.Now,
		obs:          opts.Observer,
		trace:        opts.Tracing,
	}
	h.observing = h.obs != nil
	if !h.observing {
		h.obs = NoObserver{}
	}
	h.Apply(opts.Settings)
	if h.log == nil {
		h.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.writeTimeout <= 0 {
		h.writeTimeout = sse.DefaultWriteTimeout
	}
	h.sessionDeps = session.Deps{Engine: h.eng, Settings: func() *session.Settings { return h.Settings().session },
		Streams: &h.running, Counters: &h.sessions, Log: h.log, Now: h.now, Version: h.version, Tracing: h.trace}
	if h.observing {
		h.sessionDeps.Observer = sessionObserver{h.obs}
	}
	return h
}

// Apply replaces the settings that requests starting from now use.
func (h *Handlers) Apply(s Settings) {
	set := s.withDefaults()
	set.session = &session.Settings{Registry: set.Registry, Policy: set.Auth, Authenticate: set.Authenticate,
		Streams: set.Watch.limits(), Limits: set.Session, MaxRequestBytes: set.MaxBodyBytes,
		Destinations: func(ctx context.Context, sc *notification.Schema, filter *notification.Filter, id *auth.Identity, sessionID string) *auth.Error {
			if e := h.decideECPDS(ctx, set, sc, filter, id, sessionID); e != nil {
				return e.denied
			}
			return nil
		}}
	h.set.Store(set)
}

// Settings returns the settings in force.
func (h *Handlers) Settings() *Settings { return h.set.Load() }

// Registry returns the schemas currently served.
func (h *Handlers) Registry() *notification.Registry { return h.set.Load().Registry }

// EndStreams ends the open watch and replay streams of one event type
// with reason (stream.SchemaChanged or stream.SchemaRemoved after a
// reload) and returns how many there were.
func (h *Handlers) EndStreams(eventType string, reason stream.Reason) int {
	stop := &stream.Stop{Reason: reason}
	return h.running.End(eventType, stop) + h.running.End(stream.FormatKey(eventType), stop)
}

// Shutdown tells every open stream to end with `connection-closing`
// reason `server_shutdown`. It returns at once; streams end promptly.
func (h *Handlers) Shutdown() {
	h.running.EndAll(&stream.Stop{Reason: stream.Shutdown})
}

// errBodyTooLarge and errBodyTimeout classify body read failures.
var (
	errBodyTooLarge = errors.New("request body too large")
	errBodyTimeout  = errors.New("request body read timed out")
)

// readBody reads the request body within the size and time limits.
// ReadBody reads a request body within the limits in force (size and
// time); on failure it answers the request (413, 408 or 400 with code,
// under the error label) and returns false.
func (h *Handlers) ReadBody(w http.ResponseWriter, r *http.Request, label, code string) ([]byte, bool) {
	set := h.Settings()
	body, err := h.readBody(w, r, set)
	if err != nil {
		h.writeBodyError(w, r, set, label, code, err)
		return nil, false
	}
	return body, true
}

func (h *Handlers) readBody(w http.ResponseWriter, r *http.Request, set *Settings) ([]byte, error) {
	rc := http.NewResponseController(w)
	if set.ReadBodyTimeout > 0 {
		_ = rc.SetReadDeadline(h.now().Add(set.ReadBodyTimeout))
	}
	body, err := readAll(http.MaxBytesReader(w, r.Body, set.MaxBodyBytes), r.ContentLength, set.MaxBodyBytes)
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
	if set.ReadBodyTimeout > 0 {
		// Streams live on after the body: clear the deadline.
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, nil
}

// readAll is io.ReadAll into a buffer of the announced length (when it
// is within limit): one allocation of the body's size instead of
// io.ReadAll's 512 bytes and growth, for every notify.
func readAll(r io.Reader, length, limit int64) ([]byte, error) {
	if length <= 0 || length > limit {
		return io.ReadAll(r)
	}
	// One byte more than announced: the read that sees EOF needs room.
	buf := make([]byte, 0, length+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// writeBodyError answers a failed body read (413, 408 or 400).
func (h *Handlers) writeBodyError(w http.ResponseWriter, r *http.Request, set *Settings, label, code string, err error) {
	id := httperr.RequestID(r.Context())
	switch {
	case errors.Is(err, errBodyTooLarge):
		msg := "request body exceeds the limit of " + itoa(set.MaxBodyBytes) + " bytes"
		httperr.WriteJSON(w, http.StatusRequestEntityTooLarge, httperr.ErrorBody{Code: "PAYLOAD_TOO_LARGE", Error: label, Message: msg, Details: msg, RequestID: id})
	case errors.Is(err, errBodyTimeout):
		msg := "request body was not received within " + set.ReadBodyTimeout.String()
		httperr.WriteJSON(w, http.StatusRequestTimeout, httperr.ErrorBody{Code: "REQUEST_TIMEOUT", Error: label, Message: msg, Details: msg, RequestID: id})
	default:
		msg := "reading the request body failed: " + err.Error()
		httperr.WriteJSON(w, http.StatusBadRequest, httperr.ErrorBody{Code: code, Error: label, Message: msg, Details: msg, RequestID: id})
	}
}
