package stream_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/herald-gateway/herald/engine"
	"github.com/herald-gateway/herald/stream"
)

// grow makes the calling goroutine's stack grow to 8 kB, the size the
// runtime's adaptive start gives herald's goroutines (the average stack in
// use, rounded up to a power of two), before it returns.
//
//go:noinline
func grow(n int) byte {
	var buf [512]byte
	buf[n%512] = byte(n)
	if n == 0 {
		return buf[0]
	}
	return grow(n-1) + buf[n%512]
}

// idleSink opens and then sees nothing.
type idleSink struct{ opened chan struct{} }

func (s *idleSink) Open(stream.Opening) error                 { close(s.opened); return nil }
func (s *idleSink) Record(*engine.Record, stream.Phase) error { return nil }
func (s *idleSink) HistoryDone() error                        { return nil }
func (s *idleSink) Heartbeat() error                          { return nil }
func (s *idleSink) Flush() error                              { return nil }

// BenchmarkIdleWatchStack measures the goroutine stack that one idle live
// watch holds after garbage collections, against a bare goroutine that
// grew the same way and waits on a channel. A stream waits most of its
// life, and the collector halves a stack only while less than a quarter
// of it is in use, so the depth of the waiting loop decides whether each
// watcher keeps 8 kB or 4 kB.
func BenchmarkIdleWatchStack(b *testing.B) {
	const n = 2000
	measure := func(start func(ctx context.Context, wg *sync.WaitGroup)) float64 {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for range n {
			start(ctx, &wg)
		}
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		cancel()
		wg.Wait()
		return float64(m1.StackInuse-m0.StackInuse) / n
	}
	e := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 10})
	b.Cleanup(func() { _ = e.Close() })
	var watch, bare float64
	for b.Loop() {
		watch = measure(func(ctx context.Context, wg *sync.WaitGroup) {
			s := &idleSink{opened: make(chan struct{})}
			wg.Add(1)
			go func() {
				defer wg.Done()
				grow(6)
				stream.Run(ctx, e, &stream.Spec{Query: all, Mode: stream.Watch, QueueSize: 16}, s)
			}()
			<-s.opened
		})
		bare = measure(func(ctx context.Context, wg *sync.WaitGroup) {
			ready := make(chan struct{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				grow(6)
				close(ready)
				<-ctx.Done()
			}()
			<-ready
		})
	}
	b.ReportMetric(watch, "stack-B/watch")
	b.ReportMetric(bare, "stack-B/bare")
	b.ReportMetric(watch/bare, "watch/bare")
}

// panicSink panics when the stream opens.
type panicSink struct{ idleSink }

func (s *panicSink) Open(stream.Opening) error { panic("open failed in the sink") }

// A panic in the stream's setup, which runs in a goroutine of its own,
// reaches Run's caller as a panic with the same value, where the server's
// recovery handles it, instead of ending the process.
func TestSetupPanicReachesRunsCaller(t *testing.T) {
	e := engine.NewMemory(engine.MemoryOptions{MaxHistoryPerTopic: 10, MaxTopics: 10})
	t.Cleanup(func() { _ = e.Close() })
	got := func() (v any) {
		defer func() { v = recover() }()
		stream.Run(context.Background(), e, &stream.Spec{Query: all, Mode: stream.Watch}, &panicSink{})
		return nil
	}()
	if got != "open failed in the sink" {
		t.Fatalf("recovered %v, want the sink's panic value", got)
	}
}
