package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/query"
	"github.com/herald-gateway/herald/tracing"
)

// This file is what a session receives: the decoding of a frame into a
// request, the ordered lane requests run in, the replies, and the simple
// requests (auth, ping, schema, notify).

// request is one decoded client request.
type request struct {
	id      jsontext.Value // as sent: a string or an integer
	op      string
	members map[string]jsontext.Value
	size    int

	// stmt is an execute request's statement once parsed (stmtErr why
	// it does not parse), parsed once for the lane and for execute.
	stmt    *query.Statement
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
		if err != nil || (st.Kind != query.CreateSubscription && st.Kind != query.DeleteSubscription) {
			return "", false
		}
		return st.Name, true
	}
	return "", false
}

// statement parses an execute request's statement once; a request
// without a string statement is an error.
func (req *request) statement() (*query.Statement, error) {
	if !req.parsed {
		req.parsed = true
		src, ok, err := req.str("statement")
		switch {
		case err != nil || !ok:
			req.stmtErr = errors.New(`execute needs a "statement" (a string)`)
		default:
			req.stmt, req.stmtErr = query.ParseStatement(src)
		}
	}
	return req.stmt, req.stmtErr
}

// Receive handles one frame the client sent (binary: a binary frame,
// which the protocol does not take). It returns false when the session
// ends: the transport then reads no more and calls End.
func (s *Session) Receive(frame []byte, binary bool) bool {
	if binary {
		s.send(s.errorFrame("PROTOCOL_VIOLATION", "binary frames are not part of the protocol: send one JSON object per text frame"))
		s.fail(CloseBinaryFrame)
		return false
	}
	req, perr := decodeRequest(frame)
	if perr != nil {
		if perr.fatal {
			s.send(s.errorFrame("PROTOCOL_VIOLATION", perr.msg))
			s.fail(CloseNotJSON)
			return false
		}
		if perr.id == nil {
			s.send(s.errorFrame("INVALID_REQUEST", perr.msg))
		} else {
			s.send(s.replyError(perr.id, "INVALID_REQUEST", perr.msg))
		}
		s.firstDone.Store(true)
		return true
	}
	switch req.op {
	case "ping":
		s.firstDone.Store(true)
		s.send(replyOK(req.id, map[string]any{"time": s.deps.Now().UTC().Format(time.RFC3339Nano)}))
	case "unsubscribe":
		s.firstDone.Store(true)
		// Never held behind a waiting notify or publish, but always
		// after the earlier requests that name the same subscription.
		if !s.lane.holdBehind(req) {
			s.unsubscribe(req)
		}
	default:
		return s.lane.push(s, req)
	}
	return true
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

// laneRequests bounds the requests waiting in the ordered lane: Receive,
// and so the transport's reader, waits (reading nothing more) while that
// many are.
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
	room    chan struct{} // closed when a request leaves (nil while Receive does not wait)
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
func (s *Session) done(req *request) {
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
				if len(l.named) == 0 {
					l.named = nil // an idle lane holds no map
				}
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
func (l *requestLane) push(s *Session, req *request) bool {
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
func (s *Session) runLane() {
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
func (s *Session) dispatch(req *request, first bool) {
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // frames are not HTML
	if err := enc.Encode(v); err != nil {
		panic("session: encoding a frame: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// SchemaList is the body of GET /api/v1/schema, which the schema request
// answers with too: every event type's public schema.
func SchemaList(reg *notification.Registry) map[string]any {
	names := reg.Names()
	schemas := make(map[string]any, len(names))
	for _, n := range names {
		s, _ := reg.Schema(n)
		schemas[n] = s.Public()
	}
	body := map[string]any{
		"status":        "success",
		"schema":        schemas,
		"event_types":   names,
		"total_schemas": len(names),
	}
	if len(names) == 0 {
		body["message"] = "No notification schema configured"
	}
	return body
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
func (s *Session) replyFits(id jsontext.Value, fields map[string]any, what, hint string) ([]byte, bool) {
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
func (s *Session) frameMax() int { return s.set.Limits.MaxFrameBytes }

// replyError is a failed reply.
func (s *Session) replyError(id jsontext.Value, code, msg string) []byte {
	return s.replyErrorWith(id, code, msg, nil)
}

// replyErrorWith is a failed reply with extra fields besides error. A
// message that would take the reply above max_frame_bytes (one that
// quotes a long value of the request) is shortened to fit, ending in
// "…".
func (s *Session) replyErrorWith(id jsontext.Value, code, msg string, fields map[string]any) []byte {
	return FitMessage(msg, s.frameMax(), func(msg string) []byte { return failedReply(id, code, msg, fields) })
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
func (s *Session) errorFrame(code, msg string) []byte {
	return FitMessage(msg, s.frameMax(), func(msg string) []byte {
		return mustJSON(map[string]any{"type": "error", "error": map[string]string{"code": code, "message": msg}})
	})
}

// FitMessage builds a frame (or any text) with msg, shortening msg (at a character
// boundary, marked with a final "…") until the frame fits in limit bytes.
func FitMessage(msg string, limit int, build func(string) []byte) []byte {
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
func (s *Session) auth(req *request, first bool) {
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
	set := s.deps.Settings()
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
	release, ok := s.deps.Counters.Acquire(id.Username, s.set.Limits.MaxSessionsPerUser)
	if !ok {
		s.send(s.replyError(req.id, "LIMIT_EXCEEDED", UserLimitMessage(id.Username, s.set.Limits.MaxSessionsPerUser)))
		return
	}
	s.release = release
	s.identity.Store(id)
	s.expireCredentials(id)
	s.send(reply)
}

// schema answers with the body of GET /api/v1/schema[/{event_type}].
func (s *Session) schema(req *request) {
	if err := req.fields("event_type"); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	et, has, err := req.str("event_type")
	if err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	reg := s.deps.Settings().Registry
	if !has {
		f, _ := s.replyFits(req.id, map[string]any{"schema": SchemaList(reg)}, "the list of every schema",
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

// notify stores one notification, exactly as POST /api/v1/notification.
func (s *Session) notify(req *request) {
	if err := req.fields("event_type", "identifier", "payload", tracing.TraceParent, tracing.TraceState); err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	ctx, err := s.traceContext(req)
	if err != nil {
		s.send(s.replyError(req.id, "INVALID_REQUEST", err.Error()))
		return
	}
	body := requestBody(req.members, "event_type", "identifier", "payload")
	id, code, msg := s.notifyOne(ctx, body)
	if code == auth.Unauthenticated.Code() {
		_, msg = s.denial(&auth.Error{Kind: auth.Unauthenticated, Message: msg})
	}
	if code != "" {
		s.send(s.replyError(req.id, code, msg))
		return
	}
	s.send(replyOK(req.id, map[string]any{"notification_id": id}))
}

// traceContext is the session's context carrying the trace context of
// a notify or publish frame's traceparent and tracestate fields (W3C
// trace context, as the HTTP headers of a notify carry it); the
// session's context when it has none or tracing is off. The fields, when
// present, must be strings.
func (s *Session) traceContext(req *request) (context.Context, error) {
	tp, _, err1 := req.str(tracing.TraceParent)
	ts, _, err2 := req.str(tracing.TraceState)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	return s.deps.Tracing.Tracer.ExtractFields(s.ctx, tp, ts), nil
}

// notifyOne validates and stores one notify request body for the
// session's user: the notification id, or the error code and message.
// ctx carries the notify's trace context.
func (s *Session) notifyOne(ctx context.Context, body []byte) (id, code, msg string) {
	var sc *notification.Schema
	if s.deps.Observer != nil {
		defer func(start time.Time) {
			s.obs.Notified(sc, code, 1, time.Since(start))
		}(time.Now())
	}
	set := s.deps.Settings()
	req, err := notification.ParseNotifyRequest(body)
	if err != nil {
		code, msg, _ = ErrorCode(CodeInvalidNotification, err)
		return "", code, msg
	}
	sc, err = set.Registry.Lookup(req.EventType)
	if err != nil {
		sc = nil
		code, msg, _ = ErrorCode(CodeInvalidNotification, err)
		return "", code, msg
	}
	if err := req.CheckNoEnd("/notification"); err != nil {
		code, msg, _ = ErrorCode(CodeInvalidNotification, err)
		return "", code, msg
	}
	if _, ok := req.Identifier[notification.FieldPoint]; !ok {
		if denied := set.Policy.DecideStream(sc.Name, s.identity.Load(), auth.OpWrite); denied != nil {
			return "", denied.Kind.Code(), denied.Message
		}
	}
	n, err := sc.Notify(req.Identifier, req.Payload)
	if err == nil {
		err = engine.CheckSize(s.deps.Engine, n)
	}
	if err != nil {
		code, msg, _ = ErrorCode(CodeInvalidNotification, err)
		return "", code, msg
	}
	tr := s.deps.Tracing
	ctx, span := tr.Start(ctx, n, len(body))
	seq, _, err := tr.Publish(ctx, s.deps.Engine, n)
	tr.Done(span, sc.Name, seq, err)
	if err != nil {
		if errors.Is(err, engine.ErrUnavailable) {
			return "", "SERVICE_UNAVAILABLE", "the notification backend is unavailable; nothing was stored, retry later"
		}
		if errors.Is(err, engine.ErrTooLarge) {
			code, msg, _ = ErrorCode(CodeInvalidNotification, err)
			return "", code, msg
		}
		s.log().Error("notification storage failed", "error", err)
		return "", "NOTIFICATION_STORAGE_FAILED", "storing the notification failed; it was not stored"
	}
	return sc.Name + "@" + strconv.FormatUint(seq, 10), "", ""
}
