package main

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The frames below are what Centrifugo v6.9.1 sent to a client of its
// JSON protocol (captured from the binary): the connect and subscribe
// replies, a refused subscribe, two publications in one frame and a
// ping.
const (
	centConnectReply   = `{"id":1,"connect":{"client":"0758b833-bf27-448c-98b9-79004ae9f633","version":"0.0.0 OSS","ping":2,"pong":true}}`
	centSubscribeReply = `{"id":2,"subscribe":{}}`
	centRefused        = `{"id":3,"error":{"code":103,"message":"permission denied"}}`
	centPub0           = `{"push":{"channel":"bench:fanout","pub":{"data":{"n":0}}}}`
	centPub1           = `{"push":{"channel":"bench:fanout","pub":{"data":{"n":1}}}}`
	centTwoPubs        = centPub0 + "\n" + centPub1
)

// TestCentCommands checks the client's commands byte for byte.
func TestCentCommands(t *testing.T) {
	if got, want := string(centConnect()), `{"id":1,"connect":{"name":"fanout"}}`; got != want {
		t.Errorf("connect = %s, want %s", got, want)
	}
	if got, want := string(centSubscribe("bench:fanout")), `{"id":2,"subscribe":{"channel":"bench:fanout"}}`; got != want {
		t.Errorf("subscribe = %s, want %s", got, want)
	}
	if got, want := string(centSubscribe(`a"b`)), `{"id":2,"subscribe":{"channel":"a\"b"}}`; got != want {
		t.Errorf("subscribe with a quote = %s, want %s", got, want)
	}
	if got, want := string(centPong), `{}`; got != want {
		t.Errorf("pong = %s, want %s", got, want)
	}
	if got, want := string(centPublishBody("bench:fanout", []byte(`{"n":3}`))), `{"channel":"bench:fanout","data":{"n":3}}`; got != want {
		t.Errorf("publish body = %s, want %s", got, want)
	}
}

// TestScanCentFrame classifies the server's frames exactly.
func TestScanCentFrame(t *testing.T) {
	disconnect := `{"push":{"disconnect":{"code":3008,"reason":"slow"}}}`
	unsub := `{"push":{"channel":"bench:fanout","unsubscribe":{"code":2000}}}`
	for _, tc := range []struct {
		name  string
		frame string
		want  centFrame
		pubs  []string // the messages handed to the pub callback
	}{
		{"connect reply", centConnectReply, centFrame{replies: []int{1}}, nil},
		{"subscribe reply", centSubscribeReply, centFrame{replies: []int{2}}, nil},
		{"both replies", centConnectReply + "\n" + centSubscribeReply, centFrame{replies: []int{1, 2}}, nil},
		{"refused", centRefused, centFrame{replies: []int{3}, problem: []byte(centRefused)}, nil},
		{"ping", `{}`, centFrame{pings: 1}, nil},
		{"two publications", centTwoPubs, centFrame{pubs: 2}, []string{centPub0, centPub1}},
		{"publication, ping, trailing newline", centPub0 + "\n{}\n", centFrame{pubs: 1, pings: 1}, []string{centPub0}},
		{"disconnect push", disconnect, centFrame{problem: []byte(disconnect)}, nil},
		{"unsubscribe push after a publication", centPub0 + "\n" + unsub, centFrame{pubs: 1, problem: []byte(unsub)}, []string{centPub0}},
		{"join push is neither", `{"push":{"channel":"bench:fanout","join":{"info":{"client":"x"}}}}`, centFrame{}, nil},
		{"a pub member in the data of a join", `{"push":{"channel":"c","join":{"info":{"chan_info":{"pub":1}}}}}`, centFrame{}, nil},
		{"empty", "", centFrame{}, nil},
		{"a push cut short", `{"push":`, centFrame{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pubs []string
			got := scanCentFrame([]byte(tc.frame), func(m []byte) { pubs = append(pubs, string(m)) })
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("scan = %+v (problem %q), want %+v (problem %q)", got, got.problem, tc.want, tc.want.problem)
			}
			if !reflect.DeepEqual(pubs, tc.pubs) {
				t.Errorf("publications = %q, want %q", pubs, tc.pubs)
			}
		})
	}
}

// TestCentMessage puts the payload of a notification in herald's
// CloudEvent and refuses a CloudEvent without the warm-up payload.
func TestCentMessage(t *testing.T) {
	ce := []byte(`{"data":{"identifier":{"class":"od","step":"0"},"payload":{"n":0}},"id":"mars@1","specversion":"1.0"}`)
	got, err := centMessage(ce, `{"n":42,"sent_ns":7}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"data":{"identifier":{"class":"od","step":"0"},"payload":{"n":42,"sent_ns":7}},"id":"mars@1","specversion":"1.0"}`; string(got) != want {
		t.Errorf("message = %s, want %s", got, want)
	}
	if _, err := centMessage([]byte(`{"data":{"payload":{"n":1}}}`), `{"n":2}`); err == nil ||
		!strings.Contains(err.Error(), `no "payload":{"n":0} member`) {
		t.Errorf("a CloudEvent without the warm-up payload: err = %v", err)
	}
}

// TestCentQueueBytes checks the queue raised to hold a measurement.
func TestCentQueueBytes(t *testing.T) {
	if got := centQueueBytes(10, 100); got != 1<<20 {
		t.Errorf("queue for 10 small messages = %d, want Centrifugo's default 1048576", got)
	}
	if got := centQueueBytes(5000, 572); got != 2*5000*700 {
		t.Errorf("queue for 5000 messages of 572 bytes = %d, want %d", got, 2*5000*700)
	}
}

// TestEachSent reads every publish time of a frame in order, skipping a
// member without digits.
func TestEachSent(t *testing.T) {
	var got []int64
	eachSent([]byte(`{"events":[{"data":{"payload":{"n":1,"sent_ns":1700000000123456789}}},{"payload":{"sent_ns":}},{"sent_ns":42}]}`),
		func(ns int64) { got = append(got, ns) })
	if want := []int64{1700000000123456789, 42}; !reflect.DeepEqual(got, want) {
		t.Errorf("sent = %v, want %v", got, want)
	}
}

// TestLatHist checks the percentiles at the bucket resolution: 1 µs
// below 100 ms, 1 ms above.
func TestLatHist(t *testing.T) {
	var h latHist
	if got := h.quantile(0.5); got != 0 {
		t.Errorf("empty p50 = %v, want 0", got)
	}
	for i := 1; i <= 100; i++ {
		h.record(time.Duration(i) * time.Millisecond)
	}
	h.record(-time.Second) // a clock step: counts as 0
	for q, want := range map[float64]time.Duration{0: 0, 0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond} {
		if got := h.quantile(q); got != want {
			t.Errorf("quantile(%g) = %v, want %v", q, got, want)
		}
	}
	if got := h.n.Load(); got != 101 {
		t.Errorf("n = %d, want 101", got)
	}
	if got := time.Duration(h.max.Load()); got != 100*time.Millisecond {
		t.Errorf("max = %v, want 100ms", got)
	}
	var slow latHist
	slow.record(100*time.Millisecond + 1500*time.Microsecond)
	slow.record(10 * time.Minute)
	if got, want := slow.quantile(0.5), 101*time.Millisecond; got != want {
		t.Errorf("p50 above the fine range = %v, want %v (its millisecond bucket)", got, want)
	}
	if got, want := slow.quantile(1), (100+coarseBuckets-1)*time.Millisecond; got != want {
		t.Errorf("p100 beyond the last bucket = %v, want %v", got, want)
	}
	if got := time.Duration(slow.max.Load()); got != 10*time.Minute {
		t.Errorf("max = %v, want 10m", got)
	}
}

// TestPhaseCheck names the subscribers that did not receive exactly
// what each was to receive.
func TestPhaseCheck(t *testing.T) {
	ph := newPhase(3, 2)
	ph.add(0, 2, 1)
	ph.add(1, 1, 1)
	ph.add(2, 3, 1)
	err := ph.check(2)
	want := "2 of 3 subscribers did not receive exactly 2 events (subscriber 1 got 1, subscriber 2 got 3) — 6 delivered in all, want 6"
	if err == nil || err.Error() != want {
		t.Errorf("check = %v, want %s", err, want)
	}
	ph = newPhase(2, 1)
	ph.add(0, 1, 1)
	ph.add(1, 1, 1)
	if err := ph.check(1); err != nil {
		t.Errorf("check of a complete phase = %v", err)
	}
}

// TestCloseError reads the status of a close frame.
func TestCloseError(t *testing.T) {
	err := closeError([]byte("\x0b\xc0slow"))
	if want := `closed by the peer with status 3008 "slow": EOF`; err.Error() != want || !errors.Is(err, io.EOF) {
		t.Errorf("close error = %v, want %s wrapping io.EOF", err, want)
	}
	if err := closeError(nil); err.Error() != "closed by the peer without a status: EOF" || !errors.Is(err, io.EOF) {
		t.Errorf("close error without a status = %v", err)
	}
}

// FuzzScanCentFrame checks that any frame scans without a panic, that
// the publications counted are the ones handed to the callback, and
// that every one of them is a publication push.
func FuzzScanCentFrame(f *testing.F) {
	for _, s := range []string{centConnectReply, centSubscribeReply, centRefused, centTwoPubs, "{}", "{}\n{}", `{"id":x}`, `{"push":{"channel":"c`, "\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		n := 0
		got := scanCentFrame(frame, func(m []byte) {
			n++
			if !strings.HasPrefix(string(m), `{"push":`) {
				t.Errorf("publication %q is not a push", m)
			}
		})
		if got.pubs != n {
			t.Errorf("pubs = %d, callback called %d times", got.pubs, n)
		}
	})
}

// FuzzEachSent checks that any frame is read without a panic and that
// at most one time is read per member.
func FuzzEachSent(f *testing.F) {
	for _, s := range []string{`{"sent_ns":1}`, `"sent_ns":`, `"sent_ns":"sent_ns":12`, ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		count := 0
		eachSent(p, func(int64) { count++ })
		if max := strings.Count(string(p), sentMember); count > max {
			t.Errorf("%d times read from %d members", count, max)
		}
	})
}
