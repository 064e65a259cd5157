package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/coder/websocket"
)

// Subprotocol is the WebSocket subprotocol of herald's session protocol.
const Subprotocol = "herald.v1"

// sessionReadLimit bounds one server frame; the server never sends more
// than its max_frame_bytes (4 MiB by default), which the welcome frame
// states and Session then adopts.
const sessionReadLimit = 64 << 20

// Session is a WebSocket session on GET /api/v1/session (protocol
// herald.v1). Requests may be sent from any goroutine; frames are read
// by one goroutine with Next.
type Session struct {
	conn *websocket.Conn
	// Welcome is the server's first frame.
	Welcome Welcome
	nextID  atomic.Int64
}

// Welcome is the session's first frame.
type Welcome struct {
	SessionID string           `json:"session_id"`
	Protocol  string           `json:"protocol"`
	Server    string           `json:"server"`
	Limits    map[string]int64 `json:"limits"`
}

// Frame is one frame from the server: a reply to a request, or a server
// frame (events, history_completed, dropped, subscription_ended,
// skipped, error, producer frames).
type Frame struct {
	Type string `json:"type"`
	// ID is the request id of a reply (its JSON), nil for other frames.
	ID json.RawMessage `json:"id"`
	// OK tells a successful reply from a refused one.
	OK bool `json:"ok"`
	// Error is the refusal of a reply, or the fault of an error frame.
	Error *FrameError `json:"error"`
	// Raw is the whole frame as received.
	Raw json.RawMessage `json:"-"`
}

// FrameError is the error object of a refused reply or an error frame.
type FrameError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// DialSession opens a session. The token, if any, goes on the upgrade's
// Authorization header. A refused upgrade is an *APIError, a failed
// connection a *ConnectError.
func (c *Client) DialSession(ctx context.Context) (*Session, error) {
	u := c.URL("api/v1/session")
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	h := http.Header{}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{
		HTTPClient: c.http, HTTPHeader: h, Subprotocols: []string{Subprotocol},
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			var body []byte
			if resp.Body != nil {
				body, _ = io.ReadAll(resp.Body)
			}
			return nil, newAPIError(resp.StatusCode, body)
		}
		return nil, &ConnectError{URL: u.String(), Err: unwrapURLError(err)}
	}
	if p := conn.Subprotocol(); p != Subprotocol {
		conn.CloseNow()
		return nil, fmt.Errorf("%s: the server chose subprotocol %q, not %s", u, p, Subprotocol)
	}
	conn.SetReadLimit(sessionReadLimit)
	s := &Session{conn: conn}
	f, err := s.Next(ctx)
	if err != nil {
		conn.CloseNow()
		return nil, err
	}
	if f.Type != "welcome" {
		conn.CloseNow()
		return nil, fmt.Errorf("%s: the first frame is %q, not welcome", u, f.Type)
	}
	if err := json.Unmarshal(f.Raw, &s.Welcome); err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("%s: the welcome frame: %w", u, err)
	}
	if n := s.Welcome.Limits["max_frame_bytes"]; n > 0 {
		conn.SetReadLimit(n + 1024)
	}
	return s, nil
}

// Request sends {"id": <new id>, "op": op, ...fields} and returns the id
// its reply will carry.
func (s *Session) Request(ctx context.Context, op string, fields map[string]any) (string, error) {
	m := make(map[string]any, len(fields)+2)
	for k, v := range fields {
		m[k] = v
	}
	id := s.nextID.Add(1)
	m["id"], m["op"] = id, op
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode the %s request: %w", op, err)
	}
	return strconv.FormatInt(id, 10), s.write(ctx, b)
}

// Send sends a request written by the caller as a JSON object. Without
// an "id" member it gets a new one. It returns the id's JSON.
func (s *Session) Send(ctx context.Context, request json.RawMessage) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(request, &m); err != nil || m == nil {
		return "", errors.New("a request is one JSON object, such as {\"op\":\"ping\"}")
	}
	if _, ok := m["id"]; !ok {
		m["id"] = json.RawMessage(strconv.FormatInt(s.nextID.Add(1), 10))
		b, err := json.Marshal(m)
		if err != nil {
			return "", err
		}
		request = b
	}
	return string(m["id"]), s.write(ctx, request)
}

func (s *Session) write(ctx context.Context, b []byte) error {
	if err := s.conn.Write(ctx, websocket.MessageText, b); err != nil {
		return &ConnectError{URL: "the session", Err: err}
	}
	return nil
}

// Next reads the next frame. When the server closes the session it
// returns a *CloseError.
func (s *Session) Next(ctx context.Context) (*Frame, error) {
	typ, b, err := s.conn.Read(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return nil, &CloseError{Code: int(ce.Code), Reason: ce.Reason}
		}
		return nil, &ConnectError{URL: "the session", Err: err}
	}
	if typ != websocket.MessageText {
		return nil, errors.New("the server sent a binary frame")
	}
	var f Frame
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("a server frame is not a JSON object: %w", err)
	}
	f.Raw = b
	return &f, nil
}

// Close ends the session with a normal closure.
func (s *Session) Close() error {
	return s.conn.Close(websocket.StatusNormalClosure, "")
}

// CloseError is the server's close of a session.
type CloseError struct {
	Code   int
	Reason string
}

// Error renders the close status and reason.
func (e *CloseError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("the server closed the session (status %d)", e.Code)
	}
	return fmt.Sprintf("the server closed the session (status %d: %s)", e.Code, e.Reason)
}
