package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The bare broadcaster is the reference of the same run: a minimal
// server (this tool re-executed with -serve-bare) that holds the same
// 1,000 connections and writes the same pre-encoded CloudEvent to each
// of them, with nothing herald does besides: no parsing, no matching,
// no rendering, no per-subscriber policy. A broadcast of M notifications
// adds M to every connection's pending count and wakes its writer; the
// writer writes what is pending
//
//   - single: one frame (WebSocket) or one event plus a flush (SSE) per
//     notification, the same pre-encoded bytes each time;
//   - batch: everything pending in as few writes as herald's limits
//     allow, copying the event into the frame as herald does: WebSocket
//     events frames of at most 256 events (session.max_frame_events),
//     SSE writes of at most 64 KiB (herald's sse batch) with one flush.
//
// WebSocket connections are github.com/coder/websocket (herald's library,
// the same accept options); SSE is net/http.

// bareSub is one connection of the bare server.
type bareSub struct {
	pending atomic.Int64
	wake    chan struct{}
}

// bareServer is the bare broadcaster.
type bareServer struct {
	ce     []byte // the CloudEvent
	wsOne  []byte // an events frame carrying it once
	sseOne []byte // an SSE event carrying it
	batch  bool
	mu     sync.Mutex
	subs   []*bareSub
}

// serveBare runs the bare broadcaster on addr with the CloudEvent read
// from cePath.
func serveBare(addr, cePath string, batch bool) {
	ce, err := os.ReadFile(cePath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanout: bare server:", err)
		os.Exit(1)
	}
	b := &bareServer{ce: ce, batch: batch}
	b.wsOne = append(append([]byte(wsPrefix), ce...), wsSuffix...)
	b.sseOne = append(append([]byte(ssePrefix), ce...), "\n\n"...)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/session", b.serveWS)
	mux.HandleFunc("POST /api/v1/watch", b.serveSSE)
	mux.HandleFunc("POST /broadcast", b.broadcast)
	mux.HandleFunc("GET /subscribers", func(w http.ResponseWriter, _ *http.Request) {
		b.mu.Lock()
		n := len(b.subs)
		b.mu.Unlock()
		fmt.Fprintln(w, n)
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "fanout: bare server:", err)
		os.Exit(1)
	}
}

// The frame and event around a CloudEvent, as herald writes them.
const (
	wsPrefix  = `{"type":"events","sub":"s","gen":1,"phase":"live","events":[`
	wsSuffix  = `]}`
	ssePrefix = "event: live-notification\ndata: "
)

// Herald's batching limits.
const (
	maxFrameEvents = 256
	sseBatchBytes  = 64 << 10
)

func (b *bareServer) add() *bareSub {
	s := &bareSub{wake: make(chan struct{}, 1)}
	b.mu.Lock()
	b.subs = append(b.subs, s)
	b.mu.Unlock()
	return s
}

// broadcast hands ?n= notifications to every connection.
func (b *bareServer) broadcast(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n <= 0 {
		http.Error(w, "n must be a positive integer", http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	subs := append([]*bareSub(nil), b.subs...)
	b.mu.Unlock()
	go func() {
		for range n {
			for _, s := range subs {
				s.pending.Add(1)
				select {
				case s.wake <- struct{}{}:
				default:
				}
			}
		}
	}()
	w.WriteHeader(http.StatusNoContent)
}

func (b *bareServer) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"herald.v1"}, InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := c.CloseRead(context.Background())
	s := b.add()
	var buf []byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		}
		n := s.pending.Swap(0)
		if !b.batch {
			for ; n > 0; n-- {
				if c.Write(ctx, websocket.MessageText, b.wsOne) != nil {
					return
				}
			}
			continue
		}
		for n > 0 {
			k := min(n, maxFrameEvents)
			buf = append(buf[:0], wsPrefix...)
			for i := range k {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = append(buf, b.ce...)
			}
			buf = append(buf, wsSuffix...)
			if c.Write(ctx, websocket.MessageText, buf) != nil {
				return
			}
			n -= k
		}
	}
}

func (b *bareServer) serveSSE(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_, _ = w.Write([]byte("event: live-notification\ndata: {\"type\":\"connection_established\"}\n\n"))
	if rc.Flush() != nil {
		return
	}
	s := b.add()
	var buf []byte
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.wake:
		}
		n := s.pending.Swap(0)
		if !b.batch {
			for ; n > 0; n-- {
				if _, err := w.Write(b.sseOne); err != nil || rc.Flush() != nil {
					return
				}
			}
			continue
		}
		buf = buf[:0]
		for ; n > 0; n-- {
			buf = append(buf, ssePrefix...)
			buf = append(buf, b.ce...)
			buf = append(buf, "\n\n"...)
			if len(buf) >= sseBatchBytes {
				if _, err := w.Write(buf); err != nil {
					return
				}
				buf = buf[:0]
			}
		}
		if len(buf) > 0 {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
		if rc.Flush() != nil {
			return
		}
	}
}
