package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/internal/testkit"
)

// TestFaultOutageOutlastsReconnectBurst stops an external server for
// longer than the client library's reconnection burst (5 attempts, as
// max_reconnect_attempts defaults to, 100 ms apart to keep the test
// short; handlers' TestOutage runs the real 2 s for 30 s) while
// publishers and watchers run on two engines, and checks that the
// engines re-dial until the server is back and that every acknowledged
// notification is stored and reaches every matching watcher exactly
// once, in order, without a gap error.
func TestFaultOutageOutlastsReconnectBurst(t *testing.T) {
	dir, port := t.TempDir(), testkit.FreePort(t)
	s := runServer(t, dir, port, nil)
	burst := func(o *Options) {
		o.MaxReconnects = 5
		o.ReconnectDelay = 100 * time.Millisecond
	}
	faultRunWith(t, fmt.Sprintf("nats://127.0.0.1:%d", port), burst,
		func(pub, other *Engine) {
			stopServer(s)
			// The burst is over when the supervisors re-dial; let them
			// back off a few times.
			testkit.WaitFor(t, wait, "both engines re-dialling after the client library gave up", func() bool {
				return pub.redials.Load() >= 4 && other.redials.Load() >= 4
			})
			for _, e := range []*Engine{pub, other} {
				if err := e.Healthy(); !errors.Is(err, engine.ErrUnavailable) {
					t.Errorf("Healthy while re-dialling = %v, want ErrUnavailable (recovering)", err)
				}
			}
		},
		func() { s = runServer(t, dir, port, nil) })
}

// TestControlLineDropIsRedialled: the embedded server accepts protocol
// lines up to embeddedMaxControlLine; a longer one makes it drop the
// connection, which the client library treats as final, and the engine
// re-dials: the live subscription goes on without a gap error.
func TestControlLineDropIsRedialled(t *testing.T) {
	e := open(t, testOptions(t))
	ctx := context.Background()
	sub, err := e.Subscribe(ctx, engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	mustPublish(t, e, note("mars", "od", "1"))
	expect(t, sub, 1, 1)
	first := e.cur()
	// Twice nats-server's default limit: accepted.
	if err := first.nc.Publish("x."+strings.Repeat("a", 8<<10), nil); err != nil {
		t.Fatal(err)
	}
	if err := first.nc.Flush(); err != nil {
		t.Fatalf("flush after an 8 KiB line: %v", err)
	}
	if e.cur() != first || first.nc.IsClosed() {
		t.Fatal("an 8 KiB protocol line cost the connection")
	}
	// Over the limit: dropped, and re-dialled.
	_ = first.nc.Publish("x."+strings.Repeat("a", embeddedMaxControlLine+1), nil)
	testkit.WaitFor(t, wait, "a new connection", func() bool { return e.cur() != first && e.Ready(ctx) == nil })
	if !first.nc.IsClosed() {
		t.Error("the first connection is still open")
	}
	mustPublish(t, e, note("mars", "od", "2"))
	expect(t, sub, 2, 2)
	if err := sub.Err(); err != nil {
		t.Errorf("subscription ended with %v", err)
	}
}

// TestLongFilterKeepsConnection: a replay whose subject filter is longer
// than an external server's default 4,096-byte control line travels in
// the consumer request's body, not its subject, so the server does not
// drop the connection.
func TestLongFilterKeepsConnection(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	e := openURL(t, s.ClientURL(), nil)
	mustPublish(t, e, note("mars", "od", "1"))
	first := e.cur()
	if got := readAll(t, e, query("mars", strings.Repeat("y", 5000)), everything, 10); len(got) != 0 {
		t.Errorf("replay of a pattern nothing matches: %d records", len(got))
	}
	if got := seqs(readAll(t, e, query("mars", "od", "*"), everything, 10)); len(got) != 1 || got[0] != 1 {
		t.Errorf("replay after it: %v, want [1]", got)
	}
	if e.cur() != first || first.nc.IsClosed() || first.nc.Stats().Reconnects != 0 {
		t.Errorf("the connection was lost (replaced %v, closed %v, reconnects %d)", e.cur() != first, first.nc.IsClosed(), first.nc.Stats().Reconnects)
	}
	if _, _, err := e.Publish(context.Background(), note("mars", strings.Repeat("z", maxSubjectLen))); !errors.Is(err, ErrTooLong) {
		t.Errorf("Publish of an over-long subject = %v, want ErrTooLong", err)
	}
}

// TestInvalidStreamNames: Delete, WipeStream and LastSeq refuse a name no
// JetStream stream can have with ErrInvalidName, without a request to
// the server, and with a message that names the value and the rule but
// neither the server nor the client library.
func TestInvalidStreamNames(t *testing.T) {
	o := testOptions(t)
	e := open(t, o)
	ctx := context.Background()
	spy, err := nats.Connect("", nats.InProcessServer(e.Server()))
	if err != nil {
		t.Fatal(err)
	}
	defer spy.Close()
	requests, err := spy.SubscribeSync("$JS.API.STREAM.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	rule := `must be 1 to 255 bytes of UTF-8 without '.', '*', '>', '/', '\', whitespace or control characters: invalid stream name`
	for _, c := range []struct{ name, shown string }{
		{"", `"" (0 bytes)`},
		{"*", `"*" (1 bytes)`},
		{">", `">" (1 bytes)`},
		{".", `"." (1 bytes)`},
		{"../x", `"../x" (4 bytes)`},
		{"a/b", `"a/b" (3 bytes)`},
		{`a\b`, `"a\\b" (3 bytes)`},
		{"a b", `"a b" (3 bytes)`},
		{"a\tb", `"a\tb" (3 bytes)`},
		{"a\u00a0b", `"a\u00a0b" (4 bytes)`},
		{"a\x00b", `"a\x00b" (3 bytes)`},
		{"a\x7fb", `"a\x7fb" (3 bytes)`},
		{"a\u0085b", `"a\u0085b" (4 bytes)`},
		{"\xff", `"\xff" (1 bytes)`},
		{strings.Repeat("a", 256), `"` + strings.Repeat("a", 64) + `"… (256 bytes)`},
	} {
		for op, call := range map[string]func() error{
			"delete":      func() error { return e.Delete(ctx, c.name, 1) },
			"wipe stream": func() error { return e.WipeStream(ctx, c.name) },
			"last sequence": func() error {
				_, err := e.LastSeq(ctx, c.name)
				return err
			},
		} {
			err := call()
			want := "jetstream: " + op + ": stream name " + c.shown + " " + rule
			if !errors.Is(err, ErrInvalidName) || err.Error() != want {
				t.Errorf("%s(%q) = %v\nwant %s", op, c.name, err, want)
			}
		}
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := requests.Pending(); n != 0 {
		t.Errorf("%d stream API requests reached the server for invalid names", n)
	}
	// Valid JetStream names that are not herald's streams reach the
	// server and are not found.
	for _, name := range []string{"NOPE", "日本", "a-b_c$d"} {
		if err := e.WipeStream(ctx, name); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("WipeStream(%q) = %v, want ErrNotFound", name, err)
		}
	}
	if _, err := requests.NextMsg(wait); err != nil {
		t.Errorf("no stream API request for a valid name: %v", err)
	}
	for _, call := range []func() error{
		func() error { _, _, err := e.Publish(ctx, note("../x", "a")); return err },
		func() error { _, err := e.Subscribe(ctx, query("a b", "*"), engine.SubscribeOptions{}); return err },
		func() error { _, err := e.History(ctx, query("*", "*"), everything); return err },
	} {
		if err := call(); !errors.Is(err, ErrInvalidName) || strings.Contains(err.Error(), o.Embedded.DataDir) {
			t.Errorf("call with an invalid base = %v, want ErrInvalidName without the data directory", err)
		}
	}
}

// TestHealthy: nil while connected; ErrUnrecoverable once the embedded
// server has stopped behind the engine's back (a restart is the only
// way out); ErrClosed after Close.
func TestHealthy(t *testing.T) {
	e := open(t, testOptions(t))
	if err := e.Healthy(); err != nil {
		t.Fatalf("Healthy = %v", err)
	}
	e.Server().Shutdown()
	e.Server().WaitForShutdown()
	if err := e.Healthy(); !errors.Is(err, ErrUnrecoverable) {
		t.Errorf("Healthy with the embedded server stopped = %v, want ErrUnrecoverable", err)
	}
	if err := e.Ready(context.Background()); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Ready with the embedded server stopped = %v, want ErrUnavailable", err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Healthy(); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Healthy after Close = %v, want ErrClosed", err)
	}
}

// TestShutdownDeletesConsumers: Shutdown deletes the live feeds'
// consumers on an external server (rather than leaving them to its
// inactivity threshold), and is idempotent.
func TestShutdownDeletesConsumers(t *testing.T) {
	s := runServer(t, t.TempDir(), testkit.FreePort(t), nil)
	e := openURL(t, s.ClientURL(), nil)
	ctx := context.Background()
	sub, err := e.Subscribe(ctx, engine.Query{Stream: "mars"}, engine.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	consumers := func() int {
		t.Helper()
		st, err := js.Stream(ctx, "MARS")
		if err != nil {
			t.Fatal(err)
		}
		return st.CachedInfo().State.Consumers
	}
	if n := consumers(); n != 1 {
		t.Fatalf("%d consumers before Shutdown, want the live feed's", n)
	}
	sctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := e.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n := consumers(); n != 0 {
		t.Errorf("%d consumers after Shutdown, want 0", n)
	}
	if err := e.Shutdown(sctx); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
	if _, _, err := e.Publish(ctx, note("mars", "od", "1")); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Publish after Shutdown = %v, want ErrClosed", err)
	}
	select {
	case <-sub.Done():
		if !errors.Is(sub.Err(), engine.ErrClosed) {
			t.Errorf("subscription ended with %v, want ErrClosed", sub.Err())
		}
	default:
		t.Error("subscription not ended by Shutdown")
	}
}
