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
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
)

// sseFilter is one of the watch filters the SSE watchers take in turn:
// the identifier sent and the same selection computed from n.
type sseFilter struct {
	ident string
	match func(n int) bool
}

var sseFilters = []sseFilter{
	{`{"class":"a"}`, func(n int) bool { return classOf(n) == "a" }},
	{`{"class":"b"}`, func(n int) bool { return classOf(n) == "b" }},
	{`{"class":"c"}`, func(n int) bool { return classOf(n) == "c" }},
	{`{"class":"d"}`, func(n int) bool { return classOf(n) == "d" }},
	{`{"step":{"gte":12}}`, func(n int) bool { return stepOf(n) >= 12 }},
	{`{"class":"b","step":{"lt":6}}`, func(n int) bool { return classOf(n) == "b" && stepOf(n) < 6 }},
	{`{}`, func(int) bool { return true }},
}

// wsFilter is one of the subscriptions a WebSocket session holds: an
// identifier and a WHERE predicate, and the same selection from n.
type wsFilter struct {
	ident, where string
	match        func(n int) bool
}

var wsFilters = []wsFilter{
	{`{}`, "step >= 18", func(n int) bool { return stepOf(n) >= 18 }},
	{`{}`, "class = 'c' AND step < 12", func(n int) bool { return classOf(n) == "c" && stepOf(n) < 12 }},
	{`{}`, "class IN ('a','b') AND step BETWEEN 3 AND 5", func(n int) bool {
		c, s := classOf(n), stepOf(n)
		return (c == "a" || c == "b") && s >= 3 && s <= 5
	}},
	{`{"class":"d"}`, "step <> 0", func(n int) bool { return classOf(n) == "d" && stepOf(n) != 0 }},
}

// payloadPrefix starts the payload of every soak notification, as the
// notifier sends it, and seqPrefix the CloudEvent id that follows it.
var (
	payloadPrefix = []byte(`"payload":{"n":`)
	seqPrefix     = []byte(`"id":"soak@`)
)

// scanEvents finds every CloudEvent of the soak stream in b (an SSE data
// line or a session events frame) and hands its sequence, n and send time
// to fn. It relies on the shape herald writes: each CloudEvent's data
// {"identifier": …, "payload": {"n": …, "t": …}} comes before its id.
func scanEvents(b []byte, fn func(seq uint64, n int, sent int64)) error {
	for {
		i := bytes.Index(b, payloadPrefix)
		if i < 0 {
			if bytes.Contains(b, seqPrefix) {
				return errors.New("an event without the soak payload")
			}
			return nil
		}
		b = b[i+len(payloadPrefix):]
		n, rest, ok := digits(b)
		if !ok || !bytes.HasPrefix(rest, []byte(`,"t":`)) {
			return fmt.Errorf("payload not as sent: %.80s", b)
		}
		t, rest, ok := digits(rest[len(`,"t":`):])
		if !ok {
			return fmt.Errorf("payload not as sent: %.80s", b)
		}
		j := bytes.Index(rest, seqPrefix)
		if j < 0 {
			return fmt.Errorf("the event of n=%d has no soak id", n)
		}
		seq, rest, ok := digits(rest[j+len(seqPrefix):])
		if !ok {
			return fmt.Errorf("the event of n=%d has an id without a sequence", n)
		}
		fn(seq, int(n), int64(t))
		b = rest
	}
}

// digits parses the decimal number at the start of b.
func digits(b []byte) (uint64, []byte, bool) {
	i := 0
	var v uint64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + uint64(b[i]-'0')
		i++
	}
	return v, b[i:], i > 0
}

// backoff is a reconnection delay that doubles to 2 s.
type backoff struct{ d time.Duration }

func (b *backoff) next() time.Duration {
	if b.d == 0 {
		b.d = 50 * time.Millisecond
	} else {
		b.d = min(2*b.d, 2*time.Second)
	}
	return b.d
}

// client holds what every soak client shares.
type client struct {
	base    string // http://host:port of herald
	http    *http.Client
	lat     *latencies
	errs    atomic.Int64 // protocol surprises (counted, not fatal)
	lastErr atomic.Value // string
}

func (c *client) surprise(err error) {
	c.errs.Add(1)
	c.lastErr.Store(err.Error())
}

// watchSSE runs one SSE watcher until ctx ends: it opens the watch, reads
// its events into r, and on any end reopens it from the next sequence it
// needs (from_id = last + 1; 1 before anything arrived, the stream being
// empty when the soak starts). ready is closed once the first stream is
// established.
func (c *client) watchSSE(ctx context.Context, r *receiver, ident string, ready chan<- struct{}) {
	var bo backoff
	first := true
	for ctx.Err() == nil {
		body := `{"event_type":"soak","identifier":` + ident
		if !first {
			body += `,"from_id":"` + strconv.FormatUint(r.lastSeq+1, 10) + `"`
			r.reconnects.Add(1)
		}
		body += `}`
		err := c.sseOnce(ctx, r, body, func() {
			if first {
				first = false
				close(ready)
			}
			bo = backoff{}
		})
		if ctx.Err() != nil {
			return
		}
		if err != nil && !errors.Is(err, io.EOF) {
			c.lastErr.Store(r.name + ": " + err.Error())
		}
		_ = benchproc.Pause(ctx, bo.next())
	}
}

// sseOnce runs one watch request to its end.
func (c *client) sseOnce(ctx context.Context, r *receiver, body string, established func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/v1/watch", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("watch: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	event := ""
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		switch {
		case bytes.HasPrefix(line, []byte("event: ")):
			event = string(bytes.TrimSpace(line[len("event: "):]))
		case bytes.HasPrefix(line, []byte("data: ")):
			data := line[len("data: "):]
			switch event {
			case "live-notification", "replay":
				if bytes.Contains(data, []byte(`"connection_established"`)) {
					established()
					continue
				}
				now := time.Now()
				if err := scanEvents(data, func(seq uint64, n int, sent int64) {
					r.deliver(n, seq)
					c.lat.add(now, now.Sub(time.Unix(0, sent)))
				}); err != nil {
					c.surprise(fmt.Errorf("%s: %w", r.name, err))
				}
			case "connection-closing":
				return io.EOF // reopened from the last sequence + 1
			case "error":
				c.surprise(fmt.Errorf("%s: error event: %s", r.name, bytes.TrimSpace(data)))
				return io.EOF
			}
		}
	}
}

// session runs one WebSocket session with one subscription per receiver
// until ctx ends. A subscription that ends is subscribed again from its
// next sequence; a session that drops is dialled again and every
// subscription resumed. ready is closed once every subscription opened
// the first time.
func (c *client) session(ctx context.Context, rs []*receiver, fs []wsFilter, ready chan<- struct{}) {
	var bo backoff
	opened := make([]bool, len(rs))
	nOpened := 0
	for ctx.Err() == nil {
		err := c.sessionOnce(ctx, rs, fs, opened, &nOpened, ready, &bo)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.lastErr.Store("session: " + err.Error())
			for _, r := range rs {
				r.reconnects.Add(1)
			}
		}
		_ = benchproc.Pause(ctx, bo.next())
	}
}

func (c *client) sessionOnce(ctx context.Context, rs []*receiver, fs []wsFilter, opened []bool, nOpened *int, ready chan<- struct{}, bo *backoff) error {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, resp, err := websocket.Dial(dctx, "ws"+strings.TrimPrefix(c.base, "http")+"/api/v1/session",
		&websocket.DialOptions{Subprotocols: []string{"herald.v1"}, HTTPClient: c.http})
	cancel()
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	reqID := 0
	subscribe := func(i int) error {
		reqID++
		m := map[string]any{"id": reqID, "op": "subscribe", "name": rs[i].name, "event_type": "soak",
			"identifier": json.RawMessage(fs[i].ident), "where": fs[i].where}
		if opened[i] {
			m["from_id"] = strconv.FormatUint(rs[i].lastSeq+1, 10)
		}
		b, _ := json.Marshal(m)
		return conn.Write(ctx, websocket.MessageText, b)
	}
	for i := range rs {
		if err := subscribe(i); err != nil {
			return err
		}
	}
	byName := map[string]int{}
	for i, r := range rs {
		byName[r.name] = i
	}
	var frame struct {
		Type   string `json:"type"`
		OK     *bool  `json:"ok"`
		Name   string `json:"name"`
		Sub    string `json:"sub"`
		Reason string `json:"reason"`
		Error  *struct {
			Code, Message string
		} `json:"error"`
	}
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		typ := frameType(b)
		switch typ {
		case "events":
			i, ok := byName[subName(b)]
			if !ok {
				c.surprise(fmt.Errorf("events for an unknown subscription: %.200s", b))
				continue
			}
			now := time.Now()
			if err := scanEvents(b, func(seq uint64, n int, sent int64) {
				rs[i].deliver(n, seq)
				c.lat.add(now, now.Sub(time.Unix(0, sent)))
			}); err != nil {
				c.surprise(fmt.Errorf("%s: %w", rs[i].name, err))
			}
			continue
		case "welcome", "history_completed":
			continue
		}
		frame.OK, frame.Error = nil, nil
		if err := json.Unmarshal(b, &frame); err != nil {
			c.surprise(fmt.Errorf("session frame: %w", err))
			continue
		}
		switch typ {
		case "reply":
			if frame.OK == nil || !*frame.OK {
				msg := "?"
				if frame.Error != nil {
					msg = frame.Error.Code + ": " + frame.Error.Message
				}
				return fmt.Errorf("subscribe refused: %s", msg)
			}
			i, ok := byName[frame.Name]
			if !ok {
				continue
			}
			if !opened[i] {
				opened[i] = true
				if *nOpened++; *nOpened == len(rs) {
					close(ready)
				}
			}
			*bo = backoff{}
		case "subscription_ended":
			i, ok := byName[frame.Sub]
			if !ok {
				continue
			}
			rs[i].reconnects.Add(1)
			if err := subscribe(i); err != nil {
				return err
			}
		case "dropped", "error":
			c.surprise(fmt.Errorf("session: %.300s", b))
		}
	}
}

// frameType and subName read a frame's "type" and "sub" members without
// decoding the frame (events frames are the bulk of the traffic).
func frameType(b []byte) string { return member(b, `"type":"`) }
func subName(b []byte) string   { return member(b, `"sub":"`) }

func member(b []byte, key string) string {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return ""
	}
	b = b[i+len(key):]
	j := bytes.IndexByte(b, '"')
	if j < 0 {
		return ""
	}
	return string(b[:j])
}

// notify publishes notification n with its send time through hc, and
// records the outcome.
func (c *client) notify(ctx context.Context, hc *http.Client, l *ledger, n int) {
	body := fmt.Sprintf(`{"event_type":"soak","identifier":{"class":"%s","step":%d},"payload":{"n":%d,"t":%d}}`,
		classOf(n), stepOf(n), n, time.Now().UnixNano())
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.base+"/api/v1/notification", strings.NewReader(body))
	if err != nil {
		l.set(n, refused)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		l.set(n, uncertain)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		l.set(n, accepted)
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		l.set(n, refused)
	default:
		l.set(n, uncertain)
	}
}

// scrape reads the unlabelled series herald's /metrics serves.
func scrape(ctx context.Context, hc *http.Client, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		out[name] = v
	}
	return out, sc.Err()
}

// liveHeap is the heap the last garbage collection left live, from
// herald's GC goal: next_gc = live × (1 + GOGC/100). The heap in use,
// sampled at a random point of the GC cycle, swings by the whole cycle's
// garbage (50-100 MB in a 10 s sample series), which drowns a slope.
func liveHeap(m map[string]float64) float64 {
	gogc, ok := m["go_gc_gogc_percent"]
	if !ok || gogc <= 0 {
		gogc = 100
	}
	return m["go_memstats_next_gc_bytes"] / (1 + gogc/100)
}
