package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// loadConfig has one event type with a string and an integer key.
const loadConfig = testConfig + `  load:
    topic: {base: load, key_order: [k, n]}
    identifier:
      k: {type: StringHandler, required: false}
      n: {type: IntHandler, required: false}
`

// loadSub is one of the four subscriptions of every session.
type loadSub struct {
	name, fields string
	match        func(k string, n int) bool
}

// loadClient is a lean session client: it keeps only the ids it got per
// subscription and signals replies.
type loadClient struct {
	c       *websocket.Conn
	replies chan map[string]any
	mu      sync.Mutex
	got     map[string][]int
	change  chan struct{}
	err     error
}

func (lc *loadClient) read(ctx context.Context) {
	defer close(lc.replies)
	for {
		_, data, err := lc.c.Read(ctx)
		if err != nil {
			return
		}
		var f struct {
			Type   string `json:"type"`
			Sub    string `json:"sub"`
			Events []struct {
				ID string `json:"id"`
			} `json:"events"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			lc.fail(fmt.Errorf("frame %s: %v", data, err))
			return
		}
		switch f.Type {
		case "reply":
			var m map[string]any
			_ = json.Unmarshal(data, &m)
			lc.replies <- m
		case "events":
			lc.mu.Lock()
			for _, e := range f.Events {
				seq, _ := strconv.Atoi(strings.TrimPrefix(e.ID, "load@"))
				lc.got[f.Sub] = append(lc.got[f.Sub], seq)
			}
			lc.mu.Unlock()
			select {
			case lc.change <- struct{}{}:
			default:
			}
		case "welcome":
		default:
			lc.fail(fmt.Errorf("unexpected frame %s", data))
		}
	}
}

func (lc *loadClient) fail(err error) {
	lc.mu.Lock()
	if lc.err == nil {
		lc.err = err
	}
	lc.mu.Unlock()
}

// TestSessionsAtScale: 1,000 concurrent sessions (200 under the race
// detector) with 4 subscriptions each on one herald; every notification
// reaches every matching subscription exactly once, in order.
func TestSessionsAtScale(t *testing.T) {
	sessions := 1000
	if raceEnabled {
		sessions = 200
	}
	const published = 60
	keys := []string{"a", "b", "c", "d"}
	subsOf := func(i int) []loadSub {
		k1, k2 := keys[i%4], keys[(i+1)%4]
		return []loadSub{
			{"all", `"identifier":{}`, func(string, int) bool { return true }},
			{"key", `"identifier":{"k":"` + k1 + `"}`, func(k string, _ int) bool { return k == k1 }},
			{"late", `"identifier":{},"where":"n >= 30"`, func(_ string, n int) bool { return n >= 30 }},
			{"mix", `"identifier":{"k":"` + k2 + `"},"where":"n < 20 OR n = 59"`, func(k string, n int) bool { return k == k2 && (n < 20 || n == 59) }},
		}
	}
	s := startServer(t, loadConfig, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clients := make([]*loadClient, sessions)
	u := "ws" + strings.TrimPrefix(s.URL, "http") + "/api/v1/session"
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	sem := make(chan struct{}, 32)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			dctx, dcancel := context.WithTimeout(ctx, wait)
			defer dcancel()
			c, _, err := websocket.Dial(dctx, u, &websocket.DialOptions{Subprotocols: []string{"herald.v1"}})
			if err != nil {
				errs <- fmt.Errorf("session %d: dial: %v", i, err)
				return
			}
			c.SetReadLimit(16 << 20)
			lc := &loadClient{c: c, replies: make(chan map[string]any, 4), got: map[string][]int{}, change: make(chan struct{}, 1)}
			clients[i] = lc
			go lc.read(ctx)
			for j, sub := range subsOf(i) {
				req := fmt.Sprintf(`{"id":%d,"op":"subscribe","name":"%s","event_type":"load",%s}`, j, sub.name, sub.fields)
				if err := c.Write(dctx, websocket.MessageText, []byte(req)); err != nil {
					errs <- fmt.Errorf("session %d: %v", i, err)
					return
				}
				select {
				case r := <-lc.replies:
					if r["ok"] != true {
						errs <- fmt.Errorf("session %d: subscribe %s: %v", i, sub.name, r)
						return
					}
				case <-dctx.Done():
					errs <- fmt.Errorf("session %d: no reply to subscribe %s", i, sub.name)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, lc := range clients {
			_ = lc.c.CloseNow()
		}
	})

	start := time.Now()
	for n := range published {
		s.notify(t, fmt.Sprintf(`{"event_type":"load","identifier":{"k":"%s","n":%d}}`, keys[n%4], n))
	}
	deliveries := 0
	deadline := time.After(2 * time.Minute)
	for i, lc := range clients {
		want := map[string][]int{}
		for _, sub := range subsOf(i) {
			want[sub.name] = []int{}
			for n := range published {
				if sub.match(keys[n%4], n) {
					want[sub.name] = append(want[sub.name], n+1)
				}
			}
		}
		for {
			lc.mu.Lock()
			done, got, err := true, fmt.Sprint(lc.got), lc.err
			for name, ids := range want {
				if len(lc.got[name]) < len(ids) {
					done = false
				}
			}
			lc.mu.Unlock()
			if err != nil {
				t.Fatalf("session %d: %v", i, err)
			}
			if done {
				if got != fmt.Sprint(want) {
					t.Fatalf("session %d got\n%s\nwant\n%s", i, got, fmt.Sprint(want))
				}
				for _, ids := range want {
					deliveries += len(ids)
				}
				break
			}
			select {
			case <-lc.change:
			case <-deadline:
				t.Fatalf("session %d: got %s, want %s", i, got, fmt.Sprint(want))
			}
		}
	}
	t.Logf("%d sessions × 4 subscriptions: %d deliveries of %d notifications, exact and in order, in %v",
		sessions, deliveries, published, time.Since(start).Round(time.Millisecond))
}
