package workers

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-gateway/herald/internal/testkit"
)

func TestPool(t *testing.T) {
	p := New(Config{Workers: 2, Queue: 1, Timeout: time.Second})
	release := make(chan struct{})
	running := make(chan struct{}, 3)
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ { // fill both workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Do(context.Background(), func(ctx context.Context) error {
				running <- struct{}{}
				<-release
				return nil
			})
		}()
	}
	<-running
	<-running
	// the queue takes one more job, which waits for a worker
	wg.Add(1)
	queued := make(chan error, 1)
	go func() {
		defer wg.Done()
		queued <- p.Do(context.Background(), func(ctx context.Context) error { return nil })
	}()
	testkit.WaitFor(t, 5*time.Second, "the queued job admitted", func() bool { return len(p.admit) == 3 })
	if err := p.Do(context.Background(), func(ctx context.Context) error { t.Error("ran a job the pool had no room for"); return nil }); !errors.Is(err, ErrBusy) {
		t.Fatalf("full pool: %v", err)
	}
	close(release)
	wg.Wait()
	if err := <-queued; err != nil {
		t.Errorf("queued job: %v", err)
	}
	if err := p.Do(context.Background(), func(ctx context.Context) error { return nil }); err != nil {
		t.Errorf("after draining: %v", err)
	}
}

func TestDeadlineAndPanic(t *testing.T) {
	p := New(Config{Workers: 1, Timeout: 20 * time.Millisecond})
	err := p.Do(context.Background(), func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: %v", err)
	}
	err = p.Do(context.Background(), func(ctx context.Context) error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Errorf("panic: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Do(ctx, func(ctx context.Context) error { return ctx.Err() }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller: %v", err)
	}
	if d := New(Config{}); d.Timeout() != DefaultTimeout || cap(d.run) < 1 || cap(d.admit) != 2*cap(d.run) {
		t.Errorf("defaults: %v %d %d", d.Timeout(), cap(d.run), cap(d.admit))
	}
}
