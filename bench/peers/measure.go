package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/herald-gateway/herald/bench/internal/leanhttp"
)

// client is the HTTP side of the tool against one server: the lean
// keep-alive client for notify and batch notify (each concurrent worker
// over a connection of its own), and Go's HTTP client for event streams.
// The notify load shares the machine with the server it measures, and
// net/http's client costs about as much CPU per exchange as the server
// does, which would leave both servers' figures client-bound.
type client struct {
	base string
	lean *leanhttp.Pool
	sse  *http.Client
}

func newClient(base string) *client {
	return &client{
		base: base,
		lean: leanhttp.New(strings.TrimPrefix(base, "http://")),
		sse: &http.Client{Transport: &http.Transport{
			MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, DisableCompression: true,
		}},
	}
}

// close drops the idle connections of both clients.
func (c *client) close() {
	c.lean.Close()
	c.sse.CloseIdleConnections()
}

// notify posts one notification; anything but 200 is an error.
func (c *client) notify(ctx context.Context, body string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	status, err := c.lean.Do(http.MethodPost, "/api/v1/notification", []byte(body))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("POST /api/v1/notification: status %d, want 200", status)
	}
	return err
}

// ---- SSE ----

// sseEvent is one event of a stream: its name and its data line.
type sseEvent struct {
	name string
	data []byte // valid during the callback only
}

// readSSE posts body to path and calls on for each event of the
// response until on returns false, the stream ends, or ctx ends. A
// status other than 200 or a Content-Type other than
// text/event-stream is an error.
func (c *client) readSSE(ctx context.Context, path, body string, on func(ev sseEvent) (bool, error)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.sse.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(msg))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return fmt.Errorf("POST %s: Content-Type %q, want text/event-stream", path, ct)
	}
	if err := scanSSE(resp.Body, on); err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	return nil
}

// scanSSE reads an event stream from r and calls on for each event
// (dispatched at its blank line) until on returns false or an error, or
// the stream ends: an end of stream before that is io.ErrUnexpectedEOF,
// since every stream of the run ends with connection-closing. Comment
// lines and fields other than event and data are ignored; several data
// lines are joined with newlines.
func scanSSE(r io.Reader, on func(ev sseEvent) (bool, error)) error {
	br := bufio.NewReaderSize(r, 16<<10)
	var name string
	var data []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			rest, err2 := br.ReadBytes('\n')
			line, err = append(slices.Clone(line), rest...), err2
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0: // dispatch
			if name == "" && len(data) == 0 {
				continue
			}
			more, err := on(sseEvent{name: name, data: data})
			if err != nil || !more {
				return err
			}
			name, data = "", data[:0]
		case bytes.HasPrefix(line, []byte("event:")):
			name = string(bytes.TrimSpace(line[len("event:"):]))
		case bytes.HasPrefix(line, []byte("data:")):
			d := line[len("data:"):]
			if len(d) > 0 && d[0] == ' ' {
				d = d[1:]
			}
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, d...)
		}
	}
}

// controlType returns the "type" member of a control event's data, ""
// for a CloudEvent or anything else.
func controlType(data []byte) string {
	if bytes.Contains(data, []byte(`"specversion"`)) {
		return ""
	}
	var v struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(data, &v)
	return v.Type
}

// ---- replay ----

// replayCount follows the events of a replay stream: it counts the
// replay events and notes when replay_completed came. The stream must go
// replay_started, replay*, replay_completed, connection-closing; a
// truncation (notification_replay_limit_reached), an error event or
// anything out of that order is an error.
type replayCount struct {
	began     time.Time
	n         int
	started   bool
	completed time.Duration // since began; 0 until replay_completed
}

// on takes the next event; it returns false after connection-closing.
func (rc *replayCount) on(ev sseEvent) (bool, error) {
	switch ev.name {
	case "replay":
		if !rc.started || rc.completed != 0 {
			return false, fmt.Errorf("a replay event outside replay_started … replay_completed: %s", ev.data)
		}
		rc.n++
	case "replay-control":
		switch t := controlType(ev.data); t {
		case "replay_started":
			rc.started = true
		case "replay_completed":
			if !rc.started {
				return false, errors.New("replay_completed before replay_started")
			}
			rc.completed = max(time.Since(rc.began), 1)
		default:
			return false, fmt.Errorf("replay-control %q after %d events: %s", t, rc.n, ev.data)
		}
	case "connection-closing":
		if rc.completed == 0 {
			return false, fmt.Errorf("connection-closing after %d events without replay_completed: %s", rc.n, ev.data)
		}
		return false, nil
	case "error":
		return false, fmt.Errorf("error event after %d events: %s", rc.n, ev.data)
	}
	return true, nil
}

// replay runs one replay of event type et from sequence 1 and returns
// the number of replay events and the time from the request to
// replay_completed (see replayCount for what it accepts).
func (c *client) replay(ctx context.Context, et string) (int, time.Duration, error) {
	body := fmt.Sprintf(`{"event_type":%q,"identifier":{},"from_id":"1"}`, et)
	rc := &replayCount{began: time.Now()}
	if err := c.readSSE(ctx, "/api/v1/replay", body, rc.on); err != nil {
		return rc.n, 0, fmt.Errorf("replay of %s: %w", et, err)
	}
	return rc.n, rc.completed, nil
}

// store notifies count notifications of event type et, each on a subject
// of its own (step i), from conc concurrent clients, and fails unless
// every one is answered 200.
func (c *client) store(ctx context.Context, et string, count, conc int) error {
	var next atomic.Int64
	errs := make(chan error, conc)
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= count || ctx.Err() != nil {
					return
				}
				if err := c.notify(ctx, notifyBody(et, i, i, `{"i":`+strconv.Itoa(i)+`}`)); err != nil {
					errs <- fmt.Errorf("storing notification %d of %d: %w", i, count, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// ---- live fan-out ----

// stamp extracts the send time of a live notification's CloudEvent
// (payload {"t":<unix ns>}), 0 when it has none.
func stamp(data []byte) int64 {
	const key = `"payload":{"t":`
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return 0
	}
	rest := data[i+len(key):]
	j := bytes.IndexByte(rest, '}')
	if j < 0 {
		return 0
	}
	t, _ := strconv.ParseInt(string(rest[:j]), 10, 64)
	return t
}

// fanout opens w live watches of event type et, waits until each has
// its connection_established, then notifies events notifications paced
// gap apart, each carrying its send time, and returns the sorted
// notify → delivery latencies of all w × events deliveries. Every
// watcher must receive every notification exactly once.
func (c *client) fanout(ctx context.Context, et string, w, events int, gap time.Duration) ([]time.Duration, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		lat     = make([]time.Duration, 0, w*events)
		ready   atomic.Int64
		total   atomic.Int64
		wg      sync.WaitGroup
		errs    = make(chan error, w)
		counts  = make([]int, w)
		allDone = make(chan struct{})
		once    sync.Once
	)
	body := fmt.Sprintf(`{"event_type":%q,"identifier":{}}`, et)
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.readSSE(wctx, "/api/v1/watch", body, func(ev sseEvent) (bool, error) {
				switch ev.name {
				case "live-notification":
					if t := stamp(ev.data); t > 0 {
						d := time.Since(time.Unix(0, t))
						counts[k]++
						if counts[k] > events {
							return false, fmt.Errorf("watcher %d received %d notifications, %d were sent", k, counts[k], events)
						}
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
						if total.Add(1) == int64(w*events) {
							once.Do(func() { close(allDone) })
						}
					} else if controlType(ev.data) == "connection_established" {
						ready.Add(1)
					} else {
						return false, fmt.Errorf("watcher %d: unexpected live-notification %s", k, ev.data)
					}
				case "error":
					return false, fmt.Errorf("watcher %d: error event %s", k, ev.data)
				case "connection-closing":
					return false, fmt.Errorf("watcher %d: connection-closing after %d of %d notifications: %s", k, counts[k], events, ev.data)
				}
				return true, nil
			})
			if err != nil && wctx.Err() == nil {
				errs <- err
			}
		}()
	}
	// On every return the watches end first, then their readers are
	// waited for.
	defer func() { cancel(); wg.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for ready.Load() < int64(w) {
		select {
		case err := <-errs:
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d watchers connected", ready.Load(), w)
		}
	}
	for i := range events {
		body := notifyBody(et, i, i, `{"t":`+strconv.FormatInt(time.Now().UnixNano(), 10)+`}`)
		if err := c.notify(ctx, body); err != nil {
			return nil, err
		}
		// Open loop: a fixed pace, not a wait for a condition.
		select {
		case <-time.After(gap):
		case err := <-errs:
			return nil, err
		}
	}
	select {
	case <-allDone:
	case err := <-errs:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(2 * time.Minute):
		return nil, fmt.Errorf("%d of %d deliveries within 2 minutes", total.Load(), w*events)
	}
	cancel()
	wg.Wait()
	slices.Sort(lat)
	return lat, nil
}

// ---- batch notify (herald) ----

// batchBody is a batch notify of size notifications from i on.
func batchBody(i, size int) string {
	var b strings.Builder
	b.WriteString(`{"notifications":[`)
	for k := range size {
		if k > 0 {
			b.WriteByte(',')
		}
		n := i + k
		b.WriteString(notifyBody(typeBatch, n, n%1000, `{"i":`+strconv.Itoa(n)+`}`))
	}
	b.WriteString("]}")
	return b.String()
}

// batch posts one batch notify and checks that it stored every one of
// its size notifications.
func (c *client) batch(ctx context.Context, body string, size int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	status, msg, err := c.lean.Read(http.MethodPost, "/api/v1/notifications", []byte(body), nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("POST /api/v1/notifications: status %d, want 200", status)
	}
	var r struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal(msg, &r); err != nil {
		return fmt.Errorf("batch notify answer: %w", err)
	}
	if len(r.IDs) != size {
		return fmt.Errorf("batch notify stored %d of %d notifications", len(r.IDs), size)
	}
	return nil
}
