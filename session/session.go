// Package session implements herald's WebSocket session protocol (the
// AsyncAPI document in package openapi describes it) behind a small
// Transport interface: the welcome, the requests and the ordered lane
// they run in, replies and server frames ahead of the queued events,
// subscriptions with generations, the shared events queue, producers
// with credit, the limits, and the close reasons. It knows no WebSocket
// library: package handlers upgrades the connection, implements
// Transport on it, reads the client's frames into Receive and pings the
// client; tests drive a fake transport.
//
// A subscription or replay goes from its request to its stream through
// stream.Prepare, as an SSE watch does, and runs with stream.Run, the
// subscription being the stream's Sink.
package session

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/stream"
)

// This file is the session's lifetime and its outbound lanes (replies and
// server frames ahead of queued events). Requests are in requests.go,
// subscriptions in subs.go, producers in producers.go, statements in
// statements.go.

// Subprotocol is the WebSocket subprotocol of the session protocol.
const Subprotocol = "herald.v1"

// Client is what the transport knows of a session's client when it
// opens.
type Client struct {
	// RequestID is the upgrade request's id (in the session's logs).
	RequestID string
	// Credentials: the upgrade request carried credentials, so an auth
	// request is refused.
	Credentials bool
}

// Session is one client's session. New makes it, Start opens it, the
// transport hands it the client's frames (Receive) and, once it reads no
// more, ends it (End).
type Session struct {
	deps   *Deps
	obs    Observer
	t      Transport
	set    *Settings // the settings when it opened (limits)
	parent context.Context
	id     string
	reqID  string // the upgrade request's id

	// ctx ends with the session: a shutdown ends it with a *stream.Stop
	// cause, end (leaving the server's stream set) in every other case.
	ctx context.Context
	end func()
	// stop cancels the close that the end of ctx runs (AfterFunc);
	// closing is done once the session is closed.
	stop    func() bool
	closing sync.WaitGroup

	identity atomic.Pointer[auth.Identity]
	// expired holds the identity whose credentials expired, once they
	// have.
	expired atomic.Pointer[auth.Identity]
	// upgradeAuth: the upgrade carried credentials; firstDone: a request
	// came, so auth is no longer allowed.
	upgradeAuth bool
	firstDone   atomic.Bool
	release     func()
	// expiry is the credentials' timer, stopped when the session closes.
	expiry *time.Timer

	// out is the lane of replies and server frames, written ahead of
	// queued events, and the writer's state.
	out outbound
	q   eventQueue

	// lane runs requests in order; bypass requests (ping, unsubscribe)
	// skip it.
	lane requestLane

	mu       sync.Mutex
	subs     map[string]*subscription // active, by name
	ended    map[string]bool          // names of subscriptions ended by the server, until reused or unsubscribed
	nextGen  uint64
	running  int // subscriptions and replays counted against the limit
	subsWG   sync.WaitGroup
	prod     producers
	closeErr atomic.Pointer[CloseReason]
}

// New returns the session of a client over t. ctx is the upgrade
// request's context: the session takes its values (the identity the
// upgrade authenticated, auth.IdentityFrom), not its end.
func New(ctx context.Context, deps *Deps, t Transport, c Client) *Session {
	s := &Session{
		deps: deps, obs: deps.Observer, t: t, set: deps.Settings(), parent: context.WithoutCancel(ctx),
		id: uuid.NewString(), reqID: c.RequestID, upgradeAuth: c.Credentials,
	}
	if s.obs == nil {
		s.obs = noObserver{}
	}
	s.q.init(s.set.Limits.QueueFrames, s.set.Limits.QueueBytes, s.startWriter)
	s.prod.init(s)
	if ident := auth.IdentityFrom(ctx); ident != nil {
		s.identity.Store(ident)
	}
	return s
}

// log returns the session's logger (built when something is logged, which
// is rare, rather than held by every session).
func (s *Session) log() *slog.Logger {
	return s.deps.Log.With("session_id", s.id, "request_id", s.reqID)
}

// ID returns the session's id (its welcome's session_id).
func (s *Session) ID() string { return s.id }

// Context returns the session's context, which ends when the session
// does (the transport's keep-alive waits on it).
func (s *Session) Context() context.Context { return s.ctx }

// Start opens the session: it sends the welcome and arms the expiry of
// the upgrade's credentials. The writer and the ordered lane run only
// while they have something to do, so that an idle session costs the
// transport's reader and its subscriptions' streams.
func (s *Session) Start() {
	// The session joins the server's stream set under no event type, so
	// that a shutdown reaches it.
	s.ctx, s.end = s.deps.Streams.Join(s.parent, "")
	s.deps.Counters.open.Add(1)
	s.obs.SessionOpened()
	s.send(s.welcome())
	if id := s.identity.Load(); id != nil {
		s.expireCredentials(id)
	}
	// A session that the server ends (shutdown, a protocol violation, a
	// failed write or keep-alive) closes from a callback while the
	// transport still reads: the close makes its read return.
	s.closing.Add(1)
	s.stop = context.AfterFunc(s.ctx, func() {
		defer s.closing.Done()
		cr := CloseShutdown
		if p := s.closeErr.Load(); p != nil {
			cr = *p
		}
		s.close(cr)
	})
}

// End ends the session once its transport reads no more; why is how the
// connection ended as the transport saw it (the client's close, a frame
// it refused). It returns once the session is closed.
func (s *Session) End(why CloseReason) {
	if s.stop() {
		// The client closed or broke the connection, or sent what ends
		// it (Receive or the transport set the close reason).
		if p := s.closeErr.Load(); p != nil {
			why = *p
		}
		s.end() // the client closed the session
		s.close(why)
		s.closing.Done()
	}
	s.closing.Wait()
	s.end()
	s.deps.Counters.open.Add(-1)
	s.obs.SessionClosed()
	if s.release != nil {
		s.release()
	}
}

// Disconnect ends the session from the transport's side with reason (a
// keep-alive that gave up): the connection closes with reason once what
// waits is written, if it still can be.
func (s *Session) Disconnect(reason CloseReason) { s.fail(reason) }

// close ends a session whose context has ended: its subscriptions end
// (with subscription_ended server_shutdown on a shutdown), producers
// finish what is in flight, the frames still to write are written, then
// the connection closes with cr (CloseShutdown on a shutdown).
func (s *Session) close(cr CloseReason) {
	shutdown := isShutdown(s.ctx)
	if shutdown {
		cr = CloseShutdown
	}
	s.endSubscriptions()
	s.prod.closeAll(shutdown)
	s.lane.close()
	// The timer's callback does nothing once the session has ended.
	if s.expiry != nil {
		s.expiry.Stop()
	}
	s.closeOutbound()
	_ = s.t.Close(cr)
}

// expireCredentials ends, when id's credentials expire (ValidUntil: the
// token's exp plus the leeway every request's verification allows, so
// that a token the upgrade accepted keeps the session until then), the
// session's subscriptions that an anonymous client could not hold
// (reason unauthorized, with their resume ids); the session goes on
// without credentials (requests that need them are refused, saying that
// the credentials expired; a new connection with fresh ones resumes).
func (s *Session) expireCredentials(id *auth.Identity) {
	until := id.ValidUntil()
	if until.IsZero() {
		return
	}
	s.expiry = time.AfterFunc(until.Sub(s.deps.Now()), func() {
		if s.ctx.Err() != nil || !s.identity.CompareAndSwap(id, nil) {
			return
		}
		s.expired.Store(id)
		msg := expiredMessage(id) + " and resume from resume_from_id"
		s.mu.Lock()
		var ended []*subscription
		for _, sub := range s.subs {
			if sub.needsAuth {
				ended = append(ended, sub)
			}
		}
		s.mu.Unlock()
		for _, sub := range ended {
			sub.cancel(&stream.Stop{Reason: stream.Unauthorized, Message: msg})
		}
		s.log().Info("session credentials expired", "user", id.Username, "subscriptions_ended", len(ended))
	})
}

// expiredMessage says that id's credentials expired, and when.
func expiredMessage(id *auth.Identity) string {
	return "the session's credentials expired at " + id.ValidUntil().UTC().Format(time.RFC3339) +
		" (the token's exp, " + id.Expires.UTC().Format(time.RFC3339) + ", plus " + auth.TokenLeeway.String() +
		" of leeway for clock skew); reconnect with fresh ones"
}

// denial is the code and message of a refused access: once the
// session's credentials have expired, a refusal for want of credentials
// says so.
func (s *Session) denial(e *auth.Error) (code, msg string) {
	code, msg = e.Kind.Code(), e.Message
	if id := s.expired.Load(); id != nil && e.Kind == auth.Unauthenticated && s.identity.Load() == nil {
		msg += ": " + expiredMessage(id)
	}
	return code, msg
}

// isShutdown reports whether ctx ended because the server shuts down.
func isShutdown(ctx context.Context) bool {
	var st *stream.Stop
	return errors.As(context.Cause(ctx), &st) && st.Reason == stream.Shutdown
}

// fail ends the session with a close reason (a protocol violation).
func (s *Session) fail(cr CloseReason) {
	s.closeErr.CompareAndSwap(nil, &cr)
	s.end()
}

// welcome is the first frame.
func (s *Session) welcome() []byte {
	ss := s.set.Limits
	limits := map[string]any{
		"max_subscriptions": ss.MaxSubscriptions, "max_producers": ss.MaxProducers,
		"max_producer_bytes": ss.MaxProducerBytes, "producer_credit": ss.ProducerCredit,
		"producer_max_batch": ss.ProducerMaxBatch, "session_queue_frames": ss.QueueFrames,
		"max_frame_events": ss.MaxFrameEvents, "max_frame_bytes": ss.MaxFrameBytes,
		"blocking_timeout_ms": ss.BlockingTimeout.Milliseconds(), "max_sessions_per_user": ss.MaxSessionsPerUser,
		"max_request_bytes": s.set.MaxRequestBytes,
	}
	return mustJSON(map[string]any{"type": "welcome", "session_id": s.id, "protocol": Subprotocol,
		"server": "herald " + s.deps.Version, "limits": limits})
}

// ---- outbound ----

// ctrlLaneFrames bounds the control frames waiting for the writer: a
// sender waits while that many are (a client that reads nothing and
// keeps sending requests).
const ctrlLaneFrames = 256

// outbound is a session's lane of replies and server frames, written
// ahead of queued events, and the state of its writer. The writer runs
// only while something waits to be written, so an idle session has no
// writer goroutine, and the lane holds memory only for what waits in it.
type outbound struct {
	mu   sync.Mutex
	ctrl [][]byte // control frames, oldest first
	// room is closed when a control frame leaves the lane, waking the
	// senders that wait for room (nil while none waits).
	room    chan struct{}
	running bool // a writer runs
	closed  bool // the session is closing: frames sent now are discarded
	failed  bool // a write failed: nothing more is written
	wg      sync.WaitGroup
}

// send queues a reply or server frame on the control lane, ahead of
// queued events. It blocks while the lane is full (a client that reads
// nothing and keeps sending requests) and gives up when the session ends
// and the lane is still full; a frame sent once the session has closed,
// or after a write failed, is discarded.
func (s *Session) send(frame []byte) {
	o := &s.out
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.ctrl) >= ctrlLaneFrames && !o.closed && !o.failed {
		if s.ctx.Err() != nil {
			return
		}
		if o.room == nil {
			o.room = make(chan struct{})
		}
		room := o.room
		o.mu.Unlock()
		select {
		case <-room:
		case <-s.ctx.Done():
		}
		o.mu.Lock()
	}
	if o.closed || o.failed {
		return
	}
	o.ctrl = append(o.ctrl, frame)
	s.deps.Counters.ctrl.Add(1)
	s.startWriterLocked()
}

// startWriter starts the writer unless it runs (called when an events
// frame was queued).
func (s *Session) startWriter() {
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	if !s.out.closed {
		s.startWriterLocked()
	}
}

// startWriterLocked starts the writer unless it runs; out.mu is held.
func (s *Session) startWriterLocked() {
	o := &s.out
	if o.running || o.failed {
		return
	}
	o.running = true
	o.wg.Add(1)
	go s.writer()
}

// closeOutbound writes what is still waiting (the subscription_ended
// frames of a shutdown come last) and returns once nothing more will be
// written: frames sent from now on are discarded.
func (s *Session) closeOutbound() {
	o := &s.out
	o.mu.Lock()
	o.closed = true
	idle := !o.running && !o.failed
	if idle {
		o.running = true
		o.wg.Add(1)
	}
	o.mu.Unlock()
	if idle {
		s.writer()
	}
	o.wg.Wait()
}

// writer writes frames, control frames first, then queued events, until
// nothing waits (each events frame is taken after the control frames
// sent before it: replies overtake the rest of the queue).
func (s *Session) writer() {
	o := &s.out
	defer o.wg.Done()
	for {
		o.mu.Lock()
		if len(o.ctrl) > 0 {
			f := o.ctrl[0]
			o.ctrl[0] = nil
			if o.ctrl = o.ctrl[1:]; len(o.ctrl) == 0 {
				o.ctrl = nil // an idle lane holds no buffer
			}
			if o.room != nil {
				close(o.room)
				o.room = nil
			}
			o.mu.Unlock()
			if !s.write(f) {
				s.writeFailed()
				return
			}
			continue
		}
		e, ok := s.q.pop()
		if !ok {
			o.running = false
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
		// A subscription's name is free once its final frame is handed
		// over, before the write: the client may subscribe the name again
		// the moment it reads the frame, and any reply to that goes out
		// through this writer after this write.
		if e.sub != nil {
			e.sub.handed(e)
		}
		if !s.write(e.data) {
			s.writeFailed()
			return
		}
	}
}

// writeFailed ends a session whose connection failed: frames waiting and
// frames sent from now on are discarded, so that senders never block on
// it.
func (s *Session) writeFailed() {
	s.end()
	o := &s.out
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed, o.running = true, false
	o.ctrl = nil
	if o.room != nil {
		close(o.room)
		o.room = nil
	}
}

// write writes one frame; false when the connection failed.
func (s *Session) write(frame []byte) bool {
	if err := s.t.Write(frame); err != nil {
		s.log().Debug("session write failed", "error", err)
		return false
	}
	return true
}
