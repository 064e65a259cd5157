package api

import (
	"fmt"
	"net"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"time"

	"herald/handlers"
)

// StreamLimitRetryAfter is the Retry-After of a 429 for too many streams.
const StreamLimitRetryAfter = 10 * time.Second

// StreamLimitOptions configure the concurrent-stream limits.
type StreamLimitOptions struct {
	// PerUser bounds the open streams of one authenticated user; 0 means
	// no limit.
	PerUser int
	// PerClient bounds the open streams of one client address; 0 means no
	// limit.
	PerClient int
	// AddressHeader names a header set by a trusted proxy whose first
	// address is the client's (X-Forwarded-For, X-Real-IP); empty means
	// the TCP peer address.
	AddressHeader string
}

// StreamLimiter counts the open watch and replay streams per
// authenticated user and per client address and refuses a stream beyond
// either limit with 429 and Retry-After. Create it with NewStreamLimiter;
// Configure changes its limits while it counts (a config reload).
type StreamLimiter struct {
	mu      sync.Mutex
	opts    StreamLimitOptions
	users   map[string]int
	clients map[string]int
}

// NewStreamLimiter returns a limiter; with both limits 0 its middleware
// counts streams and refuses none.
func NewStreamLimiter(opts StreamLimitOptions) *StreamLimiter {
	l := &StreamLimiter{users: map[string]int{}, clients: map[string]int{}}
	l.Configure(opts)
	return l
}

// Configure replaces the limits; the streams already open stay counted
// (a stream over a lowered limit is not closed, but no new one opens).
func (l *StreamLimiter) Configure(opts StreamLimitOptions) {
	opts.AddressHeader = textproto.CanonicalMIMEHeaderKey(opts.AddressHeader)
	l.mu.Lock()
	l.opts = opts
	l.mu.Unlock()
}

// options returns the limits in force.
func (l *StreamLimiter) options() StreamLimitOptions {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.opts
}

// Open returns the numbers of streams currently counted for a user and
// for a client address.
func (l *StreamLimiter) Open(username, address string) (user, client int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.users[username], l.clients[address]
}

// ClientAddress returns the address a request is counted under: the
// first address of the configured header when it holds one, else the
// host of the TCP peer.
func (l *StreamLimiter) ClientAddress(r *http.Request) string {
	if h := l.options().AddressHeader; h != "" {
		if v := r.Header.Get(h); v != "" {
			first, _, _ := strings.Cut(v, ",")
			first = strings.TrimSpace(first)
			if ip := net.ParseIP(first); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// acquire counts a stream; it returns the refusal message when a limit
// is reached.
func (l *StreamLimiter) acquire(user, addr string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if user != "" && l.opts.PerUser > 0 && l.users[user] >= l.opts.PerUser {
		return fmt.Sprintf("user '%s' already has %d open streams, the limit; close one or retry later", user, l.opts.PerUser), false
	}
	if l.opts.PerClient > 0 && l.clients[addr] >= l.opts.PerClient {
		return fmt.Sprintf("client address %s already has %d open streams, the limit; close one or retry later", addr, l.opts.PerClient), false
	}
	if user != "" {
		l.users[user]++
	}
	l.clients[addr]++
	return "", true
}

func (l *StreamLimiter) release(user, addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if user != "" {
		if l.users[user]--; l.users[user] <= 0 {
			delete(l.users, user)
		}
	}
	if l.clients[addr]--; l.clients[addr] <= 0 {
		delete(l.clients, addr)
	}
}

// Middleware counts the request as an open stream for as long as the
// handler runs. It must run after authentication, so that the user is
// known.
func (l *StreamLimiter) Middleware(next http.Handler) http.Handler {
	if l == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var user string
		if id := handlers.IdentityFrom(r.Context()); id != nil {
			user = id.Username
		}
		addr := l.ClientAddress(r)
		msg, ok := l.acquire(user, addr)
		if !ok {
			handlers.WriteTooManyStreams(w, r, msg, StreamLimitRetryAfter)
			return
		}
		defer l.release(user, addr)
		next.ServeHTTP(w, r)
	})
}
