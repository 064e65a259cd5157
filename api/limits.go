package api

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"strings"
	"sync"
	"time"

	"github.com/herald-gateway/herald/auth"
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
	// AddressHeader names a header set by a trusted proxy that lists the
	// client address (X-Forwarded-For, or X-Real-IP with one address);
	// empty means the TCP peer address.
	AddressHeader string
	// TrustedProxies are the proxies whose AddressHeader is believed: the
	// header is read only when the TCP peer is in one of them, and its
	// right-most address outside them is the client's. Without any, the
	// header is ignored.
	TrustedProxies []netip.Prefix
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
	opts.TrustedProxies = append([]netip.Prefix(nil), opts.TrustedProxies...)
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

// ClientAddress returns the address a request is counted under. It is
// the host of the TCP peer, unless the peer is a trusted proxy and the
// configured header names an address: then it is the right-most address
// of the header (all its lines, in order) that is not itself a trusted
// proxy, or the left-most one when every address is trusted. Entries to
// the left of it were written by the client, who may write anything, so
// they are never used. A header entry that is not an IP address stops the
// walk: the peer counts.
func (l *StreamLimiter) ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap().WithZone("")
	opts := l.options()
	if opts.AddressHeader == "" || !trusted(opts.TrustedProxies, peer) {
		return peer.String()
	}
	var entries []string
	for _, v := range r.Header.Values(opts.AddressHeader) {
		entries = append(entries, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(entries) - 1; i >= 0; i-- {
		a, ok := headerAddress(entries[i])
		if !ok {
			return peer.String()
		}
		client = a
		if !trusted(opts.TrustedProxies, a) {
			break
		}
	}
	return client.String()
}

// trusted reports whether a is in one of the prefixes.
func trusted(proxies []netip.Prefix, a netip.Addr) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// headerAddress reads one entry of a forwarding header: an IP address,
// optionally with a port (192.0.2.1:4711, [2001:db8::1]:4711) or in
// brackets, as proxies write them.
func headerAddress(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
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
		if id := auth.IdentityFrom(r.Context()); id != nil {
			user = id.Username
		}
		addr := l.ClientAddress(r)
		msg, ok := l.acquire(user, addr)
		if !ok {
			auth.WriteTooManyStreams(w, r, msg, StreamLimitRetryAfter)
			return
		}
		defer l.release(user, addr)
		next.ServeHTTP(w, r)
	})
}
