// Package workers owns the extension workers: the bounded pool every
// JAQ-backed encode and decode runs on, so that an expensive or
// non-terminating program never runs on (or stalls) the goroutine that
// serves a connection. A pool admits at most Workers running jobs plus
// Queue waiting ones; a job it cannot admit now is refused at once with
// ErrBusy, without being judged, and every admitted job runs under its
// own deadline.
//
// It must not know what a job does: it runs functions, bounds them and
// reports their errors. It keeps no global state; callers share a *Pool.
package workers

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// ErrBusy is returned by Do when the pool cannot take a job now. The job
// was not run, so it was not judged: an ingested payload fails its
// dispatch (HTTP 503 with Retry-After), an emitter keeps its rows and
// retries them.
var ErrBusy = errors.New("extension workers are busy: the payload was not judged, retry later")

// DefaultTimeout is the deadline of one job when Config.Timeout is 0.
const DefaultTimeout = 2 * time.Second

// Config sizes a pool.
type Config struct {
	// Workers is the number of jobs that run at once; 0 means GOMAXPROCS.
	Workers int
	// Queue is the number of admitted jobs that may wait for a worker; 0
	// means as many as Workers, negative means none.
	Queue int
	// Timeout is the deadline of one job, counted from when it starts
	// running; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Pool is a bounded set of extension workers. It is safe for concurrent
// use. The zero value is not usable; call New.
type Pool struct {
	admit   chan struct{} // running + waiting jobs
	run     chan struct{} // running jobs
	timeout time.Duration
}

// New returns a pool sized by cfg.
func New(cfg Config) *Pool {
	w := cfg.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	q := cfg.Queue
	switch {
	case q == 0:
		q = w
	case q < 0:
		q = 0
	}
	t := cfg.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return &Pool{admit: make(chan struct{}, w+q), run: make(chan struct{}, w), timeout: t}
}

// Timeout returns the deadline of one job.
func (p *Pool) Timeout() time.Duration { return p.timeout }

// Do runs fn on a worker goroutine and waits for it. It returns ErrBusy at
// once when the pool is full. fn gets a context that ends at the job's
// deadline or when ctx ends, whichever is first; Do always waits for fn to
// return (fn must honour its context), so fn may write into state the
// caller owns. A panic in fn is returned as an error.
func (p *Pool) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	select {
	case p.admit <- struct{}{}:
	default:
		return ErrBusy
	}
	done := make(chan error, 1)
	go func() {
		select {
		case p.run <- struct{}{}:
		case <-ctx.Done():
			<-p.admit
			done <- ctx.Err()
			return
		}
		jctx, cancel := context.WithTimeout(ctx, p.timeout)
		err := call(jctx, fn)
		cancel()
		// free the slots before answering, so a caller that has its answer
		// finds the pool as it left it
		<-p.run
		<-p.admit
		done <- err
	}()
	return <-done
}

func call(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("extension worker: job panicked: %v", r)
		}
	}()
	return fn(ctx)
}
