package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
)

// The centrifugo side is a reference from outside: Centrifugo v6 (a
// general-purpose real-time fan-out server), a binary given with
// -centrifugo and never a dependency of herald's module. The tool starts
// it with a generated config, connects the subscribers over WebSocket with
// Centrifugo's JSON client protocol (a connect command, then a subscribe
// to centChannel; the server's pushes arrive newline-delimited, several
// to a frame; its application pings are empty objects, {}, which the
// client answers with {}), and publishes through its HTTP API
// (POST /api/publish with the X-API-Key header). Each publication's
// data is the CloudEvent herald rendered at its warm-up, with the
// payload of the notification in place of the warm-up's, so that the
// subscribers receive messages of the same size as herald's and count
// them the same way.

// centChannel is the channel of the measurement, in the namespace the
// config opens to anonymous subscribers.
const centChannel = benchproc.CentrifugoNamespace + ":fanout"

// The generated config is benchproc.CentrifugoConfig with the
// per-connection queue (client.queue_max_size, in bytes) raised to hold
// a whole measurement, as herald's live queue is: at saturation the
// publisher runs ahead of the fan-out on purpose, and a queue that
// overflows makes Centrifugo disconnect the subscriber (close code 3008,
// "slow"). Everything else is Centrifugo's default (16 messages per
// frame at most, write timeout 1 s, pings every 25 s).

// centQueueBytes is the per-connection queue that holds n publications
// of a message of msgSize bytes (with the push envelope), and at least
// Centrifugo's default of 1 MiB.
func centQueueBytes(n, msgSize int) int {
	return max(1<<20, 2*n*(msgSize+128))
}

// ---- the client protocol ----

// centConnect and centSubscribe are the client's commands: the connect
// command with id 1, the subscribe to channel with id 2.
func centConnect() []byte { return []byte(`{"id":1,"connect":{"name":"fanout"}}`) }

func centSubscribe(channel string) []byte {
	ch, _ := json.Marshal(channel) // a string always encodes
	return []byte(`{"id":2,"subscribe":{"channel":` + string(ch) + `}}`)
}

// centPong is the client's answer to the server's application ping.
var centPong = []byte(`{}`)

// centFrame is what one frame of the server holds.
type centFrame struct {
	pubs  int // publication pushes
	pings int // application pings ({})
	// replies are the ids of the replies, in order.
	replies []int
	// problem is the first message telling that the connection or a
	// command failed: an error reply or a disconnect or unsubscribe
	// push (nil when none).
	problem []byte
}

// scanCentFrame splits a frame of the server into its newline-delimited
// messages and classifies them; pub, when set, is called with each
// publication push.
func scanCentFrame(frame []byte, pub func(msg []byte)) centFrame {
	var f centFrame
	for len(frame) > 0 {
		msg := frame
		if i := bytes.IndexByte(frame, '\n'); i >= 0 {
			msg, frame = frame[:i], frame[i+1:]
		} else {
			frame = nil
		}
		msg = bytes.TrimSpace(msg)
		switch {
		case len(msg) == 0:
		case bytes.Equal(msg, centPong):
			f.pings++
		case bytes.HasPrefix(msg, []byte(`{"push":`)):
			push := msg[len(`{"push":`):]
			// The push's kind is the member after the optional channel.
			if bytes.HasPrefix(push, []byte(`{"channel":`)) {
				if i := bytes.Index(push, []byte(`",`)); i >= 0 {
					push = push[i+2:]
				}
			} else if len(push) > 0 {
				push = push[1:]
			}
			switch {
			case bytes.HasPrefix(push, []byte(`"pub":`)):
				f.pubs++
				if pub != nil {
					pub(msg)
				}
			case bytes.HasPrefix(push, []byte(`"disconnect":`)), bytes.HasPrefix(push, []byte(`"unsubscribe":`)):
				if f.problem == nil {
					f.problem = msg
				}
			}
		case bytes.HasPrefix(msg, []byte(`{"id":`)):
			rest := msg[len(`{"id":`):]
			j := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
				j++
			}
			id, err := strconv.Atoi(string(rest[:j]))
			if err != nil {
				if f.problem == nil {
					f.problem = msg
				}
				continue
			}
			f.replies = append(f.replies, id)
			if bytes.HasPrefix(rest[j:], []byte(`,"error":`)) && f.problem == nil {
				f.problem = msg
			}
		}
	}
	return f
}

// centSession opens a Centrifugo client connection on addr, connects
// and subscribes to channel, answering pings on the way.
func centSession(addr, channel string) (*wsConn, error) {
	w, err := wsDialProto(addr, "/connection/websocket", "")
	if err != nil {
		return nil, err
	}
	_ = w.c.SetDeadline(time.Now().Add(30 * time.Second))
	for id, cmd := range [][]byte{centConnect(), centSubscribe(channel)} {
		if err := centCall(w, id+1, cmd); err != nil {
			w.c.Close()
			return nil, err
		}
	}
	_ = w.c.SetDeadline(time.Time{})
	return w, nil
}

// centCall sends command cmd with id id and waits for its reply.
func centCall(w *wsConn, id int, cmd []byte) error {
	if err := w.send(0x1, cmd); err != nil {
		return err
	}
	for {
		p, err := w.text()
		if err != nil {
			return fmt.Errorf("awaiting the reply to %s: %w", cmd, err)
		}
		f := scanCentFrame(p, nil)
		if f.problem != nil {
			return fmt.Errorf("%s answered %s", cmd, f.problem)
		}
		for range f.pings {
			if err := w.send(0x1, centPong); err != nil {
				return err
			}
		}
		for _, r := range f.replies {
			if r == id {
				return nil
			}
		}
	}
}

// countCent counts the publications subscriber sub, w, receives until
// it ends, answering the server's pings.
func countCent(sub int, w *wsConn, ctr *counter) {
	var ph *phase
	var now int64
	record := func(msg []byte) { eachSent(msg, func(ns int64) { ph.lat.record(time.Duration(now - ns)) }) }
	for {
		p, err := w.text()
		ph = ctr.cur.Load()
		if ph == nil {
			return // the measurement is over
		}
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				ph.fail(fmt.Errorf("subscriber %d: %w", sub, err))
			}
			return
		}
		var f centFrame
		if ph.lat != nil {
			now = time.Now().UnixNano()
			f = scanCentFrame(p, record)
		} else {
			f = scanCentFrame(p, nil)
		}
		if f.problem != nil {
			ph.fail(fmt.Errorf("subscriber %d got %s", sub, f.problem))
			return
		}
		for range f.pings {
			if err := w.send(0x1, centPong); err != nil {
				ph.fail(fmt.Errorf("subscriber %d answering a ping: %w", sub, err))
				return
			}
		}
		frames := int64(0)
		if f.pubs > 0 {
			frames = 1
		}
		ph.add(sub, int64(f.pubs), frames)
	}
}

// ---- publishing ----

// centMessage is the data of a publication: the CloudEvent template ce
// (herald's rendering of the warm-up notification) with payload in place
// of the warm-up's payload, {"n":0}.
func centMessage(ce []byte, payload string) ([]byte, error) {
	const warm = `"payload":{"n":0}`
	i := bytes.Index(ce, []byte(warm))
	if i < 0 {
		return nil, fmt.Errorf("the CloudEvent of the warm-up has no %s member: %.300s", warm, ce)
	}
	out := make([]byte, 0, len(ce)+len(payload))
	out = append(out, ce[:i+len(`"payload":`)]...)
	out = append(out, payload...)
	return append(out, ce[i+len(warm):]...), nil
}

// centPublishBody is the body of POST /api/publish for data on channel.
func centPublishBody(channel string, data []byte) []byte {
	ch, _ := json.Marshal(channel) // a string always encodes
	b := make([]byte, 0, len(data)+len(ch)+24)
	b = append(b, `{"channel":`...)
	b = append(b, ch...)
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}')
}

// centPublisher publishes over Centrifugo's HTTP API with up to credit
// requests in flight.
type centPublisher struct {
	url    string
	client *http.Client
	credit int
}

func newCentPublisher(addr string, credit int) *centPublisher {
	tr := &http.Transport{MaxIdleConnsPerHost: credit, MaxConnsPerHost: credit, DisableCompression: true}
	return &centPublisher{url: "http://" + addr + "/api/publish", client: &http.Client{Transport: tr, Timeout: 30 * time.Second}, credit: credit}
}

// close releases the publisher's connections.
func (c *centPublisher) close() { c.client.CloseIdleConnections() }

// publishOne publishes data on channel and checks the reply.
func (c *centPublisher) publishOne(ctx context.Context, channel string, data []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(centPublishBody(channel, data)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", benchproc.CentrifugoAPIKey)
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(bytes.TrimSpace(body), []byte(`{"result":`)) {
		return fmt.Errorf("publish answered %s: %.300s", resp.Status, body)
	}
	return nil
}

// publish publishes n messages, message(i) for i from 0, keeping up to
// credit requests in flight; with pace > 0 message i is sent no earlier
// than pace×i after the start (message is called then, so that it can
// stamp the time). It returns the time from the first request to the
// last reply.
func (c *centPublisher) publish(ctx context.Context, n int, pace time.Duration, message func(i int) []byte) (time.Duration, error) {
	start := time.Now()
	sem := make(chan struct{}, c.credit)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := range n {
		if pace > 0 {
			if benchproc.Pause(ctx, time.Until(start.Add(time.Duration(i)*pace))) != nil {
				break
			}
		}
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			<-sem
			break
		}
		data := message(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := c.publishOne(ctx, centChannel, data); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("publication %d: %w", i, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return time.Since(start), first
}

// centLive checks that the HTTP API of the Centrifugo on addr takes a
// publication (to a channel nobody reads).
func centLive(ctx context.Context, addr string) error {
	p := newCentPublisher(addr, 1)
	defer p.close()
	if err := p.publishOne(ctx, "bench:probe", []byte(`{}`)); err != nil {
		return fmt.Errorf("centrifugo's HTTP API: %w", err)
	}
	return nil
}
