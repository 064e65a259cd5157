package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/api/httperr"
	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/internal/wsguard"
	"github.com/herald-gateway/herald/session"
	"github.com/herald-gateway/herald/sse"
)

// This file is the transport of WebSocket sessions: the upgrade, and the
// connection (coder/websocket) as the session.Transport of package
// session, which implements the protocol: the read loop that hands it the
// client's frames, the writes with their timeout, the keep-alive pings
// and the close frames. Package wsguard guards the bytes read below
// the library.

// Session serves GET /api/v1/session: the WebSocket session protocol.
func (h *Handlers) Session(w http.ResponseWriter, r *http.Request) {
	set := h.Settings()
	id := httperr.RequestID(r.Context())
	if offered := offeredSubprotocols(r); len(offered) > 0 && !slices.Contains(offered, session.Subprotocol) {
		msg := "the session protocol is " + session.Subprotocol + "; the client offered " + strings.Join(offered, ", ")
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
		if release, ok = h.sessions.Acquire(ident.Username, set.Session.MaxSessionsPerUser); !ok {
			auth.WriteTooManyStreams(w, r, session.UserLimitMessage(ident.Username, set.Session.MaxSessionsPerUser), 10*time.Second)
			return
		}
	}
	// A client that reads nothing holds no more than the configured
	// kernel send buffer; its queue then fills and its subscriptions end
	// (BLOCKING) or drop (DROPPING).
	sse.CapSendBuffer(r, set.Watch.SendBufferBytes, h.log)
	c, err := accept(&wsguard.Writer{ResponseWriter: w, Limit: set.MaxBodyBytes}, r)
	if err != nil {
		if release != nil {
			release()
		}
		h.log.Debug("session upgrade failed", "request_id", id, "error", err)
		return
	}
	c.SetReadLimit(set.MaxBodyBytes)
	t := &wsTransport{conn: c, timeout: h.writeTimeout}
	s := session.New(r.Context(), &h.sessionDeps, t, session.Client{RequestID: id, Credentials: r.Header.Get("Authorization") != ""})
	s.Start()
	go h.serveSession(s, t, id, set.Watch.Heartbeat, set.MaxBodyBytes, release)
}

// serveSession reads the client's frames into an open session until the
// connection ends, then ends the session and calls release (nil: none).
//
// It runs in a goroutine of its own, and the upgrade's handler returns
// once the session is open: the connection is the session's (hijacked),
// so the HTTP server is done with it, and an idle session then waits on
// a shallow stack (4 kB rather than the 8 kB below the router's
// middleware) without holding the upgrade request, its headers and its
// middleware state. The access log's line and the request metrics of a
// session are therefore written at the upgrade. A panic while serving
// the session is logged and closes its connection, as the router's
// recovery did for the handler.
func (h *Handlers) serveSession(s *session.Session, t *wsTransport, reqID string, every time.Duration, limit int64, release func()) {
	if release != nil {
		defer release()
	}
	var pinger *time.Timer
	defer func() {
		if rec := recover(); rec != nil {
			h.log.Error("panic serving session", "session_id", s.ID(), "request_id", reqID, "panic", fmt.Sprint(rec))
			if pinger != nil {
				pinger.Stop()
			}
			_ = t.conn.CloseNow()
			s.Disconnect(session.CloseNormal)
		}
	}()
	pinger = t.keepAlive(s, every, func() {
		h.log.Info("session dropped: two pings unanswered", "session_id", s.ID(), "request_id", reqID)
	})
	s.End(t.read(s, limit))
	if pinger != nil {
		pinger.Stop()
	}
}

// accept upgrades the connection.
func accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	return websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{session.Subprotocol},
		// The origin was checked above, with the API's CORS setting.
		InsecureSkipVerify: true,
	})
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

// wsTransport is a session's WebSocket connection: its session.Transport.
type wsTransport struct {
	conn *websocket.Conn
	// timeout bounds one frame write.
	timeout time.Duration
}

// Write writes one text frame. A write that takes longer than the write
// timeout closes the connection (as a Write's context would; the
// connection keeps the context of its last write, so that one would stay
// allocated with every idle session).
func (t *wsTransport) Write(frame []byte) error {
	timer := time.AfterFunc(t.timeout, func() { _ = t.conn.CloseNow() })
	err := t.conn.Write(context.Background(), websocket.MessageText, frame)
	if !timer.Stop() && err == nil {
		err = errors.New("the write timed out")
	}
	return err
}

// Close closes the connection with reason.
func (t *wsTransport) Close(reason session.CloseReason) error {
	return t.conn.Close(websocket.StatusCode(reason.Status), reason.Text)
}

// read hands the client's frames to s until the connection or the
// session ends, and returns how the connection ended: the close reason
// of a frame the guard or the library refused (larger than limit bytes,
// unmasked), the client's own close status, or a normal close. Its reads
// have no context: coder/websocket closes the connection at once when a
// Read's context ends, and a session that ends must still write its last
// frames and the close frame.
func (t *wsTransport) read(s *session.Session, limit int64) session.CloseReason {
	for {
		typ, data, err := t.conn.Read(context.Background())
		if err != nil {
			var tooBig *wsguard.FrameTooBigError
			switch st := websocket.CloseStatus(err); {
			case errors.Is(err, wsguard.ErrUnmaskedFrame):
				return session.CloseUnmaskedFrame
			case errors.As(err, &tooBig) || errors.Is(err, websocket.ErrMessageTooBig) || st == websocket.StatusMessageTooBig:
				return session.CloseFrameTooBig(limit)
			case st != -1:
				return session.CloseEcho(int(st))
			}
			return session.CloseNormal
		}
		if !s.Receive(data, typ != websocket.MessageText) {
			return session.CloseNormal
		}
	}
}

// keepAlive pings the client every interval and drops a connection that
// has not answered two pings in a row (after calling dropped). The pings
// run from a timer's callback (no goroutine waits between them); as with
// a ticker, the next ping is due one interval after the last one
// started. The caller stops the returned timer (nil: no pings) once the
// session has ended.
func (t *wsTransport) keepAlive(s *session.Session, every time.Duration, dropped func()) *time.Timer {
	if every <= 0 {
		return nil
	}
	missed := 0 // the callbacks never overlap: each arms the next
	var pinger *time.Timer
	// Armed once assigned: the callback reads pinger.
	pinger = time.AfterFunc(time.Duration(1<<62), func() {
		sctx := s.Context()
		if sctx.Err() != nil {
			return
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(sctx, every)
		err := t.conn.Ping(ctx)
		cancel()
		if sctx.Err() != nil {
			return
		}
		if err != nil {
			if missed++; missed >= 2 {
				dropped()
				s.Disconnect(session.ClosePingTimeout)
				_ = t.conn.CloseNow()
				return
			}
		} else {
			missed = 0
		}
		pinger.Reset(max(0, every-time.Since(start)))
	})
	pinger.Reset(every)
	return pinger
}
