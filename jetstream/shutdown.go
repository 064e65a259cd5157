package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// maxTidyConcurrency bounds the consumer deletions Shutdown runs at once.
const maxTidyConcurrency = 64

// Close ends every subscription with engine.ErrClosed, stops the live
// feeds, deletes their consumers, closes the connection and shuts the
// embedded server down: Shutdown without a deadline. Later calls of
// every method fail with engine.ErrClosed. It is idempotent and returns
// nil.
func (e *Engine) Close() error {
	_ = e.Shutdown(context.Background())
	return nil
}

// Shutdown is Close within ctx's deadline. In order: every subscription
// ends with engine.ErrClosed and later calls fail with it; the
// supervisor, the live feeds and the background work stop; the live
// feeds' consumers (and the replay consumers closed meanwhile) are
// deleted, all at once, so that an external server does not keep them
// until its inactivity threshold and the embedded server has no pending
// pull request to signal (nats-server otherwise pauses 50 ms in its
// shutdown for them); the connection closes; the embedded server shuts
// down (it stops its streams, whose file stores have written every
// acknowledged notification to the operating system before it was
// acknowledged, so stopping early loses nothing acknowledged).
//
// When ctx ends first, Shutdown returns an error wrapping ctx.Err() and
// leaves what is still running to finish in the background (the
// embedded server's shutdown included); the engine is closed all the
// same. Calls after the first return nil at once.
func (e *Engine) Shutdown(ctx context.Context) error {
	if e.closed.Swap(true) {
		return nil
	}
	e.hub.Close()
	return e.stop(ctx)
}

// abort releases what a failed Open had started.
func (e *Engine) abort() {
	e.closed.Store(true)
	_ = e.stop(context.Background())
}

// stop is Shutdown's work once the engine is marked closed.
func (e *Engine) stop(ctx context.Context) error {
	e.mu.Lock()
	e.stopping = true
	var feeds []*feed
	for _, st := range e.streams {
		if f := st.feed.Load(); f != nil {
			feeds = append(feeds, f)
		}
	}
	e.mu.Unlock()
	e.cancel()
	for _, f := range feeds {
		f.stop()
	}
	var errs []error
	if err := within(ctx, e.wg.Wait); err != nil {
		errs = append(errs, fmt.Errorf("live feeds and background work still stopping: %w", err))
	}
	e.tidy(ctx)
	if l := e.cur(); l != nil {
		l.closeExtra()
		l.nc.Close()
	}
	if e.srv != nil {
		if err := within(ctx, func() {
			e.srv.Shutdown()
			e.srv.WaitForShutdown()
			// Only now may another herald open the data directory.
			_ = e.lock.Close()
		}); err != nil {
			errs = append(errs, fmt.Errorf("the %s is still shutting down: %w", e.where, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("jetstream: shutdown: %w", err)
	}
	return nil
}

// tidy runs the tidy-ups queued since Shutdown began (consumer
// deletions), concurrently, within the request timeout and ctx; it skips
// them when the connection is down (the server expires the consumers).
func (e *Engine) tidy(ctx context.Context) {
	e.mu.Lock()
	fns := e.leftover
	e.leftover = nil
	e.mu.Unlock()
	l := e.cur()
	if len(fns) == 0 || l == nil || !l.nc.IsConnected() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.RequestTimeout)
	defer cancel()
	sem := make(chan struct{}, maxTidyConcurrency)
	var wg sync.WaitGroup
	for _, fn := range fns {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(ctx)
		}()
	}
	wg.Wait()
}

// within runs fn and waits for it to return or for ctx to end; in the
// latter case fn goes on in the background and within returns ctx.Err().
func within(ctx context.Context, fn func()) error {
	if ctx.Done() == nil {
		fn()
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
