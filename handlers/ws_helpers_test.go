package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/herald-gateway/herald/openapi"
	"github.com/herald-gateway/herald/openapi/openapitest"
)

// wsClient is a WebSocket session client over a real connection: frames
// arrive on frames in order; paused stops reading them.
type wsClient struct {
	t      *testing.T
	c      *websocket.Conn
	frames chan map[string]any
	raw    chan string
	errs   chan error
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	nextID int
	gmu    sync.Mutex
	gate   chan struct{} // when not nil, the reader waits on it before each read
	// invalid lists the received frames that the session protocol's
	// AsyncAPI document does not describe (guarded by gmu); the test
	// fails with them at its end.
	invalid []string
}

// pause stops the reader before its next read (the kernel buffers then
// fill and the server's writes block).
func (w *wsClient) pause() {
	w.gmu.Lock()
	defer w.gmu.Unlock()
	if w.gate == nil {
		w.gate = make(chan struct{})
	}
}

// dial opens a session on s; header may carry credentials.
func (s *server) dial(t *testing.T, header http.Header) *wsClient {
	t.Helper()
	return s.dialOpts(t, header, false)
}

// dialSlow opens a session whose client has a tiny receive buffer, for
// the tests that pause it.
func (s *server) dialSlow(t *testing.T) *wsClient {
	t.Helper()
	return s.dialOpts(t, nil, true)
}

func (s *server) dialOpts(t *testing.T, header http.Header, paused bool) *wsClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	u := "ws" + strings.TrimPrefix(s.URL, "http") + "/api/v1/session"
	opts := &websocket.DialOptions{Subprotocols: []string{"herald.v1"}, HTTPHeader: header}
	if paused {
		// A small receive buffer, so that a client that reads nothing
		// pushes back on the server at once.
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}}
		opts.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	c, resp, err := websocket.Dial(ctx, u, opts)
	if err != nil {
		cancel()
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial: %v (status %d)", err, status)
	}
	c.SetReadLimit(64 << 20)
	w := &wsClient{t: t, c: c, frames: make(chan map[string]any, 1<<16), raw: make(chan string, 1<<16), errs: make(chan error, 1), ctx: ctx, cancel: cancel}
	go w.read()
	t.Cleanup(func() {
		cancel()
		_ = c.CloseNow()
		w.gmu.Lock()
		defer w.gmu.Unlock()
		for _, e := range w.invalid {
			t.Errorf("a frame the AsyncAPI document does not describe: %s", e)
		}
	})
	return w
}

// resume lets a paused client read again.
func (w *wsClient) resume() {
	w.gmu.Lock()
	defer w.gmu.Unlock()
	if w.gate != nil {
		close(w.gate)
		w.gate = nil
	}
}

func (w *wsClient) read() {
	defer close(w.frames)
	for {
		w.gmu.Lock()
		g := w.gate
		w.gmu.Unlock()
		if g != nil {
			select {
			case <-g:
			case <-w.ctx.Done():
				return
			}
		}
		_, data, err := w.c.Read(w.ctx)
		if err != nil {
			w.errs <- err
			return
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			w.errs <- fmt.Errorf("frame is not JSON: %v: %s", err, data)
			return
		}
		// Every frame the server sends must be one the document
		// describes (the test goroutine reports it at the end).
		if err := checkSessionFrame(data); err != nil {
			w.gmu.Lock()
			w.invalid = append(w.invalid, err.Error())
			w.gmu.Unlock()
		}
		w.raw <- string(data)
		w.frames <- m
	}
}

// sendRaw sends one text frame as it is.
func (w *wsClient) sendRaw(frame string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// request sends a request with a fresh integer id (fields is a JSON
// object text without braces) and returns the id.
func (w *wsClient) request(op, fields string) float64 {
	w.t.Helper()
	w.mu.Lock()
	w.nextID++
	id := w.nextID
	w.mu.Unlock()
	frame := fmt.Sprintf(`{"id":%d,"op":%q`, id, op)
	if fields != "" {
		frame += "," + fields
	}
	w.sendRaw(frame + "}")
	return float64(id)
}

// next returns the next frame.
func (w *wsClient) next() map[string]any {
	w.t.Helper()
	f, _ := w.nextRaw()
	return f
}

// nextRaw returns the next frame, decoded and as sent.
func (w *wsClient) nextRaw() (map[string]any, string) {
	w.t.Helper()
	select {
	case f, ok := <-w.frames:
		if !ok {
			select {
			case err := <-w.errs:
				w.t.Fatalf("session ended: %v", err)
			default:
			}
			w.t.Fatal("session ended")
		}
		return f, <-w.raw
	case <-time.After(wait):
		w.t.Fatal("no frame in time")
	}
	return nil, ""
}

// reply sends a request and returns its reply, failing on any other
// frame before it.
func (w *wsClient) reply(op, fields string) map[string]any {
	w.t.Helper()
	id := w.request(op, fields)
	f := w.next()
	if f["type"] != "reply" || f["id"] != id {
		w.t.Fatalf("%s: expected its reply, got %v", op, f)
	}
	return f
}

// replyAmid sends a request and returns its reply and the frames that
// arrived before it (events of subscriptions may).
func (w *wsClient) replyAmid(op, fields string) (map[string]any, []map[string]any) {
	w.t.Helper()
	id := w.request(op, fields)
	var before []map[string]any
	for {
		f := w.next()
		if f["type"] == "reply" && f["id"] == id {
			return f, before
		}
		before = append(before, f)
	}
}

// ok sends a request and returns its successful reply.
func (w *wsClient) ok(op, fields string) map[string]any {
	w.t.Helper()
	r := w.reply(op, fields)
	if r["ok"] != true {
		w.t.Fatalf("%s %s: %v", op, fields, r)
	}
	return r
}

// fails sends a request and checks its error code and message prefix.
func (w *wsClient) fails(op, fields, code, msgPrefix string) map[string]any {
	w.t.Helper()
	r := w.reply(op, fields)
	e, _ := r["error"].(map[string]any)
	if r["ok"] != false || e["code"] != code || !strings.HasPrefix(fmt.Sprint(e["message"]), msgPrefix) {
		w.t.Fatalf("%s %s: got %v\nwant %s %q", op, fields, r, code, msgPrefix)
	}
	return r
}

// welcome reads the welcome frame.
func (w *wsClient) welcome() map[string]any {
	w.t.Helper()
	f := w.next()
	if f["type"] != "welcome" {
		w.t.Fatalf("first frame %v", f)
	}
	return f
}

// eventIDs returns the CloudEvent ids of an events frame.
func eventIDs(f map[string]any) []string {
	evs, _ := f["events"].([]any)
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i], _ = e.(map[string]any)["id"].(string)
	}
	return out
}

// collect reads frames until n event ids of subscription sub arrived
// (other frames are returned too).
func (w *wsClient) collect(sub string, n int) (ids []string, others []map[string]any) {
	w.t.Helper()
	for len(ids) < n {
		var f map[string]any
		select {
		case got, ok := <-w.frames:
			if !ok {
				w.t.Fatalf("session ended after %d of %d events of %s: %v", len(ids), n, sub, ids)
			}
			<-w.raw
			f = got
		case <-time.After(wait):
			w.t.Fatalf("%d of %d events of %s in time: %v (other frames %v)", len(ids), n, sub, ids, others)
		}
		if f["type"] == "events" && f["sub"] == sub {
			ids = append(ids, eventIDs(f)...)
			continue
		}
		others = append(others, f)
	}
	return ids, others
}

// asyncDoc is the AsyncAPI document herald serves, decoded once for all
// the sessions of the tests.
var asyncDoc = sync.OnceValues(func() (*openapitest.SessionDoc, error) {
	return openapitest.ParseSessionDoc(openapi.AsyncAPISpec())
})

// checkSessionFrame checks a frame the server sent against the document.
func checkSessionFrame(frame []byte) error {
	sd, err := asyncDoc()
	if err != nil {
		return err
	}
	return sd.Check(openapitest.Receive, frame)
}
