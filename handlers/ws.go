package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"herald/api/httperr"
	"herald/auth"
	"herald/stream"
)

// This file is the WebSocket session transport (session protocol,
// ../shared/spec/sessions-protocol.md): the upgrade, the frames, the two
// outbound lanes (replies and server frames ahead of queued events), the
// ordered request lane and the session's lifetime. Subscriptions are in
// ws_subs.go, producers in ws_producers.go, statements in
// ws_statements.go.

// Subprotocol is the WebSocket subprotocol of the session protocol.
const Subprotocol = "herald.v1"

// Session serves GET /api/v1/session: the WebSocket session protocol.
func (h *Handlers) Session(w http.ResponseWriter, r *http.Request) {
	set := h.Settings()
	id := httperr.RequestID(r.Context())
	if offered := offeredSubprotocols(r); len(offered) > 0 && !slices.Contains(offered, Subprotocol) {
		msg := "the session protocol is " + Subprotocol + "; the client offered " + strings.Join(offered, ", ")
		httperr.WriteJSON(w, http.StatusBadRequest, httperr.ErrorBody{Code: "INVALID_REQUEST", Error: "unsupported_subprotocol", Message: msg, Details: msg, RequestID: id})
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && set.AllowedOrigins != nil &&
		!slices.Contains(set.AllowedOrigins, "*") && !slices.Contains(set.AllowedOrigins, origin) && !sameOrigin(origin, r) {
		auth.WriteForbidden(w, r, "origin "+strconv.Quote(origin)+" is not in application.cors.allowed_origins")
		return
	}
	ident := auth.IdentityFrom(r.Context())
	var release func()
	if ident != nil {
		var ok bool
		if release, ok = h.sessions.acquire(ident.Username, set.Session.MaxSessionsPerUser); !ok {
			auth.WriteTooManyStreams(w, r, sessionsLimitMessage(ident.Username, set.Session.MaxSessionsPerUser), 10*time.Second)
			return
		}
		defer release()
	}
	// A client that reads nothing holds no more than the configured
	// kernel send buffer; its queue then fills and its subscriptions end
	// (BLOCKING) or drop (DROPPING).
	capSendBuffer(r, set.Watch.SendBufferBytes, h.log)
	c, err := accept(&guardedWriter{ResponseWriter: w, limit: set.MaxBodyBytes}, r)
	if err != nil {
		h.log.Debug("session upgrade failed", "request_id", id, "error", err)
		return
	}
	c.SetReadLimit(set.MaxBodyBytes)
	s := newSession(h, set, c, id, ident, r.Header.Get("Authorization") != "")
	s.run()
	if s.release != nil {
		s.release()
	}
}

// accept upgrades the connection. The handshake runs in a goroutine of
// its own while the handler's goroutine waits: it needs more stack than
// is left above the router's middleware in the handler's first stack
// size, and a goroutine's stack, once grown, stays at its largest size
// for as long as the session reads on it (16 kB instead of 8 per idle
// session). A panic in it is raised again in the handler's goroutine,
// where the router recovers it.
func accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	var (
		c      *websocket.Conn
		err    error
		caught any
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { caught = recover() }()
		c, err = websocket.Accept(w, r, &websocket.AcceptOptions{
			Subprotocols: []string{Subprotocol},
			// The origin was checked above, with the API's CORS setting.
			InsecureSkipVerify: true,
		})
	}()
	<-done
	if caught != nil {
		panic(caught)
	}
	return c, err
}

// sameOrigin reports whether origin is the origin the request was sent
// to, scheme and host: a page herald serves itself (the browser console)
// needs no entry in application.cors.allowed_origins, as CORS never
// restricts a page's own origin. The scheme counts: a page of the same
// host over plain http is another origin than the https one (a page any
// network on the way could have written).
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) && strings.EqualFold(u.Scheme, requestScheme(r))
}

// requestScheme is the scheme the client used: a TLS-terminating proxy
// in front says it in X-Forwarded-Proto (which a browser's page cannot
// set on an upgrade), else https on a TLS connection and http otherwise.
func requestScheme(r *http.Request) string {
	if p := r.Header.Get("X-Forwarded-Proto"); p != "" {
		p, _, _ = strings.Cut(p, ",")
		return strings.ToLower(strings.TrimSpace(p))
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// sessionsLimitMessage says that user has reached max_sessions_per_user
// (the upgrade's 429 and the auth request's LIMIT_EXCEEDED).
func sessionsLimitMessage(user string, limit int) string {
	return fmt.Sprintf("user '%s' already has %d open sessions (session.max_sessions_per_user)", user, limit)
}

// offeredSubprotocols lists the subprotocols of the upgrade request.
func offeredSubprotocols(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// sessionCounter counts the open sessions per user.
type sessionCounter struct {
	mu    sync.Mutex
	users map[string]int
}

// acquire counts a session of user unless the limit (0 = none) is
// reached; release uncounts it.
func (c *sessionCounter) acquire(user string, limit int) (release func(), ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if limit > 0 && c.users[user] >= limit {
		return nil, false
	}
	if c.users == nil {
		c.users = map[string]int{}
	}
	c.users[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.users[user]--; c.users[user] <= 0 {
				delete(c.users, user)
			}
		})
	}, true
}

// session is one WebSocket connection.
type session struct {
	h     *Handlers
	set   *Settings // the settings when it opened (limits)
	conn  *websocket.Conn
	id    string
	reqID string // the upgrade request's id

	// ctx ends with the session: a shutdown ends it with a *stream.Stop
	// cause, end (leaving the handlers' stream set) in every other case.
	ctx context.Context
	end func()

	identity atomic.Pointer[auth.Identity]
	// expired holds the identity whose credentials expired, once they
	// have.
	expired atomic.Pointer[auth.Identity]
	// upgradeAuth: the upgrade carried credentials; authTried: an auth
	// request (or any request) came, so auth is no longer allowed.
	upgradeAuth bool
	firstDone   atomic.Bool
	release     func()
	// pinger and expiry are the keep-alive's and the credentials'
	// timers, stopped when the session closes.
	pinger, expiry *time.Timer

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
	closeErr atomic.Pointer[closeReason]
}

// closeReason is how a session's connection closes: a close status and
// the reason text of the close frame (RFC 6455). Every close is one of
// the values below, never a status and a text spelled at a call site.
type closeReason struct {
	code   websocket.StatusCode
	reason string
}

// The close reasons of a session (session protocol §9 and the close
// statuses of the AsyncAPI document).
var (
	// closeNormal: the client closed without a status of its own.
	closeNormal = closeReason{websocket.StatusNormalClosure, ""}
	// closeShutdown: the server shuts down.
	closeShutdown = closeReason{websocket.StatusGoingAway, "server shutting down"}
	// closePingTimeout: the client answered two pings in a row with
	// nothing.
	closePingTimeout = closeReason{websocket.StatusPolicyViolation, "two pings unanswered"}
	// closeUnmasked: a client frame without a mask.
	closeUnmasked = closeReason{websocket.StatusProtocolError, "unmasked frame: a client must mask every frame (RFC 6455)"}
	// closeNotJSON: a frame that is not one JSON object.
	closeNotJSON = closeReason{websocket.StatusProtocolError, "not a JSON object"}
	// closeBinary: a binary frame.
	closeBinary = closeReason{websocket.StatusUnsupportedData, "binary frame"}
)

// closeTooBig: a message larger than limit bytes (max_body_bytes).
func closeTooBig(limit int64) closeReason {
	return closeReason{websocket.StatusMessageTooBig, "frame larger than " + strconv.FormatInt(limit, 10) + " bytes"}
}

// closeEcho: the client closed with a status of its own, which the
// server's close frame echoes.
func closeEcho(code websocket.StatusCode) closeReason { return closeReason{code: code} }

func newSession(h *Handlers, set *Settings, c *websocket.Conn, reqID string, ident *auth.Identity, upgradeAuth bool) *session {
	s := &session{
		h: h, set: set, conn: c, id: uuid.NewString(), reqID: reqID,
		upgradeAuth: upgradeAuth,
	}
	s.q.init(set.Session.QueueFrames, s.startWriter)
	s.prod.init(s)
	if ident != nil {
		s.identity.Store(ident)
	}
	return s
}

// log returns the session's logger (built when something is logged, which
// is rare, rather than held by every session).
func (s *session) log() *slog.Logger {
	return s.h.log.With("session_id", s.id, "request_id", s.reqID)
}

// run serves the session until the client or the server ends it. The
// handler's goroutine reads the client's frames; the writer, the ordered
// lane and the keep-alive run only while they have something to do, so
// that an idle session costs its reader and its subscriptions' streams.
func (s *session) run() {
	// The session joins the handlers' stream set under no event type, so
	// that a shutdown reaches it.
	s.ctx, s.end = s.h.running.Join(context.Background(), "")
	defer s.end()
	s.h.sessionsOpen.Add(1)
	defer s.h.sessionsOpen.Add(-1)
	s.h.obs.SessionOpened()
	defer s.h.obs.SessionClosed()

	s.keepAlive()
	s.send(s.welcome())
	if id := s.identity.Load(); id != nil {
		s.expireCredentials(id)
	}

	// A session that the server ends (shutdown, a protocol violation, a
	// failed write or keep-alive) closes from a callback while the reader
	// still reads: the close makes its read return.
	var closing sync.WaitGroup
	closing.Add(1)
	stop := context.AfterFunc(s.ctx, func() {
		defer closing.Done()
		cr := closeShutdown
		if p := s.closeErr.Load(); p != nil {
			cr = *p
		}
		s.close(cr)
	})
	// The reader's reads have no context: coder/websocket closes the
	// connection at once when a Read's context ends, and a session that
	// ends must still write its last frames and the close frame.
	err := s.reader()
	if stop() {
		// The client closed or broke the connection, or sent what ends
		// it (the reader set the close status).
		cr := closeNormal
		if p := s.closeErr.Load(); p != nil {
			cr = *p
		} else if st := websocket.CloseStatus(err); st != -1 {
			cr = closeEcho(st)
		}
		s.end() // the client closed the session
		s.close(cr)
		closing.Done()
	}
	closing.Wait()
}

// close ends a session whose context has ended: its subscriptions end
// (with subscription_ended server_shutdown on a shutdown), producers
// finish what is in flight, the frames still to write are written, then
// the connection closes with cr (closeShutdown on a shutdown).
func (s *session) close(cr closeReason) {
	shutdown := isShutdown(s.ctx)
	if shutdown {
		cr = closeShutdown
	}
	s.endSubscriptions()
	s.prod.closeAll(shutdown)
	s.lane.close()
	// The timers' callbacks do nothing once the session has ended.
	if s.pinger != nil {
		s.pinger.Stop()
	}
	if s.expiry != nil {
		s.expiry.Stop()
	}
	s.closeOutbound()
	_ = s.conn.Close(cr.code, cr.reason)
}

// expireCredentials ends, when id's credentials expire (ValidUntil: the
// token's exp plus the leeway every request's verification allows, so
// that a token the upgrade accepted keeps the session until then), the
// session's subscriptions that an anonymous client could not hold
// (reason unauthorized, with their resume ids); the session goes on
// without credentials (requests that need them are refused, saying that
// the credentials expired; a new connection with fresh ones resumes).
func (s *session) expireCredentials(id *auth.Identity) {
	until := id.ValidUntil()
	if until.IsZero() {
		return
	}
	s.expiry = time.AfterFunc(until.Sub(s.h.now()), func() {
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
func (s *session) denial(e *auth.Error) (code, msg string) {
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
func (s *session) fail(cr closeReason) {
	s.closeErr.CompareAndSwap(nil, &cr)
	s.end()
}

// welcome is the first frame.
func (s *session) welcome() []byte {
	ss := s.set.Session
	limits := map[string]any{
		"max_subscriptions": ss.MaxSubscriptions, "max_producers": ss.MaxProducers,
		"max_producer_bytes": ss.MaxProducerBytes, "producer_credit": ss.ProducerCredit,
		"producer_max_batch": ss.ProducerMaxBatch, "session_queue_frames": ss.QueueFrames,
		"max_frame_events": ss.MaxFrameEvents, "max_frame_bytes": ss.MaxFrameBytes,
		"blocking_timeout_ms": ss.BlockingTimeout.Milliseconds(), "max_sessions_per_user": ss.MaxSessionsPerUser,
		"max_request_bytes": s.set.MaxBodyBytes,
	}
	return mustJSON(map[string]any{"type": "welcome", "session_id": s.id, "protocol": Subprotocol,
		"server": "herald " + s.h.version, "limits": limits})
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
func (s *session) send(frame []byte) {
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
	s.startWriterLocked()
}

// startWriter starts the writer unless it runs (called when an events
// frame was queued).
func (s *session) startWriter() {
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	if !s.out.closed {
		s.startWriterLocked()
	}
}

// startWriterLocked starts the writer unless it runs; out.mu is held.
func (s *session) startWriterLocked() {
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
func (s *session) closeOutbound() {
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

// writeTimeout bounds one frame write.
func (s *session) writeTimeout() time.Duration { return s.h.writeTimeout }

// writer writes frames, control frames first, then queued events, until
// nothing waits (each events frame is taken after the control frames
// sent before it: replies overtake the rest of the queue).
func (s *session) writer() {
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
func (s *session) writeFailed() {
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

// write writes one frame; false when the connection failed. A write
// that takes longer than the write timeout closes the connection (as a
// Write's context would; the connection keeps the context of its last
// write, so that one would stay allocated with every idle session).
func (s *session) write(frame []byte) bool {
	t := time.AfterFunc(s.writeTimeout(), func() { _ = s.conn.CloseNow() })
	err := s.conn.Write(context.Background(), websocket.MessageText, frame)
	if !t.Stop() && err == nil {
		err = errors.New("the write timed out")
	}
	if err != nil {
		s.log().Debug("session write failed", "error", err)
		return false
	}
	return true
}

// keepAlive pings the client every heartbeat interval and drops a
// connection that has not answered two pings in a row. The pings run
// from a timer's callback (no goroutine waits between them); as with a
// ticker, the next ping is due one interval after the last one started.
func (s *session) keepAlive() {
	every := s.set.Watch.Heartbeat
	if every <= 0 {
		return
	}
	missed := 0 // the callbacks never overlap: each arms the next
	// Armed once assigned: the callback reads s.pinger.
	s.pinger = time.AfterFunc(time.Duration(1<<62), func() {
		if s.ctx.Err() != nil {
			return
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(s.ctx, every)
		err := s.conn.Ping(ctx)
		cancel()
		if s.ctx.Err() != nil {
			return
		}
		if err != nil {
			if missed++; missed >= 2 {
				s.log().Info("session dropped: two pings unanswered")
				s.fail(closePingTimeout)
				_ = s.conn.CloseNow()
				return
			}
		} else {
			missed = 0
		}
		s.pinger.Reset(max(0, every-time.Since(start)))
	})
	s.pinger.Reset(every)
}

// ---- inbound ----

// request is one decoded client request.
type request struct {
	id      jsontext.Value // as sent: a string or an integer
	op      string
	members map[string]jsontext.Value
	size    int

	// stmt is an execute request's statement once parsed (stmtErr why
	// it does not parse), parsed once for the lane and for execute.
	stmt    *Statement
	stmtErr error
	parsed  bool
	// after are the unsubscribes of the subscription this request names
	// that came while it waited or ran: they run as soon as it is done,
	// in the order received (guarded by the lane's mu).
	after []*request
}

// subscription returns the subscription name a request names, if any:
// subscribe, replay and unsubscribe by their "name", execute by the name
// of its CREATE or DELETE SUBSCRIPTION.
func (req *request) subscription() (string, bool) {
	switch req.op {
	case "subscribe", "replay", "unsubscribe":
		name, ok, err := req.str("name")
		return name, ok && err == nil
	case "execute":
		st, err := req.statement()
		if err != nil || (st.Kind != "CREATE SUBSCRIPTION" && st.Kind != "DELETE SUBSCRIPTION") {
			return "", false
		}
		return st.Name, true
	}
	return "", false
}

// statement parses an execute request's statement once; a request
// without a string statement is an error.
func (req *request) statement() (*Statement, error) {
	if !req.parsed {
		req.parsed = true
		src, ok, err := req.str("statement")
		switch {
		case err != nil || !ok:
			req.stmtErr = errors.New(`execute needs a "statement" (a string)`)
		default:
			req.stmt, req.stmtErr = ParseStatement(src)
		}
	}
	return req.stmt, req.stmtErr
}

// reader reads frames until the connection ends.
func (s *session) reader() error {
	for {
		typ, data, err := s.conn.Read(context.Background())
		if err != nil {
			var tooBig *frameTooBigError
			switch {
			case errors.Is(err, errUnmaskedFrame):
				s.fail(closeUnmasked)
			case errors.As(err, &tooBig) || errors.Is(err, websocket.ErrMessageTooBig) || websocket.CloseStatus(err) == websocket.StatusMessageTooBig:
				s.fail(closeTooBig(s.set.MaxBodyBytes))
			}
			return err
		}
		if typ != websocket.MessageText {
			s.send(s.errorFrame("PROTOCOL_VIOLATION", "binary frames are not part of the protocol: send one JSON object per text frame"))
			s.fail(closeBinary)
			return errors.New("binary frame")
		}
		req, perr := decodeRequest(data)
		if perr != nil {
			if perr.fatal {
				s.send(s.errorFrame("PROTOCOL_VIOLATION", perr.msg))
				s.fail(closeNotJSON)
				return errors.New(perr.msg)
			}
			if perr.id == nil {
				s.send(s.errorFrame("INVALID_REQUEST", perr.msg))
			} else {
				s.send(s.replyError(perr.id, "INVALID_REQUEST", perr.msg))
			}
			s.firstDone.Store(true)
			continue
		}
		switch req.op {
		case "ping":
			s.firstDone.Store(true)
			s.send(replyOK(req.id, map[string]any{"time": s.h.now().UTC().Format(time.RFC3339Nano)}))
		case "unsubscribe":
			s.firstDone.Store(true)
			// Never held behind a waiting notify or publish, but always
			// after the earlier requests that name the same subscription.
			if !s.lane.holdBehind(req) {
				s.unsubscribe(req)
			}
		default:
			if !s.lane.push(s, req) {
				return s.ctx.Err()
			}
		}
	}
}

// decodeError is a frame that is not a usable request.
type decodeError struct {
	fatal bool           // not a JSON object: the session ends
	id    jsontext.Value // the request's id when it had a usable one
	msg   string
}

// decodeRequest reads one frame: a JSON object (no repeated key) with a
// usable id (a string or an integer) and an op.
func decodeRequest(data []byte) (*request, *decodeError) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '{' {
		return nil, &decodeError{fatal: true, msg: "a frame must be one JSON object (a request {\"id\": …, \"op\": …})"}
	}
	req := &request{members: map[string]jsontext.Value{}, size: len(data)}
	for dec.PeekKind() != '}' {
		kt, err := dec.ReadToken()
		if err != nil {
			if errors.Is(err, jsontext.ErrDuplicateName) {
				dup := ""
				var se *jsontext.SyntacticError
				if errors.As(err, &se) {
					dup = se.JSONPointer.LastToken()
				}
				var id jsontext.Value
				if v, ok := req.members["id"]; ok && usableID(v) {
					id = v
				}
				return nil, &decodeError{id: id, msg: "the request repeats the key '" + dup + "'"}
			}
			return nil, &decodeError{fatal: true, msg: "a frame must be one JSON object: " + strings.TrimPrefix(err.Error(), "jsontext: ")}
		}
		key := kt.String()
		v, err := dec.ReadValue()
		if err != nil {
			return nil, &decodeError{fatal: true, msg: "a frame must be one JSON object: " + strings.TrimPrefix(err.Error(), "jsontext: ")}
		}
		req.members[key] = v.Clone()
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, &decodeError{fatal: true, msg: "a frame must be one JSON object: " + strings.TrimPrefix(err.Error(), "jsontext: ")}
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, &decodeError{fatal: true, msg: "a frame must be exactly one JSON object: data follows it"}
	}
	id, ok := req.members["id"]
	if ok && len(id) > maxEchoBytes && id.Kind() == '"' {
		return nil, &decodeError{msg: fmt.Sprintf("the request's id is %d bytes long; an id is at most %d bytes (as sent), since every reply echoes it", len(id), maxEchoBytes)}
	}
	if ok && !usableID(id) {
		ok = false
	}
	if !ok {
		return nil, &decodeError{msg: "the request has no usable id: send \"id\" as a string or an integer, echoed in its reply"}
	}
	req.id = id
	delete(req.members, "id")
	op, ok := req.members["op"]
	if !ok || op.Kind() != '"' {
		return nil, &decodeError{id: id, msg: "the request has no \"op\": send one of " + strings.Join(opNames, ", ")}
	}
	delete(req.members, "op")
	req.op = unquoteValue(op)
	if !slices.Contains(opNames, req.op) {
		return nil, &decodeError{id: id, msg: "unknown op " + strconv.Quote(req.op) + "; the ops are " + strings.Join(opNames, ", ")}
	}
	return req, nil
}

// opNames are the requests of the protocol.
var opNames = []string{"auth", "ping", "schema", "notify", "subscribe", "unsubscribe", "replay", "execute", "open_producer", "publish", "close_producer"}

// usableID reports whether v is a string or an integer of at most
// maxEchoBytes (as sent).
func usableID(v jsontext.Value) bool {
	if len(v) > maxEchoBytes {
		return false
	}
	switch v.Kind() {
	case '"':
		return true
	case '0':
		_, err := strconv.ParseInt(string(v), 10, 64)
		return err == nil
	}
	return false
}

// unquoteValue returns the string a JSON string value holds.
func unquoteValue(v jsontext.Value) string {
	b, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return ""
	}
	return string(b)
}

// laneRequests bounds the requests waiting in the ordered lane: the
// reader waits (reading nothing more) while that many are.
const laneRequests = 64

// requestLane is a session's ordered lane: requests run one after the
// other in the order received, in a goroutine that runs only while
// requests wait.
//
// An unsubscribe skips the lane (it is never held behind a waiting
// notify or publish), except behind a request that names the same
// subscription: per subscription name, a request is handled after every
// earlier request that names it, so an unsubscribe sent right after its
// subscribe is answered after the subscribe and stops what it opened.
type requestLane struct {
	mu      sync.Mutex
	reqs    []*request    // waiting, oldest first
	room    chan struct{} // closed when a request leaves (nil while the reader does not wait)
	running bool
	closed  bool
	// named holds, for each subscription name, the last request of the
	// lane naming it that waits or runs.
	named map[string]*request
	wg    sync.WaitGroup
}

// holdBehind defers an unsubscribe until the last request of the lane
// that names the same subscription is done; false when none waits or
// runs (the unsubscribe runs at once).
func (l *requestLane) holdBehind(req *request) bool {
	name, ok := req.subscription()
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.named[name]
	if prev == nil || l.closed {
		return false
	}
	prev.after = append(prev.after, req)
	return true
}

// done runs the unsubscribes held behind req, then forgets req as the
// last request naming its subscription.
func (s *session) done(req *request) {
	l := &s.lane
	name, named := req.subscription()
	if !named {
		return
	}
	for {
		l.mu.Lock()
		after := req.after
		req.after = nil
		if len(after) == 0 {
			if l.named[name] == req {
				delete(l.named, name)
			}
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		for _, u := range after {
			if s.ctx.Err() == nil {
				s.unsubscribe(u)
			}
		}
	}
}

// push queues req, waiting while the lane is full; false when the
// session ended first.
func (l *requestLane) push(s *session, req *request) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.reqs) >= laneRequests && !l.closed {
		if l.room == nil {
			l.room = make(chan struct{})
		}
		room := l.room
		l.mu.Unlock()
		select {
		case <-room:
		case <-s.ctx.Done():
			l.mu.Lock()
			return false
		}
		l.mu.Lock()
	}
	if l.closed || s.ctx.Err() != nil {
		return false
	}
	if name, ok := req.subscription(); ok {
		if l.named == nil {
			l.named = map[string]*request{}
		}
		l.named[name] = req
	}
	l.reqs = append(l.reqs, req)
	if !l.running {
		l.running = true
		l.wg.Add(1)
		go s.runLane()
	}
	return true
}

// next takes the oldest waiting request; false (and the lane goroutine
// ends) when none waits.
func (l *requestLane) next() (*request, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.reqs) == 0 || l.closed {
		l.running = false
		l.reqs = nil
		return nil, false
	}
	req := l.reqs[0]
	l.reqs[0] = nil
	if l.reqs = l.reqs[1:]; len(l.reqs) == 0 {
		l.reqs = nil
	}
	if l.room != nil {
		close(l.room)
		l.room = nil
	}
	return req, true
}

// close stops the lane (the requests left get no reply) and waits for
// the request running, if any.
func (l *requestLane) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.wg.Wait()
}

// runLane runs the ordered requests one after the other while some wait.
func (s *session) runLane() {
	defer s.lane.wg.Done()
	for {
		req, ok := s.lane.next()
		if !ok {
			return
		}
		first := !s.firstDone.Swap(true)
		if s.ctx.Err() != nil {
			continue // closing: the requests left get no reply
		}
		s.dispatch(req, first)
		s.done(req)
	}
}

// dispatch runs one ordered request and sends its reply.
func (s *session) dispatch(req *request, first bool) {
	switch req.op {
	case "auth":
		s.auth(req, first)
	case "schema":
		s.schema(req)
	case "notify":
		s.notify(req)
	case "subscribe":
		s.subscribe(req, false)
	case "replay":
		s.subscribe(req, true)
	case "execute":
		s.execute(req)
	case "open_producer":
		s.prod.open(req)
	case "publish":
		s.prod.publish(req)
	case "close_producer":
		s.prod.close(req)
	}
}

// fields checks a request's members against the keys its op allows.
func (req *request) fields(allowed ...string) error {
	var unknown []string
	for k := range req.members {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return fmt.Errorf("%s does not take %s (it takes id, op, %s)", req.op, quoteNames(unknown), strings.Join(allowed, ", "))
	}
	return nil
}

// str returns a string member; ok false when absent, an error when not a
// string.
func (req *request) str(name string) (string, bool, error) {
	v, ok := req.members[name]
	if !ok || v.Kind() == 'n' {
		return "", false, nil
	}
	if v.Kind() != '"' {
		return "", false, fmt.Errorf("%s must be a string", name)
	}
	return unquoteValue(v), true, nil
}

// quoteNames renders names as 'a', 'b'.
func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// ---- replies ----

// mustJSON encodes a frame built from plain values.
func mustJSON(v any) []byte {
	b, err := jsonMarshal(v)
	if err != nil {
		panic("handlers: encoding a frame: " + err.Error())
	}
	return b
}

// maxEchoBytes bounds what the server echoes of a client's choosing in
// its frames: a request's id (as sent) and the names of subscriptions
// and producers, so that every reply and server frame about them stays
// within max_frame_bytes (at least 64 KiB).
const maxEchoBytes = 1024

// replyOK is a successful reply with extra fields (sorted by name).
func replyOK(id jsontext.Value, fields map[string]any) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"reply","id":`)
	b.Write(id)
	b.WriteString(`,"ok":true`)
	writeFields(&b, fields)
	b.WriteByte('}')
	return b.Bytes()
}

// writeFields writes ,"key":value for each field, sorted by key.
func writeFields(b *bytes.Buffer, fields map[string]any) {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(`,"` + k + `":`)
		b.Write(mustJSON(fields[k]))
	}
}

// replyFits returns a successful reply, or, when it would exceed
// max_frame_bytes, a LIMIT_EXCEEDED reply saying so (ok false); hint ends
// its message (what to do instead), when not empty.
func (s *session) replyFits(id jsontext.Value, fields map[string]any, what, hint string) ([]byte, bool) {
	f := replyOK(id, fields)
	if len(f) <= s.frameMax() {
		return f, true
	}
	msg := fmt.Sprintf("%s would be %d bytes, above max_frame_bytes (%d)", what, len(f), s.frameMax())
	if hint != "" {
		msg += ": " + hint
	}
	return s.replyError(id, "LIMIT_EXCEEDED", msg), false
}

// frameMax is max_frame_bytes, the bound of every frame the session sends.
func (s *session) frameMax() int { return s.set.Session.MaxFrameBytes }

// replyError is a failed reply.
func (s *session) replyError(id jsontext.Value, code, msg string) []byte {
	return s.replyErrorWith(id, code, msg, nil)
}

// replyErrorWith is a failed reply with extra fields besides error. A
// message that would take the reply above max_frame_bytes (one that
// quotes a long value of the request) is shortened to fit, ending in
// "…".
func (s *session) replyErrorWith(id jsontext.Value, code, msg string, fields map[string]any) []byte {
	return fitMessage(msg, s.frameMax(), func(msg string) []byte { return failedReply(id, code, msg, fields) })
}

// failedReply is a failed reply as it is, whatever its size.
func failedReply(id jsontext.Value, code, msg string, fields map[string]any) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"reply","id":`)
	b.Write(id)
	b.WriteString(`,"ok":false,"error":`)
	b.Write(mustJSON(map[string]string{"code": code, "message": msg}))
	writeFields(&b, fields)
	b.WriteByte('}')
	return b.Bytes()
}

// errorFrame is a session-level error frame (its message shortened as a
// reply's to fit max_frame_bytes).
func (s *session) errorFrame(code, msg string) []byte {
	return fitMessage(msg, s.frameMax(), func(msg string) []byte {
		return mustJSON(map[string]any{"type": "error", "error": map[string]string{"code": code, "message": msg}})
	})
}

// fitMessage builds a frame with msg, shortening msg (at a character
// boundary, marked with a final "…") until the frame fits in limit bytes.
func fitMessage(msg string, limit int, build func(string) []byte) []byte {
	f := build(msg)
	for len(f) > limit && msg != "" {
		cut := len(msg) - (len(f) - limit) - len("…")
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = strings.TrimSuffix(msg, "…")
		if cut <= 0 {
			msg = ""
		} else {
			msg = msg[:min(cut, len(msg))] + "…"
		}
		f = build(msg)
	}
	return f
}

// ---- simple requests ----

// auth authenticates an anonymous session with a token or Basic
// credentials, once, as its first request.
func (s *session) auth(req *request, first bool) {
	if err := req.fields("token", "basic"); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	if s.upgradeAuth || !first {
		s.send(s.replyError(req.id, "INVALID_REQUEST", "auth is allowed once, as the first request, and only when the upgrade request carried no credentials"))
		return
	}
	token, hasToken, err1 := req.str("token")
	basic, hasBasic, err2 := req.str("basic")
	switch {
	case err1 != nil || err2 != nil:
		s.send(s.replyError(req.id, "INVALID_REQUEST", errors.Join(err1, err2).Error()))
		return
	case hasToken == hasBasic:
		s.send(s.replyError(req.id, "INVALID_REQUEST", `auth takes exactly one of "token" (a JWT) or "basic" (base64 of user:password, direct mode)`))
		return
	}
	set := s.h.Settings()
	if set.Authenticate == nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", "authentication is disabled on this server: every stream is public"))
		return
	}
	header := "Bearer " + token
	if hasBasic {
		header = "Basic " + basic
	}
	id, denied := set.Authenticate(s.ctx, header)
	if denied != nil {
		s.send(s.replyError(req.id, denied.Kind.Code(), denied.Message))
		return
	}
	roles := id.Roles
	if roles == nil {
		roles = []string{}
	}
	reply, fits := s.replyFits(req.id, map[string]any{"user": id.Username, "roles": roles}, "the auth reply (the user and roles)", "the session was not authenticated")
	if !fits {
		s.send(reply)
		return
	}
	release, ok := s.h.sessions.acquire(id.Username, s.set.Session.MaxSessionsPerUser)
	if !ok {
		s.send(s.replyError(req.id, "LIMIT_EXCEEDED", sessionsLimitMessage(id.Username, s.set.Session.MaxSessionsPerUser)))
		return
	}
	s.release = release
	s.identity.Store(id)
	s.expireCredentials(id)
	s.send(reply)
}

// schema answers with the body of GET /api/v1/schema[/{event_type}].
func (s *session) schema(req *request) {
	if err := req.fields("event_type"); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	et, has, err := req.str("event_type")
	if err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	reg := s.h.Registry()
	if !has {
		f, _ := s.replyFits(req.id, map[string]any{"schema": schemaListBody(reg)}, "the list of every schema",
			`ask for one event type's schema with {"op":"schema","event_type":"<name>"} (GET /api/v1/schema serves the whole list)`)
		s.send(f)
		return
	}
	sc, ok := reg.Schema(et)
	if !ok {
		s.send(s.replyError(req.id, "UNKNOWN_EVENT_TYPE", "Event type '"+et+"' not found"))
		return
	}
	f, _ := s.replyFits(req.id, map[string]any{"schema": map[string]any{"status": "success", "event_type": et, "schema": sc.Public()}},
		"the schema of '"+et+"'", "GET /api/v1/schema/"+et+" serves it")
	s.send(f)
}
