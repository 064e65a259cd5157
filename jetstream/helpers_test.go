package jetstream

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/notification"
	"github.com/herald-gateway/herald/topic"
)

// wait bounds every wait of these tests: a deadline, never a delay.
const wait = 30 * time.Second

// testLogWriter forwards log lines to t.Log while the test runs.
type testLogWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// newTestLogWriter returns a testLogWriter that stops writing when the
// test ends.
func newTestLogWriter(t testing.TB) *testLogWriter {
	w := &testLogWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return w
}

// testLogger logs warnings and errors (everything with JSTEST_LOG=debug)
// to the test's log.
func testLogger(t testing.TB) *slog.Logger {
	w := newTestLogWriter(t)
	level := slog.LevelWarn
	if os.Getenv("JSTEST_LOG") == "debug" {
		level = slog.LevelDebug
	}
	var out io.Writer = w
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
}

// testOptions are the options of an embedded test engine: a fresh data
// directory, unlimited history per subject, mars and diss configured.
func testOptions(t testing.TB) Options {
	return Options{
		Embedded: EmbeddedOptions{DataDir: t.TempDir()},
		Defaults: StreamPolicy{MaxMsgsPerSubject: -1},
		Streams: []StreamSpec{
			{Base: "mars", EventType: "mars"},
			{Base: "diss", EventType: "diss"},
		},
		Logger: testLogger(t),
	}
}

// open opens an engine and closes it when the test ends.
func open(t testing.TB, o Options) *Engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	e, err := Open(ctx, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// note builds a notification of base with the given tokens after the
// base.
func note(base string, tokens ...string) *notification.Notification {
	all := append([]string{base}, tokens...)
	return &notification.Notification{
		EventType:   base,
		Subject:     topic.Encode(all),
		Tokens:      all,
		Payload:     []byte(fmt.Sprintf(`{"n":%q}`, strings.Join(tokens, "/"))),
		ContentType: notification.ContentTypeJSON,
	}
}

// query builds a query of base whose pattern is the given tokens after
// the base, "*" being a wildcard.
func query(base string, tokens ...string) engine.Query {
	p := topic.Pattern{topic.Literal(base)}
	for _, v := range tokens {
		if v == "*" {
			p = append(p, topic.Any())
		} else {
			p = append(p, topic.Literal(v))
		}
	}
	return engine.Query{Stream: base, Filter: &notification.Filter{Pattern: p}}
}

// mustPublish publishes and fails the test on error.
func mustPublish(t testing.TB, e *Engine, n *notification.Notification) uint64 {
	t.Helper()
	seq, _, err := e.Publish(context.Background(), n)
	if err != nil {
		t.Fatalf("Publish(%s): %v", n.Subject, err)
	}
	return seq
}

// readAll reads a whole history.
func readAll(t testing.TB, e engine.Engine, q engine.Query, r engine.Range, page int) []*engine.Record {
	t.Helper()
	h, err := e.History(context.Background(), q, r)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	defer h.Close()
	var out []*engine.Record
	for {
		recs, done, err := h.Next(context.Background(), page)
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, recs...)
		if done {
			return out
		}
	}
}

// seqs returns the sequences of records.
func seqs(recs []*engine.Record) []uint64 {
	out := make([]uint64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// everything is a range over a whole stream.
var everything = engine.Range{ToSeq: ^uint64(0)}

// logRecord is one captured log line.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// logCapture is a slog handler keeping every record.
type logCapture struct {
	mu   *sync.Mutex
	recs *[]logRecord
	with []slog.Attr
}

func newLogCapture() (*slog.Logger, func() []logRecord) {
	c := &logCapture{mu: &sync.Mutex{}, recs: &[]logRecord{}}
	return slog.New(c), func() []logRecord {
		c.mu.Lock()
		defer c.mu.Unlock()
		return append([]logRecord(nil), *c.recs...)
	}
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range c.with {
		rec.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	c.mu.Lock()
	*c.recs = append(*c.recs, rec)
	c.mu.Unlock()
	return nil
}

func (c *logCapture) WithAttrs(as []slog.Attr) slog.Handler {
	return &logCapture{mu: c.mu, recs: c.recs, with: append(append([]slog.Attr(nil), c.with...), as...)}
}

func (c *logCapture) WithGroup(string) slog.Handler { return c }
