package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Mode selects the stream endpoint.
type Mode int

const (
	// Watch is POST /api/v1/watch: live notifications, after history
	// when a cursor is given; it never ends by itself.
	Watch Mode = iota
	// Replay is POST /api/v1/replay: history from a cursor, then the end.
	Replay
)

func (m Mode) path() string {
	if m == Replay {
		return "api/v1/replay"
	}
	return "api/v1/watch"
}

// StreamRequest is the body of a watch or replay. Empty strings are
// left out.
type StreamRequest struct {
	EventType string
	// Identifier maps each identifier key to its JSON value: a scalar,
	// or a constraint object such as {"gte": 6}.
	Identifier map[string]json.RawMessage
	// FromID is a start sequence ("0" is the beginning); FromDate a start
	// time. At most one of them.
	FromID, FromDate string
	// ToID and ToDate end a replay (herald); at most one of them.
	ToID, ToDate string
	// Where is a WHERE predicate over the identifier (herald).
	Where string
	// Format names the codec whose output a typed payload is rendered
	// in (herald); empty is the default JSON row view.
	Format string
}

// body renders the request with the given start cursor.
func (r *StreamRequest) body(fromID, fromDate string) map[string]any {
	ident := r.Identifier
	if ident == nil {
		ident = map[string]json.RawMessage{}
	}
	b := map[string]any{"event_type": r.EventType, "identifier": ident}
	for k, v := range map[string]string{"from_id": fromID, "from_date": fromDate, "to_id": r.ToID, "to_date": r.ToDate, "where": r.Where, "format": r.Format} {
		if v != "" {
			b[k] = v
		}
	}
	return b
}

// Event is one notification of a stream.
type Event struct {
	// ID is the CloudEvent id, <event_type>@<sequence>; Seq its sequence
	// (0 when the id has no numeric suffix).
	ID  string
	Seq uint64
	// History is true for a notification delivered from history (SSE
	// event `replay`), false for a live one.
	History bool
	// CloudEvent is the event's JSON exactly as the server sent it.
	CloudEvent json.RawMessage
}

// Control is a stream event that carries no notification: the opening
// event, heartbeats, replay control, errors and the closing event.
type Control struct {
	// Event is the SSE event name (replay-control, heartbeat, ...).
	Event string
	// Type is data.type where the data has one (connection_established,
	// replay_started, replay_completed,
	// notification_replay_limit_reached); for connection-closing it is
	// the reason.
	Type string
	Data json.RawMessage
}

// Reconnect describes a reconnection Follow is about to make.
type Reconnect struct {
	// Attempt counts the reconnections since the last one that delivered
	// a notification or ended cleanly (1 for the first).
	Attempt int
	// Delay is the wait before it.
	Delay time.Duration
	// Cause says why the previous connection ended: a closing reason
	// (end_of_stream, max_duration_reached, server_shutdown) or herald's
	// cause of an end_of_stream (schema_changed, lagging, ...), or the
	// transport error.
	Cause string
	// FromID or FromDate is the start cursor of the new connection.
	FromID, FromDate string
}

// End is how a followed stream ended.
type End struct {
	// Reason is the reason of the final connection-closing event, or
	// herald's cause when it gives one (end_of_stream; schema_removed),
	// or "completed" when a replay's end cursor was reached before the
	// server closed.
	Reason  string
	Message string
	// LimitReached is max_allowed of notification_replay_limit_reached
	// when the server's historical cap cut the replay short; 0 otherwise.
	LimitReached int
	// Last is the last sequence delivered (HaveLast false when none was).
	Last     uint64
	HaveLast bool
	// Delivered counts the notifications handed to OnEvent.
	Delivered int
}

// Handler receives what Follow reads. OnEvent is required; an error it
// returns ends Follow with that error.
type Handler struct {
	OnEvent     func(*Event) error
	OnControl   func(*Control)
	OnReconnect func(*Reconnect)
}

// FollowOptions tune reconnection.
type FollowOptions struct {
	// MinBackoff and MaxBackoff bound the wait before a reconnection
	// after a failure (doubling from MinBackoff, with ±20% jitter).
	// Defaults 250 ms and 30 s.
	MinBackoff, MaxBackoff time.Duration
	// MaxAttempts is how many consecutive reconnections may fail before
	// Follow gives up with the last error; 0 is no limit.
	MaxAttempts int
}

// closing is the data of connection-closing.
type closing struct {
	Reason string `json:"reason"`
	// Cause is herald's own cause of an end_of_stream (schema_changed,
	// schema_removed, lagging, overflow, gap, history_failed, ...).
	Cause        string  `json:"cause"`
	Message      string  `json:"message"`
	ResumeFromID *string `json:"resume_from_id"`
}

// why is the closing's precise reason: herald's cause when it gives one,
// else the reason.
func (cl *closing) why() string {
	if cl.Cause != "" {
		return cl.Cause
	}
	return cl.Reason
}

// Follow runs a watch or replay to its end and hands every notification
// to h.OnEvent exactly once, in sequence order. When the connection is
// lost, or the server closes a watch (end_of_stream, with or without
// resume_from_id or a cause, max_duration_reached, server_shutdown), it
// reconnects by itself from the next sequence it
// needs, with a backoff after failures, and skips anything already
// delivered. A live-only watch that has delivered nothing yet resumes
// from the time the server opened it, so nothing stored meanwhile is
// missed either.
//
// A replay returns at its connection-closing end_of_stream; a watch
// returns only when its event type is removed (cause schema_removed),
// when ctx ends (ctx.Err()), or on an error. The first connection's
// failure is returned as it is (*ConnectError, *APIError); later
// refusals other than 429 and 503 end Follow too.
func (c *Client) Follow(ctx context.Context, mode Mode, req StreamRequest, h Handler, opt FollowOptions) (*End, error) {
	if opt.MinBackoff <= 0 {
		opt.MinBackoff = 250 * time.Millisecond
	}
	if opt.MaxBackoff <= 0 {
		opt.MaxBackoff = 30 * time.Second
	}
	f := &follower{c: c, mode: mode, req: req, h: h, opt: opt}
	if req.ToID != "" {
		if v, err := strconv.ParseUint(strings.TrimPrefix(req.ToID, "+"), 10, 64); err == nil {
			f.toID, f.haveToID = v, true
		}
	}
	return f.run(ctx)
}

type follower struct {
	c    *Client
	mode Mode
	req  StreamRequest
	h    Handler
	opt  FollowOptions

	end      End
	toID     uint64
	haveToID bool
	// opened is the timestamp of the first live-only connection's
	// connection_established: where a resumed watch that has delivered
	// nothing starts.
	opened string
	// resume is the resume_from_id of the last closing event.
	resume uint64
}

// cursor is the start cursor of the next connection.
func (f *follower) cursor() (fromID, fromDate string) {
	next := uint64(0)
	have := false
	if f.end.HaveLast {
		next, have = f.end.Last+1, true
	}
	if f.resume > next {
		next, have = f.resume, true
	}
	switch {
	case have:
		return strconv.FormatUint(next, 10), ""
	case f.req.FromID != "" || f.req.FromDate != "":
		return f.req.FromID, f.req.FromDate
	case f.opened != "":
		return "", f.opened
	}
	return "", ""
}

func (f *follower) run(ctx context.Context) (*End, error) {
	failures := 0
	first := true
	cause := ""
	for {
		fromID, fromDate := f.cursor()
		if !first {
			if f.mode == Replay && f.haveToID && f.end.HaveLast && f.end.Last >= f.toID {
				f.end.Reason = "completed"
				return &f.end, nil
			}
			delay := time.Duration(0)
			if failures > 0 {
				delay = f.backoff(failures)
			}
			if f.h.OnReconnect != nil {
				f.h.OnReconnect(&Reconnect{Attempt: max(failures, 1), Delay: delay, Cause: cause, FromID: fromID, FromDate: fromDate})
			}
			if delay > 0 {
				t := time.NewTimer(delay)
				select {
				case <-ctx.Done():
					t.Stop()
					return &f.end, ctx.Err()
				case <-t.C:
				}
			}
		}
		c := f.connect(ctx, fromID, fromDate)
		delivered, cl, completed, err := c.delivered, c.closing, c.completed, c.err
		if ctx.Err() != nil {
			return &f.end, ctx.Err()
		}
		if err != nil && first && !c.opened {
			return &f.end, err
		}
		first = false
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Status != http.StatusTooManyRequests && apiErr.Status != http.StatusServiceUnavailable {
			return &f.end, err
		}
		if err != nil && !isTransport(err) && !errors.As(err, &apiErr) {
			return &f.end, err // the handler failed, or the stream is not an event stream
		}
		if cl != nil {
			if cl.ResumeFromID != nil {
				if v, perr := strconv.ParseUint(*cl.ResumeFromID, 10, 64); perr == nil {
					f.resume = v
				}
			}
			if (f.mode == Replay && cl.why() == "end_of_stream" && cl.ResumeFromID == nil) || cl.why() == "schema_removed" {
				f.end.Reason, f.end.Message = cl.why(), cl.Message
				return &f.end, nil
			}
		} else if f.mode == Replay && completed {
			// replay_completed arrived and the body ended before its
			// connection-closing: everything was delivered.
			f.end.Reason = "completed"
			return &f.end, nil
		}
		switch {
		case cl != nil:
			cause = cl.why()
		case err != nil:
			cause = err.Error()
		default:
			cause = "the connection ended without connection-closing"
		}
		// A connection that delivered something, or that the server
		// ended cleanly after a while (max_duration_reached on a quiet
		// stream), resets the backoff; one that failed, or ended at
		// once with nothing delivered, grows it, so that a server that
		// keeps closing at once is not hammered. A server shutting down
		// is given time to go and come back.
		clean := cl != nil && cl.Reason != "server_shutdown" && time.Since(c.started) >= time.Second
		if (delivered > 0 || clean) && (cl == nil || cl.Reason != "server_shutdown") {
			failures = 0
		} else {
			failures++
			if f.opt.MaxAttempts > 0 && failures > f.opt.MaxAttempts {
				if err == nil {
					err = errors.New(cause)
				}
				return &f.end, fmt.Errorf("gave up after %d reconnections: %w", f.opt.MaxAttempts, err)
			}
		}
	}
}

// backoff is the wait before the n-th consecutive reconnection.
func (f *follower) backoff(n int) time.Duration {
	d := f.opt.MinBackoff
	for i := 1; i < n && d < f.opt.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, f.opt.MaxBackoff)
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

// isTransport reports whether err is a failure of the connection (as
// opposed to one of the handler).
func isTransport(err error) bool {
	var ce *ConnectError
	return errors.As(err, &ce)
}

// connection is the outcome of one connection.
type connection struct {
	// opened is true once the server answered with an event stream.
	opened bool
	// started is when the connection was attempted.
	started time.Time
	// delivered counts the notifications handed to OnEvent.
	delivered int
	// closing is the connection-closing event, if one arrived.
	closing *closing
	// completed is true when replay_completed arrived.
	completed bool
	// err ended the connection (nil after a closing event, or at the end
	// of the body).
	err error
}

// connect runs one connection.
func (f *follower) connect(ctx context.Context, fromID, fromDate string) (c connection) {
	c.started = time.Now()
	b, err := json.Marshal(f.req.body(fromID, fromDate))
	if err != nil {
		c.err = fmt.Errorf("encode the request: %w", err)
		return c
	}
	u := f.c.URL(f.mode.path())
	resp, err := f.c.do(ctx, http.MethodPost, u, "application/json", bytes.NewReader(b), "text/event-stream")
	if err != nil {
		c.err = err
		return c
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		c.err = fmt.Errorf("POST %s answered %d with Content-Type %q, not an event stream", u, resp.StatusCode, ct)
		return c
	}
	c.opened = true
	live := fromID == "" && fromDate == ""
	r := newSSEReader(resp.Body)
	for {
		name, data, err := r.next()
		if err != nil {
			if err != io.EOF {
				c.err = &ConnectError{URL: u.String(), Err: err, Lost: true}
			}
			return c
		}
		switch name {
		case "replay", "live-notification":
			if !bytes.Contains(data, []byte(`"specversion"`)) {
				ctl := control(name, data)
				if live && ctl.Type == "connection_established" && f.opened == "" {
					var d struct {
						Timestamp string `json:"timestamp"`
					}
					_ = json.Unmarshal(data, &d)
					f.opened = d.Timestamp
				}
				f.onControl(ctl)
				continue
			}
			ev, err := parseEvent(data, name == "replay")
			if err != nil {
				c.err = fmt.Errorf("POST %s: %w", u, err)
				return c
			}
			if ev.Seq != 0 && f.end.HaveLast && ev.Seq <= f.end.Last {
				continue // delivered before a reconnection
			}
			if err := f.h.OnEvent(ev); err != nil {
				c.err = err
				return c
			}
			c.delivered++
			f.end.Delivered++
			if ev.Seq != 0 {
				f.end.Last, f.end.HaveLast = ev.Seq, true
			}
		case "connection-closing":
			var cl closing
			if err := json.Unmarshal(data, &cl); err != nil {
				c.err = fmt.Errorf("POST %s: connection-closing is not JSON: %w", u, err)
				return c
			}
			ctl := control(name, data)
			ctl.Type = cl.Reason
			f.onControl(ctl)
			c.closing = &cl
			return c
		default:
			ctl := control(name, data)
			switch ctl.Type {
			case "replay_completed":
				c.completed = true
			case "notification_replay_limit_reached":
				var d struct {
					MaxAllowed int `json:"max_allowed"`
				}
				_ = json.Unmarshal(data, &d)
				f.end.LimitReached = d.MaxAllowed
			}
			f.onControl(ctl)
		}
	}
}

func (f *follower) onControl(c *Control) {
	if f.h.OnControl != nil {
		f.h.OnControl(c)
	}
}

// control builds the Control of an event that is not a notification.
func control(name string, data []byte) *Control {
	var d struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(data, &d)
	return &Control{Event: name, Type: d.Type, Data: json.RawMessage(data)}
}

// parseEvent reads a CloudEvent's id.
func parseEvent(data []byte, history bool) (*Event, error) {
	var d struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("a notification event is not JSON: %w", err)
	}
	ev := &Event{ID: d.ID, History: history, CloudEvent: json.RawMessage(data)}
	if at := strings.LastIndexByte(d.ID, '@'); at >= 0 {
		if seq, err := strconv.ParseUint(d.ID[at+1:], 10, 64); err == nil {
			ev.Seq = seq
		}
	}
	return ev, nil
}

// SeqOf returns the sequence of a CloudEvent id <event_type>@<sequence>.
func SeqOf(id string) (uint64, bool) {
	at := strings.LastIndexByte(id, '@')
	if at < 0 {
		return 0, false
	}
	seq, err := strconv.ParseUint(id[at+1:], 10, 64)
	return seq, err == nil
}
