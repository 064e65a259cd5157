package stream

import (
	"context"
	"sync"
)

// Set tracks running streams so that a transport can end them together
// (a shutdown) or by event type (a reload that changed or removed it),
// each with its reason. It is safe for concurrent use; the zero value is
// ready.
type Set struct {
	mu      sync.Mutex
	members map[*member]struct{}
	// closed, once set, ends every stream that joins afterwards.
	closed *Stop
}

// member is one running stream.
type member struct {
	eventType string
	cancel    context.CancelCauseFunc
}

// Join registers a stream of eventType and returns its context, derived
// from ctx and cancelled with a *Stop cause when the set ends it, and the
// function that unregisters it (call it when the stream is over). After
// EndAll, Join returns a context already ended with that Stop.
func (s *Set) Join(ctx context.Context, eventType string) (context.Context, func()) {
	ctx, _, leave := s.JoinCancel(ctx, eventType)
	return ctx, leave
}

// JoinCancel is Join that also returns the context's cancel function, so
// that a stream its owner may also end (a session's unsubscribe) needs no
// context of its own below the set's: the first cause, the set's or the
// owner's, is the context's cause.
func (s *Set) JoinCancel(ctx context.Context, eventType string) (context.Context, context.CancelCauseFunc, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	m := &member{eventType: eventType, cancel: cancel}
	s.mu.Lock()
	if s.closed != nil {
		stop := s.closed
		s.mu.Unlock()
		cancel(stop)
		return ctx, cancel, func() {}
	}
	if s.members == nil {
		s.members = map[*member]struct{}{}
	}
	s.members[m] = struct{}{}
	s.mu.Unlock()
	return ctx, cancel, func() {
		s.mu.Lock()
		delete(s.members, m)
		s.mu.Unlock()
		cancel(nil)
	}
}

// EndAll ends every running stream, and every stream that joins later,
// with stop.
func (s *Set) EndAll(stop *Stop) {
	s.mu.Lock()
	if s.closed == nil {
		s.closed = stop
	}
	ms := s.members
	s.members = nil
	s.mu.Unlock()
	for m := range ms {
		m.cancel(stop)
	}
}

// End ends the running streams of one event type with stop and returns
// how many there were.
func (s *Set) End(eventType string, stop *Stop) int {
	s.mu.Lock()
	var ended []*member
	for m := range s.members {
		if m.eventType == eventType {
			ended = append(ended, m)
			delete(s.members, m)
		}
	}
	s.mu.Unlock()
	for _, m := range ended {
		m.cancel(stop)
	}
	return len(ended)
}

// Len returns the number of running streams.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.members)
}
