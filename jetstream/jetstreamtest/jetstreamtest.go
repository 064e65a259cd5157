// Package jetstreamtest opens JetStream engines on embedded nats-servers
// for the tests of other packages (handlers, main): each call starts a
// fresh server on a fresh data directory and closes it when the test
// ends, so that end-to-end tests can run on both engines. It owns no
// behaviour of its own and is meant to be imported from _test.go files
// only.
package jetstreamtest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"herald/jetstream"
)

// Open starts an embedded JetStream engine in t.TempDir() with the given
// streams, keeping every notification (allow_duplicates) unless mod says
// otherwise, and closes it when the test ends. mod, when not nil, may
// adjust the options before the engine opens.
func Open(t testing.TB, streams []jetstream.StreamSpec, mod func(*jetstream.Options)) *jetstream.Engine {
	t.Helper()
	o := jetstream.Options{
		Embedded: jetstream.EmbeddedOptions{DataDir: t.TempDir()},
		Defaults: jetstream.StreamPolicy{MaxMsgsPerSubject: -1},
		Streams:  streams,
		Logger:   slog.New(slog.DiscardHandler),
	}
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := jetstream.Open(ctx, o)
	if err != nil {
		t.Fatalf("jetstreamtest: open an embedded engine: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}
