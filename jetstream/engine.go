// Package jetstream is herald's NATS JetStream engine: it implements
// engine.Engine on JetStream streams, one per topic base, and owns the
// connection (to an external NATS server or cluster, or to an embedded
// in-process nats-server with a file store), the streams' creation and
// reconciliation from the schemas' storage policies, the wire form of
// notifications (subject, payload, headers), one live feed per stream
// that hands every stored notification to an engine.Hub, and the replay
// consumers.
//
// It must not know about HTTP, SSE, CloudEvents or request parsing
// (packages handlers and notification do), and it must never touch
// streams it does not manage: admin operations only act on streams
// marked as herald's.
package jetstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
)

// Engine is the JetStream engine. Sequences are JetStream stream
// sequences (dense per topic base unless notifications are deleted),
// timestamps are JetStream's store times. Live subscribers are fed from
// one ordered consumer per stream through an engine.Hub, so the cost of a
// watcher is an in-process match, not a consumer on the server.
//
// An Engine is safe for concurrent use. Create it with Open and release it
// with Close.
type Engine struct {
	opts  Options
	log   *slog.Logger
	where string // the server, for error messages

	srv *server.Server // the embedded server, nil for an external one
	// lock holds the embedded server's data directory (lockDataDir)
	// until the server has shut down.
	lock *os.File
	// link is the current connection; the supervisor replaces it when
	// the client library gives up reconnecting. Every call reads it once
	// and uses that connection throughout.
	link atomic.Pointer[link]
	// lost wakes the supervisor: a connection was closed.
	lost chan struct{}
	// reconnected is closed (and replaced) whenever the connection is
	// back: the client library reconnected, or the supervisor swapped a
	// new one in. It wakes the calls waiting to retry and cancels the
	// requests that were sent before (the server that would have
	// answered them may be gone).
	reconnected atomic.Pointer[chan struct{}]
	// disconnected is closed (and replaced) whenever a connection is
	// lost or closed: the acknowledgements PublishBatch awaits on it
	// will not come.
	disconnected atomic.Pointer[chan struct{}]
	// batches numbers the rounds of PublishBatch (reply subjects).
	batches atomic.Uint64
	// redialing is set while the supervisor is re-dialling; redials
	// counts its attempts.
	redialing atomic.Bool
	redials   atomic.Int64
	hub       *engine.Hub

	// conf is the default stream policy and the configured streams by
	// base. It is never modified, only replaced whole (copy on write) by
	// ConfigureStreams under configMu, so that Publish, the live feeds,
	// History and lazily created streams read it with one atomic load.
	conf     atomic.Pointer[settings]
	configMu sync.Mutex // serialises ConfigureStreams

	// ctx ends when the engine closes; background work derives from it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool

	mu      sync.RWMutex
	streams map[string]*streamState // by base
	// stopping is set by Shutdown under mu: no feed starts afterwards,
	// no connection is swapped in, and tidy-ups are queued in leftover
	// for Shutdown to run.
	stopping bool
	leftover []func(context.Context)
}

// link is one connection to the server and its JetStream context.
type link struct {
	nc *nats.Conn
	js jetstream.JetStream

	muxMu sync.Mutex
	mux   *replyMux // PublishBatch's acknowledgements, created on first use

	// pubs are the connections single publishes take turns on, once the
	// extra ones are dialled (nil until then: nc alone); turn counts
	// the turns.
	pubs atomic.Pointer[publishers]
	turn atomic.Uint32
}

// cur returns the current connection.
func (e *Engine) cur() *link { return e.link.Load() }

// nextReconnect returns a channel closed when the connection is next
// re-established.
func (e *Engine) nextReconnect() <-chan struct{} { return *e.reconnected.Load() }

// signalReconnect closes the channel nextReconnect returned so far.
func (e *Engine) signalReconnect() {
	next := make(chan struct{})
	close(*e.reconnected.Swap(&next))
	e.opts.Observer.Reconnected()
}

// nextDisconnect returns a channel closed when a connection is next lost
// or closed.
func (e *Engine) nextDisconnect() <-chan struct{} { return *e.disconnected.Load() }

// signalDisconnect closes the channel nextDisconnect returned so far.
func (e *Engine) signalDisconnect() {
	next := make(chan struct{})
	close(*e.disconnected.Swap(&next))
}

// Engine conformance.
var _ engine.Engine = (*Engine)(nil)

// Open connects to the configured NATS server, or starts the embedded
// one when opts.URL is empty, creates or reconciles the configured
// streams and starts their live feeds. Connecting to an external server
// makes opts.ConnectAttempts attempts, opts.ReconnectDelay apart, each
// bounded by opts.ConnectTimeout, then fails with an error naming the URL
// and wrapping engine.ErrUnavailable.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	opts = opts.withDefaults()
	if err := opts.check(); err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	e := &Engine{
		opts:    opts,
		log:     opts.Logger,
		hub:     engine.NewHub(),
		lost:    make(chan struct{}, 1),
		streams: map[string]*streamState{},
	}
	e.conf.Store(newSettings(opts.Defaults, opts.Streams))
	first, firstLoss := make(chan struct{}), make(chan struct{})
	e.reconnected.Store(&first)
	e.disconnected.Store(&firstLoss)
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if err := e.start(ctx); err != nil {
		e.abort()
		return nil, err
	}
	if r := opts.Defaults.Retention; r != RetentionLimits {
		e.log.Warn("JetStream retention policy removes notifications once consumed: herald's own live feed consumes every notification, so replay may find nothing",
			"retention_policy", r)
	}
	for _, s := range opts.Streams {
		if err := e.reconcile(ctx, s); err != nil {
			e.abort()
			return nil, err
		}
	}
	for _, s := range opts.Streams {
		if _, err := e.ensure(ctx, s.Base); err != nil {
			// Wrapped before abort: once the engine is closed,
			// wrapSetup would name only "closed" and hide the cause.
			err = e.wrapSetup(ctx, "start stream "+StreamName(s.Base), err)
			e.abort()
			return nil, err
		}
	}
	e.log.Info("JetStream engine ready", "server", e.where, "streams", len(opts.Streams))
	return e, nil
}

// start connects (starting the embedded server first if needed), checks
// that JetStream answers and starts the supervisor.
func (e *Engine) start(ctx context.Context) error {
	o := e.opts
	var (
		nc  *nats.Conn
		err error
	)
	if o.URL == "" {
		e.where = "embedded nats-server (data directory " + o.Embedded.DataDir + ")"
		e.srv, e.lock, err = startEmbedded(o.Embedded, o.Token, e.log)
		if err != nil {
			return fmt.Errorf("jetstream: %w", err)
		}
		if nc, err = e.dialOnce(); err != nil {
			return fmt.Errorf("jetstream: connect to the %s: %w", e.where, err)
		}
	} else {
		e.where = "NATS at " + redactURLs(o.URL)
		if nc, err = e.connect(ctx); err != nil {
			return err
		}
	}
	l, err := e.newLink(nc)
	if err != nil {
		nc.Close()
		return err
	}
	e.link.Store(l)
	e.addPublishers(l)
	e.wg.Add(1)
	go e.supervise()
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	if _, err := l.js.AccountInfo(rctx); err != nil {
		return fmt.Errorf("jetstream: JetStream does not answer on %s (is it enabled?): %w", e.where, e.classify(err))
	}
	return nil
}

// newLink wraps a connection with its JetStream context.
func (e *Engine) newLink(nc *nats.Conn) (*link, error) {
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(e.opts.RequestTimeout))
	if err != nil {
		return nil, fmt.Errorf("jetstream: %s: %w", e.where, err)
	}
	return &link{nc: nc, js: js}, nil
}

// dialOnce makes one connection attempt: to the embedded server in
// process, or to the external server (each URL of the list once, each
// bounded by ConnectTimeout).
func (e *Engine) dialOnce() (*nats.Conn, error) {
	if e.srv != nil {
		return nats.Connect("", append(e.natsOptions(), nats.InProcessServer(e.srv))...)
	}
	return nats.Connect(e.opts.URL, append(e.natsOptions(), nats.Timeout(e.opts.ConnectTimeout))...)
}

// natsOptions are the client options common to both modes.
func (e *Engine) natsOptions() []nats.Option {
	o := e.opts
	opts := []nats.Option{
		nats.Name("herald"),
		nats.ReconnectWait(o.ReconnectDelay),
		nats.MaxReconnects(o.MaxReconnects),
		// No buffering while reconnecting: a publish fails at once (and
		// is retried) instead of waiting in a buffer that may be lost.
		nats.ReconnectBufSize(-1),
		nats.PingInterval(10 * time.Second),
		nats.MaxPingsOutstanding(3),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			e.signalDisconnect()
			if e.closed.Load() {
				return
			}
			e.log.Warn("NATS connection lost", "server", e.where, "error", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			if e.closed.Load() {
				return
			}
			e.log.Info("NATS connection re-established", "server", e.where, "url", redactURLs(nc.ConnectedUrl()))
			e.signalReconnect()
			e.afterReconnect()
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			e.signalDisconnect()
			if e.closed.Load() {
				return
			}
			if l := e.cur(); l != nil && l.nc != nc {
				return // a connection the supervisor has already replaced
			}
			reason := "reconnection attempts exhausted"
			switch {
			case e.opts.NoReconnect:
				reason = "client reconnection disabled"
			case nc.LastError() != nil:
				reason = nc.LastError().Error()
			}
			e.log.Warn("NATS connection closed; re-dialling until the server is back", "server", e.where, "reason", reason,
				"first_delay", e.opts.ReconnectDelay.String(), "max_delay", e.opts.MaxRedialDelay.String())
			select {
			case e.lost <- struct{}{}:
			default:
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if e.closed.Load() {
				return
			}
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			e.log.Warn("NATS asynchronous error", "server", e.where, "subject", subject, "error", err)
		}),
	}
	if o.NoReconnect {
		opts = append(opts, nats.NoReconnect())
	}
	if o.URL != "" {
		opts = append(opts, nats.SetCustomDialer(&ctxDialer{ctx: e.ctx, d: net.Dialer{Timeout: o.ConnectTimeout}}))
	}
	if o.Token != "" {
		opts = append(opts, nats.Token(o.Token))
	}
	return opts
}

// connect dials the external server: ConnectAttempts attempts,
// ReconnectDelay apart, each bounded by ConnectTimeout.
func (e *Engine) connect(ctx context.Context) (*nats.Conn, error) {
	o := e.opts
	for attempt := 1; ; attempt++ {
		nc, err := e.dialOnce()
		if err == nil {
			e.log.Info("connected to NATS", "url", redactURLs(nc.ConnectedUrl()), "attempt", attempt)
			return nc, nil
		}
		if attempt >= o.ConnectAttempts {
			return nil, fmt.Errorf("jetstream: cannot connect to %s: %d attempt(s) of up to %s each, %s apart, failed; last error: %w",
				e.where, attempt, o.ConnectTimeout, o.ReconnectDelay, asUnavailable(err))
		}
		e.log.Warn("NATS connection attempt failed; retrying", "server", e.where, "attempt", attempt,
			"attempts", o.ConnectAttempts, "retry_in", o.ReconnectDelay.String(), "error", err)
		t := time.NewTimer(o.ReconnectDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("jetstream: connect to %s: %w", e.where, ctx.Err())
		case <-t.C:
		}
	}
}

// statusText names a connection status in lower case.
func statusText(st nats.Status) string { return strings.ToLower(st.String()) }

// redactURLs hides the passwords of a comma-separated URL list.
func redactURLs(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if u, err := url.Parse(p); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				p = u.Redacted()
			} else {
				u.User = url.User("xxxxx")
				p = u.String()
			}
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}

// requestContext bounds one JetStream request with RequestTimeout and the
// engine's lifetime, as well as ctx.
func (e *Engine) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.RequestTimeout)
	stop := context.AfterFunc(e.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// Hub returns the engine's live fan-out, for tests and metrics.
func (e *Engine) Hub() *engine.Hub { return e.hub }

// Server returns the embedded nats-server, or nil when the engine talks
// to an external server.
func (e *Engine) Server() *server.Server { return e.srv }

// Ready reports whether the engine can serve requests: nil when the
// connection is up and JetStream answers within the request timeout, an
// error wrapping engine.ErrUnavailable otherwise (engine.ErrClosed once
// closed). It is meant for a readiness endpoint.
func (e *Engine) Ready(ctx context.Context) error {
	if e.closed.Load() {
		return fmt.Errorf("jetstream: ready: %w", engine.ErrClosed)
	}
	l := e.cur()
	if st := l.nc.Status(); st != nats.CONNECTED {
		state := statusText(st)
		if e.redialing.Load() {
			state += ", re-dialling"
		}
		return fmt.Errorf("jetstream: ready: connection to %s is %s: %w", e.where, state, engine.ErrUnavailable)
	}
	rctx, cancel := e.requestContext(ctx)
	defer cancel()
	if _, err := l.js.AccountInfo(rctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("jetstream: ready: %w", ctx.Err())
		}
		return fmt.Errorf("jetstream: ready: JetStream on %s does not answer: %w", e.where, asUnavailable(err))
	}
	return nil
}

// check returns the error of a call on a closed engine or with an ended
// context.
func (e *Engine) check(ctx context.Context, op string) error {
	if e.closed.Load() {
		return fmt.Errorf("jetstream: %s: %w", op, engine.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("jetstream: %s: %w", op, err)
	}
	return nil
}

// fail wraps err of operation op: engine.ErrClosed once the engine is
// closed, the caller's context error when ctx ended, and
// engine.ErrUnavailable joined to err when the server could not be
// reached or did not answer.
func (e *Engine) fail(ctx context.Context, op string, err error) error {
	if e.closed.Load() {
		return fmt.Errorf("jetstream: %s: %w", op, engine.ErrClosed)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("jetstream: %s: %w", op, ctx.Err())
	}
	return fmt.Errorf("jetstream: %s: %w", op, e.classify(err))
}

// clarify rewords the client's error for a request made while the
// connection is down (no buffering while reconnecting).
func clarify(err error) error {
	if errors.Is(err, nats.ErrReconnectBufExceeded) {
		return fmt.Errorf("not connected (reconnecting): %w", err)
	}
	if errors.Is(err, nats.ErrConnectionClosed) {
		return fmt.Errorf("not connected (re-dialling): %w", err)
	}
	return err
}

// classify joins engine.ErrUnavailable to err when it means the server
// could not be reached or did not answer.
func (e *Engine) classify(err error) error {
	if unavailable(err) {
		return asUnavailable(clarify(err))
	}
	return err
}

// unavailableError marks an error as engine.ErrUnavailable while keeping
// its own message and chain.
type unavailableError struct{ err error }

func (u unavailableError) Error() string   { return u.err.Error() + " (backend unavailable)" }
func (u unavailableError) Unwrap() []error { return []error{u.err, engine.ErrUnavailable} }

// asUnavailable wraps err as an unavailable-backend error.
func asUnavailable(err error) error { return unavailableError{err} }

// unavailable reports whether err means that the server could not be
// reached, did not answer in time, or is temporarily unable to serve.
func unavailable(err error) bool {
	if retryable(err) {
		return true
	}
	for _, target := range []error{
		nats.ErrConnectionClosed, nats.ErrNoServers, nats.ErrConnectionDraining,
		nats.ErrStaleConnection,
		jetstream.ErrJetStreamNotEnabled, jetstream.ErrJetStreamNotEnabledForAccount,
		jetstream.ErrConsumerLeadershipChanged,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// retryable reports whether a failed request may be sent again: the
// server did not receive it (no responders while a leader is elected or
// the server restarts, no connection while reconnecting, a closed
// connection the supervisor is replacing: the retry reads the current
// one) or did not answer in time (a publish carries a Nats-Msg-Id, so
// resending one that was in fact stored is deduplicated).
func retryable(err error) bool {
	for _, target := range []error{
		nats.ErrNoResponders, jetstream.ErrNoStreamResponse, nats.ErrTimeout,
		context.DeadlineExceeded, nats.ErrConnectionReconnecting, nats.ErrDisconnected,
		nats.ErrReconnectBufExceeded, nats.ErrConnectionClosed,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	var api *jetstream.APIError
	return errors.As(err, &api) && api.Code == 503
}

// background runs fn, which only ever tidies up (for example deleting a
// consumer the server would expire anyway), in a goroutine that Shutdown
// waits for, with a context bounded by the request timeout and the
// engine's lifetime. Once Shutdown has begun, fn is queued instead, and
// Shutdown runs the queued tidy-ups together within its deadline.
func (e *Engine) background(fn func(ctx context.Context)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopping {
		if len(e.leftover) < maxLeftover {
			e.leftover = append(e.leftover, fn)
		}
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		ctx, cancel := e.requestContext(context.Background())
		defer cancel()
		fn(ctx)
	}()
}

// maxLeftover bounds the tidy-ups queued during Shutdown; beyond it the
// server's inactivity threshold cleans up.
const maxLeftover = 10_000
