package handlers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"herald/api/httperr"
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
		!slices.Contains(set.AllowedOrigins, "*") && !slices.Contains(set.AllowedOrigins, origin) {
		WriteForbidden(w, r, "origin "+strconv.Quote(origin)+" is not in application.cors.allowed_origins")
		return
	}
	ident := IdentityFrom(r.Context())
	var release func()
	if ident != nil {
		var ok bool
		if release, ok = h.sessions.acquire(ident.Username, set.Session.MaxSessionsPerUser); !ok {
			msg := fmt.Sprintf("LIMIT_EXCEEDED: user '%s' already has %d open sessions (max_sessions_per_user)", ident.Username, set.Session.MaxSessionsPerUser)
			WriteTooManyStreams(w, r, msg, 10*time.Second)
			return
		}
		defer release()
	}
	// A client that reads nothing holds no more than the configured
	// kernel send buffer; its queue then fills and its subscriptions end
	// (BLOCKING) or drop (DROPPING).
	capSendBuffer(r, set.Watch.SendBufferBytes, h.log)
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{Subprotocol},
		// The origin was checked above, with the API's CORS setting.
		InsecureSkipVerify: true,
	})
	if err != nil {
		h.log.Debug("session upgrade failed", "request_id", id, "error", err)
		return
	}
	c.SetReadLimit(set.MaxBodyBytes)
	s := newSession(h, set, c, id, ident, r.Header.Get("Authorization") != "")
	s.run(r.Context())
	if s.release != nil {
		s.release()
	}
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
	h    *Handlers
	set  *Settings // the settings when it opened (limits)
	conn *websocket.Conn
	id   string
	log  *slog.Logger

	ctx    context.Context // ends with the session
	cancel context.CancelCauseFunc

	identity atomic.Pointer[Identity]
	// upgradeAuth: the upgrade carried credentials; authTried: an auth
	// request (or any request) came, so auth is no longer allowed.
	upgradeAuth bool
	firstDone   atomic.Bool
	release     func()

	// ctrl is the lane of replies and server frames, written ahead of
	// queued events.
	ctrl chan []byte
	q    eventQueue

	// lane runs requests in order; bypass requests (ping, unsubscribe)
	// skip it.
	lane chan *request

	mu       sync.Mutex
	subs     map[string]*subscription // active, by name
	ended    map[string]bool          // names of subscriptions ended by the server, until reused or unsubscribed
	nextGen  uint64
	running  int // subscriptions and replays counted against the limit
	subsWG   sync.WaitGroup
	prod     producers
	closeErr atomic.Pointer[closeReason]
}

// closeReason is the status the session closes with.
type closeReason struct {
	code   websocket.StatusCode
	reason string
}

func newSession(h *Handlers, set *Settings, c *websocket.Conn, reqID string, ident *Identity, upgradeAuth bool) *session {
	s := &session{
		h: h, set: set, conn: c, id: uuid.NewString(),
		log:         h.log.With("session_id", "", "request_id", reqID),
		upgradeAuth: upgradeAuth,
		ctrl:        make(chan []byte, 256),
		lane:        make(chan *request, 64),
		subs:        map[string]*subscription{},
		ended:       map[string]bool{},
	}
	s.log = h.log.With("session_id", s.id, "request_id", reqID)
	s.q.init(set.Session.QueueFrames)
	s.prod.init(s)
	if ident != nil {
		s.identity.Store(ident)
	}
	return s
}

// run serves the session until the client or the server ends it.
func (s *session) run(parent context.Context) {
	// The session joins the handlers' stream set under no event type, so
	// that a shutdown reaches it.
	joined, leave := s.h.running.Join(context.Background(), "")
	defer leave()
	s.ctx, s.cancel = context.WithCancelCause(joined)
	defer s.cancel(nil)
	s.h.sessionsOpen.Add(1)
	defer s.h.sessionsOpen.Add(-1)

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		s.writer()
	}()
	laneDone := make(chan struct{})
	go func() {
		defer close(laneDone)
		s.runLane()
	}()
	go s.keepAlive()
	s.send(s.welcome())
	if id := s.identity.Load(); id != nil {
		s.expireCredentials(id)
	}

	// The reader has its own context: coder/websocket closes the
	// connection at once when a Read's context ends, and a session that
	// ends must still write its last frames and the close frame.
	readCtx, stopRead := context.WithCancel(context.Background())
	defer stopRead()
	readErr := make(chan error, 1)
	go func() { readErr <- s.reader(readCtx) }()

	var code websocket.StatusCode = websocket.StatusNormalClosure
	reason := ""
	select {
	case err := <-readErr:
		// The client closed or broke the connection, or sent what ends
		// it (the reader set the close status).
		if cr := s.closeErr.Load(); cr != nil {
			code, reason = cr.code, cr.reason
		} else if st := websocket.CloseStatus(err); st != -1 {
			code = st
		}
		s.cancel(errors.New("the client closed the session"))
	case <-s.ctx.Done():
		if cr := s.closeErr.Load(); cr != nil {
			code, reason = cr.code, cr.reason
		} else {
			code, reason = websocket.StatusGoingAway, "server shutting down"
		}
	}
	shutdown := isShutdown(s.ctx)
	if shutdown {
		code, reason = websocket.StatusGoingAway, "server shutting down"
	}
	// Subscriptions end (with subscription_ended server_shutdown on a
	// shutdown); producers finish what is in flight.
	s.endSubscriptions()
	s.prod.closeAll(shutdown)
	close(s.lane)
	<-laneDone
	s.ctrlDone()
	<-writerDone
	_ = s.conn.Close(code, reason)
}

// expireCredentials ends, when id's credentials expire, the session's
// subscriptions that an anonymous client could not hold (reason
// unauthorized, with their resume ids); the session goes on without
// credentials (requests that need them are refused; a new connection
// with fresh ones resumes).
func (s *session) expireCredentials(id *Identity) {
	if id.Expires.IsZero() {
		return
	}
	go func() {
		t := time.NewTimer(id.Expires.Sub(s.h.now()))
		defer t.Stop()
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		if !s.identity.CompareAndSwap(id, nil) {
			return
		}
		msg := "the session's credentials expired at " + id.Expires.UTC().Format(time.RFC3339) + "; reconnect with fresh ones and resume from resume_from_id"
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
		s.log.Info("session credentials expired", "user", id.Username, "subscriptions_ended", len(ended))
	}()
}

// isShutdown reports whether ctx ended because the server shuts down.
func isShutdown(ctx context.Context) bool {
	var st *stream.Stop
	return errors.As(context.Cause(ctx), &st) && st.Reason == stream.Shutdown
}

// fail ends the session with a close status (a protocol violation).
func (s *session) fail(code websocket.StatusCode, reason string) {
	s.closeErr.CompareAndSwap(nil, &closeReason{code: code, reason: reason})
	s.cancel(errors.New(reason))
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

// send queues a reply or server frame on the control lane, ahead of
// queued events. It blocks while the lane is full (a client that reads
// nothing and keeps sending requests) and gives up when the session ends.
func (s *session) send(frame []byte) {
	select {
	case s.ctrl <- frame:
	case <-s.ctx.Done():
		// The writer may still drain the lane for a closing session.
		select {
		case s.ctrl <- frame:
		default:
		}
	}
}

// ctrlDone tells the writer that nothing more will be sent.
func (s *session) ctrlDone() { close(s.ctrl) }

// writeTimeout bounds one frame write.
func (s *session) writeTimeout() time.Duration { return s.h.writeTimeout }

// writer writes frames: control frames first, then queued events.
func (s *session) writer() {
	ctrl := s.ctrl
	for {
		select {
		case f, ok := <-ctrl:
			if !ok {
				s.flushQueue()
				return
			}
			if !s.write(f) {
				s.drainCtrl()
				return
			}
			continue
		default:
		}
		select {
		case f, ok := <-ctrl:
			if !ok {
				s.flushQueue()
				return
			}
			if !s.write(f) {
				s.drainCtrl()
				return
			}
		case <-s.q.ready():
			for {
				// Replies overtake the rest of the queue (which stays
				// signalled).
				if len(ctrl) > 0 {
					s.q.signalReady()
					break
				}
				e, ok := s.q.pop()
				if !ok {
					break
				}
				if !s.write(e.data) {
					s.drainCtrl()
					return
				}
				if e.sub != nil {
					e.sub.handed(e)
				}
			}
		}
	}
}

// flushQueue writes what is still queued when the session closes (the
// subscription_ended frames of a shutdown come last).
func (s *session) flushQueue() {
	for {
		e, ok := s.q.pop()
		if !ok || !s.write(e.data) {
			return
		}
		if e.sub != nil {
			e.sub.handed(e)
		}
	}
}

// drainCtrl discards control frames until the lane is closed, so that
// senders never block on a session whose connection failed.
func (s *session) drainCtrl() {
	s.cancel(errors.New("write to the client failed"))
	for range s.ctrl {
	}
}

// write writes one frame; false when the connection failed.
func (s *session) write(frame []byte) bool {
	ctx, cancel := context.WithTimeout(context.Background(), s.writeTimeout())
	defer cancel()
	if err := s.conn.Write(ctx, websocket.MessageText, frame); err != nil {
		s.log.Debug("session write failed", "error", err)
		return false
	}
	return true
}

// keepAlive pings the client every heartbeat interval and drops a
// connection that has not answered two pings in a row.
func (s *session) keepAlive() {
	every := s.set.Watch.Heartbeat
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(s.ctx, every)
		err := s.conn.Ping(ctx)
		cancel()
		if s.ctx.Err() != nil {
			return
		}
		if err != nil {
			if missed++; missed >= 2 {
				s.log.Info("session dropped: two pings unanswered")
				s.fail(websocket.StatusPolicyViolation, "two pings unanswered")
				_ = s.conn.CloseNow()
				return
			}
			continue
		}
		missed = 0
	}
}

// ---- inbound ----

// request is one decoded client request.
type request struct {
	id      jsontext.Value // as sent: a string or an integer
	op      string
	members map[string]jsontext.Value
	size    int
}

// reader reads frames until the connection ends.
func (s *session) reader(ctx context.Context) error {
	for {
		typ, data, err := s.conn.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) == websocket.StatusMessageTooBig || strings.Contains(err.Error(), "read limited") {
				s.fail(websocket.StatusMessageTooBig, "frame larger than "+strconv.FormatInt(s.set.MaxBodyBytes, 10)+" bytes")
			}
			return err
		}
		if typ != websocket.MessageText {
			s.send(errorFrame("PROTOCOL_VIOLATION", "binary frames are not part of the protocol: send one JSON object per text frame"))
			s.fail(websocket.StatusUnsupportedData, "binary frame")
			return errors.New("binary frame")
		}
		req, perr := decodeRequest(data)
		if perr != nil {
			if perr.fatal {
				s.send(errorFrame("PROTOCOL_VIOLATION", perr.msg))
				s.fail(websocket.StatusProtocolError, "not a JSON object")
				return errors.New(perr.msg)
			}
			if perr.id == nil {
				s.send(errorFrame("INVALID_REQUEST", perr.msg))
			} else {
				s.send(replyError(perr.id, "INVALID_REQUEST", perr.msg))
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
			s.unsubscribe(req)
		default:
			select {
			case s.lane <- req:
			case <-s.ctx.Done():
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

// usableID reports whether v is a string or an integer.
func usableID(v jsontext.Value) bool {
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

// runLane runs the ordered requests one after the other.
func (s *session) runLane() {
	for req := range s.lane {
		first := !s.firstDone.Swap(true)
		if s.ctx.Err() != nil {
			continue // closing: the requests left get no reply
		}
		s.dispatch(req, first)
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

// replyOK is a successful reply with extra fields.
func replyOK(id jsontext.Value, fields map[string]any) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"reply","id":`)
	b.Write(id)
	b.WriteString(`,"ok":true`)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(`,"` + k + `":`)
		b.Write(mustJSON(fields[k]))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// replyError is a failed reply.
func replyError(id jsontext.Value, code, msg string) []byte {
	return replyErrorWith(id, code, msg, nil)
}

// replyErrorWith is a failed reply with extra fields besides error.
func replyErrorWith(id jsontext.Value, code, msg string, fields map[string]any) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"reply","id":`)
	b.Write(id)
	b.WriteString(`,"ok":false,"error":`)
	b.Write(mustJSON(map[string]string{"code": code, "message": msg}))
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString(`,"` + k + `":`)
		b.Write(mustJSON(fields[k]))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// errorFrame is a session-level error frame.
func errorFrame(code, msg string) []byte {
	return mustJSON(map[string]any{"type": "error", "error": map[string]string{"code": code, "message": msg}})
}

// ---- simple requests ----

// auth authenticates an anonymous session with a token or Basic
// credentials, once, as its first request.
func (s *session) auth(req *request, first bool) {
	if err := req.fields("token", "basic"); err != nil {
		s.send(replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	if s.upgradeAuth || !first {
		s.send(replyError(req.id, "INVALID_REQUEST", "auth is allowed once, as the first request, and only when the upgrade request carried no credentials"))
		return
	}
	token, hasToken, err1 := req.str("token")
	basic, hasBasic, err2 := req.str("basic")
	switch {
	case err1 != nil || err2 != nil:
		s.send(replyError(req.id, "INVALID_REQUEST", errors.Join(err1, err2).Error()))
		return
	case hasToken == hasBasic:
		s.send(replyError(req.id, "INVALID_REQUEST", `auth takes exactly one of "token" (a JWT) or "basic" (base64 of user:password, direct mode)`))
		return
	}
	set := s.h.Settings()
	if set.Authenticate == nil {
		s.send(replyError(req.id, "INVALID_REQUEST", "authentication is disabled on this server: every stream is public"))
		return
	}
	header := "Bearer " + token
	if hasBasic {
		header = "Basic " + basic
	}
	id, denied := set.Authenticate(s.ctx, header)
	if denied != nil {
		s.send(replyError(req.id, denied.Kind.Code(), denied.Message))
		return
	}
	release, ok := s.h.sessions.acquire(id.Username, s.set.Session.MaxSessionsPerUser)
	if !ok {
		s.send(replyError(req.id, "LIMIT_EXCEEDED", fmt.Sprintf("max_sessions_per_user (%d): user '%s' already has that many open sessions", s.set.Session.MaxSessionsPerUser, id.Username)))
		return
	}
	s.release = release
	s.identity.Store(id)
	s.expireCredentials(id)
	roles := id.Roles
	if roles == nil {
		roles = []string{}
	}
	s.send(replyOK(req.id, map[string]any{"user": id.Username, "roles": roles}))
}

// schema answers with the body of GET /api/v1/schema[/{event_type}].
func (s *session) schema(req *request) {
	if err := req.fields("event_type"); err != nil {
		s.send(replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	et, has, err := req.str("event_type")
	if err != nil {
		s.send(replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	reg := s.h.Registry()
	if !has {
		s.send(replyOK(req.id, map[string]any{"schema": schemaListBody(reg)}))
		return
	}
	sc, ok := reg.Schema(et)
	if !ok {
		s.send(replyError(req.id, "UNKNOWN_EVENT_TYPE", "Event type '"+et+"' not found"))
		return
	}
	s.send(replyOK(req.id, map[string]any{"schema": map[string]any{"status": "success", "event_type": et, "schema": sc.Public()}}))
}
