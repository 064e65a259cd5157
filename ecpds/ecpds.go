// Package ecpds is the ECPDS destination plugin (docs/auth.md): a client
// that fetches a user's destination list from the configured ECPDS servers
// with a service account, merges the lists under a partial-outage policy,
// and caches them per user. It owns the HTTP exchange with ECPDS, the
// response parsing and the cache; it makes no authorisation decision and
// writes no HTTP answer (package handlers does both) and it takes its own
// Config, not the YAML structs of package configs.
package ecpds

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/herald-gateway/herald/auth"
)

// ErrUnavailable reports that the destination lists could not be
// fetched under the partial-outage policy (503). It wraps
// auth.ErrUnavailable, the destination checker's.
var ErrUnavailable error = unavailableError{}

// unavailableError is ErrUnavailable.
type unavailableError struct{}

func (unavailableError) Error() string { return "ECPDS service is inaccessible" }

// Unwrap returns auth.ErrUnavailable.
func (unavailableError) Unwrap() error { return auth.ErrUnavailable }

// DeniedError reports that a user's destination list does not hold
// the requested destination (403).
type DeniedError struct {
	// Username is the user refused.
	Username string
	// Destination is the canonical match-key value asked for.
	Destination string
}

// Error is the 403 message.
func (e *DeniedError) Error() string {
	return "User '" + e.Username + "' does not have access to destination '" + e.Destination + "'"
}

// Unwrap returns auth.ErrDenied, the destination checker's denial.
func (e *DeniedError) Unwrap() error { return auth.ErrDenied }

// Fetch outcomes of one ECPDS server, named as the labels of Aviso's
// aviso_ecpds_fetch_total metric (aviso-server's metrics, docs/operations.md).
const (
	FetchSuccess         = "success"
	FetchHTTP401         = "http_401"
	FetchHTTP403         = "http_403"
	FetchHTTP4xx         = "http_4xx"
	FetchHTTP5xx         = "http_5xx"
	FetchInvalidResponse = "invalid_response"
	FetchUnreachable     = "unreachable"
)

// FetchError is the failure of one ECPDS server.
type FetchError struct {
	// Server is the server's URL.
	Server string
	// Outcome is one of the Fetch* labels.
	Outcome string
	// Err is the cause.
	Err error
}

// Error describes the failure without credentials.
func (e *FetchError) Error() string {
	return "ECPDS server " + e.Server + ": " + e.Outcome + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *FetchError) Unwrap() error { return e.Err }

// OutagePolicy decides how the answers of several servers combine when
// some of them fail.
type OutagePolicy uint8

// Partial-outage policies.
const (
	// Strict needs an answer from every server (the default).
	Strict OutagePolicy = iota
	// AnySuccess needs an answer from at least one server.
	AnySuccess
)

// String returns the policy's configuration name ("strict",
// "any_success").
func (p OutagePolicy) String() string {
	if p == AnySuccess {
		return "any_success"
	}
	return "strict"
}

// Config is what a Client needs to know: the service account, the
// servers, the destination match and the cache and timeout limits. Its
// String and LogValue methods redact the password.
type Config struct {
	// Username and Password are the service account's Basic credentials.
	Username, Password string
	// Servers are the absolute URLs of the ECPDS servers (a path is a
	// reverse-proxy prefix); at least one.
	Servers []string
	// MatchKey is the identifier field whose canonical value must be one
	// of the user's destinations.
	MatchKey string
	// TargetField is the destination record field holding the
	// destination's name.
	TargetField string
	// CacheTTL is how long a user's list is cached.
	CacheTTL time.Duration
	// MaxEntries bounds the number of users cached (at least 1 is used).
	MaxEntries int
	// RequestTimeout bounds one fetch; 0 means 30s.
	RequestTimeout time.Duration
	// ConnectTimeout bounds connecting to a server; 0 means 5s.
	ConnectTimeout time.Duration
	// PartialOutagePolicy combines the answers of several servers.
	PartialOutagePolicy OutagePolicy
}

// redacted returns c with the password replaced.
func (c Config) redacted() any {
	type view Config
	v := view(c)
	if v.Password != "" {
		v.Password = "[REDACTED]"
	}
	return v
}

// String formats c with its password redacted.
func (c Config) String() string { return fmt.Sprintf("%+v", c.redacted()) }

// LogValue logs c with its password redacted.
func (c Config) LogValue() slog.Value { return slog.AnyValue(c.redacted()) }

// Options configure a Client.
type Options struct {
	// Config is the plugin's configuration.
	Config Config
	// HTTPClient performs the requests; nil builds one with the connect
	// and request timeouts of Config that follows no redirects.
	HTTPClient *http.Client
	// Now returns the current time (cache expiry); nil means time.Now.
	Now func() time.Time
	// Logger receives per-server failures; nil discards them.
	Logger *slog.Logger
	// Observer is told the cache lookups and the fetches (metrics); nil
	// records nothing.
	Observer Observer
}

// Observer is told what a Client does, for metrics. It must be cheap and
// safe for concurrent use.
type Observer interface {
	// CacheHit and CacheMiss: one lookup of a user's list (a miss also
	// for a caller that joins a fetch in flight).
	CacheHit()
	CacheMiss()
	// Fetched: one fetch of a user's lists from the servers finished,
	// with FetchSuccess, or the outcome of the first server that failed
	// (FetchUnreachable when none says more).
	Fetched(outcome string)
	// ServerFetched: one server answered a fetch with outcome, in d.
	ServerFetched(server, outcome string, d time.Duration)
}

// noObserver records nothing.
type noObserver struct{}

func (noObserver) CacheHit()                                   {}
func (noObserver) CacheMiss()                                  {}
func (noObserver) Fetched(string)                              {}
func (noObserver) ServerFetched(string, string, time.Duration) {}

// Stats are the client's counters.
type Stats struct {
	// Hits and Misses count cache lookups.
	Hits, Misses int64
	// Fetches counts upstream fetches started (one per miss that was not
	// coalesced onto a fetch in flight).
	Fetches int64
	// Entries is the number of users cached.
	Entries int
}

// Client is the ECPDS destination plugin (docs/auth.md): it fetches a user's
// destination list from every configured server with the service account,
// merges the lists under the partial-outage policy, caches them per user
// (TTL, bounded, errors not cached) and coalesces concurrent fetches for
// one user into one. Create it with New; it is safe for concurrent use.
type Client struct {
	cfg     Config
	servers []*url.URL
	client  *http.Client
	now     func() time.Time
	log     *slog.Logger
	obs     Observer
	ttl     time.Duration
	timeout time.Duration
	// ctx bounds the fetches; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	entries map[string]*list.Element // username → element holding *ecpdsEntry
	order   *list.List               // oldest first
	flights map[string]*ecpdsFlight
	stats   Stats
}

type ecpdsEntry struct {
	username string
	dests    map[string]struct{}
	expires  time.Time
}

// ecpdsFlight is one fetch in progress; done is closed when dests/err are
// set.
type ecpdsFlight struct {
	done  chan struct{}
	dests map[string]struct{}
	err   error
}

// New returns a client for a validated configuration.
func New(opts Options) (*Client, error) {
	c := opts.Config
	if len(c.Servers) == 0 {
		return nil, errors.New("ecpds: no servers configured")
	}
	e := &Client{
		cfg:     c,
		client:  opts.HTTPClient,
		now:     opts.Now,
		log:     opts.Logger,
		obs:     opts.Observer,
		ttl:     c.CacheTTL,
		timeout: c.RequestTimeout,
		entries: make(map[string]*list.Element),
		order:   list.New(),
		flights: make(map[string]*ecpdsFlight),
	}
	for _, s := range c.Servers {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("ecpds: server %q is not an absolute URL", s)
		}
		e.servers = append(e.servers, u)
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.obs == nil {
		e.obs = noObserver{}
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.timeout <= 0 {
		e.timeout = 30 * time.Second
	}
	if e.client == nil {
		connect := c.ConnectTimeout
		if connect <= 0 {
			connect = 5 * time.Second
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
		tr.TLSHandshakeTimeout = connect
		e.client = &http.Client{
			Transport: tr,
			Timeout:   e.timeout,
			// A redirect is not part of the ECPDS API; never replay the
			// service account's credentials elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	return e, nil
}

// Close cancels the fetches in flight.
func (e *Client) Close() { e.cancel() }

// MatchKey is the identifier field whose canonical value must be one of
// the user's destinations.
func (e *Client) MatchKey() string { return e.cfg.MatchKey }

// Servers returns the servers' URLs as the metrics and logs name them
// (any password redacted).
func (e *Client) Servers() []string {
	out := make([]string, len(e.servers))
	for i, u := range e.servers {
		out[i] = u.Redacted()
	}
	return out
}

// Stats returns the counters.
func (e *Client) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Entries = len(e.entries)
	return s
}

// Check reports whether username may read destination: nil when the
// destination is in the user's list, a *DeniedError when it is not, an
// error wrapping ErrUnavailable when the lists cannot be fetched,
// or ctx's error when ctx ends first.
func (e *Client) Check(ctx context.Context, username, destination string) error {
	dests, err := e.Destinations(ctx, username)
	if err != nil {
		return err
	}
	if _, ok := dests[destination]; !ok {
		return &DeniedError{Username: username, Destination: destination}
	}
	return nil
}

// Destinations returns the user's destination set, from the cache or
// from the servers. Concurrent calls for one user share one fetch; a
// caller whose ctx ends stops waiting without cancelling the fetch for
// the others. Failures are not cached.
func (e *Client) Destinations(ctx context.Context, username string) (map[string]struct{}, error) {
	now := e.now()
	e.mu.Lock()
	if el, ok := e.entries[username]; ok {
		ent := el.Value.(*ecpdsEntry)
		if now.Before(ent.expires) {
			e.stats.Hits++
			e.mu.Unlock()
			e.obs.CacheHit()
			return ent.dests, nil
		}
		e.order.Remove(el)
		delete(e.entries, username)
	}
	e.stats.Misses++
	fl, inFlight := e.flights[username]
	if !inFlight {
		fl = &ecpdsFlight{done: make(chan struct{})}
		e.flights[username] = fl
		e.stats.Fetches++
		go e.run(username, fl)
	}
	e.mu.Unlock()
	e.obs.CacheMiss()
	select {
	case <-fl.done:
		return fl.dests, fl.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the ECPDS destination list: %w", ctx.Err())
	}
}

// run performs one fetch for a flight and publishes its result.
func (e *Client) run(username string, fl *ecpdsFlight) {
	ctx, cancel := context.WithTimeout(e.ctx, e.timeout)
	defer cancel()
	dests, err := e.fetch(ctx, username)
	e.obs.Fetched(fetchOutcome(err))
	e.mu.Lock()
	delete(e.flights, username)
	if err == nil {
		e.store(username, dests)
	}
	fl.dests, fl.err = dests, err
	e.mu.Unlock()
	close(fl.done)
}

// store caches a user's destinations, evicting the oldest entries beyond
// max_entries. The caller holds e.mu.
func (e *Client) store(username string, dests map[string]struct{}) {
	limit := max(e.cfg.MaxEntries, 1)
	for len(e.entries) >= limit {
		oldest := e.order.Front()
		e.order.Remove(oldest)
		delete(e.entries, oldest.Value.(*ecpdsEntry).username)
	}
	ent := &ecpdsEntry{username: username, dests: dests, expires: e.now().Add(e.ttl)}
	e.entries[username] = e.order.PushBack(ent)
}

// fetch queries every server in parallel and merges the answers under the
// partial-outage policy: strict needs every server, any_success at least
// one; the destinations are the union of the answers.
func (e *Client) fetch(ctx context.Context, username string) (map[string]struct{}, error) {
	type result struct {
		dests []string
		err   error
	}
	results := make([]result, len(e.servers))
	var wg sync.WaitGroup
	for i, s := range e.servers {
		wg.Go(func() {
			start := time.Now()
			d, err := e.fetchServer(ctx, s, username)
			e.obs.ServerFetched(s.Redacted(), fetchOutcome(err), time.Since(start))
			results[i] = result{d, err}
		})
	}
	wg.Wait()
	union := make(map[string]struct{})
	var errs []error
	for _, r := range results {
		if r.err != nil {
			e.log.Warn("ECPDS fetch failed", "username", username, "error", r.err)
			errs = append(errs, r.err)
			continue
		}
		for _, d := range r.dests {
			union[d] = struct{}{}
		}
	}
	failed := len(errs) > 0 && (e.cfg.PartialOutagePolicy != AnySuccess || len(errs) == len(e.servers))
	if failed {
		return nil, fmt.Errorf("%w (%s policy): %w", ErrUnavailable, e.cfg.PartialOutagePolicy, errors.Join(errs...))
	}
	return union, nil
}

// fetchOutcome labels the result of a fetch: FetchSuccess, or the
// outcome of the first server that failed.
func fetchOutcome(err error) string {
	if err == nil {
		return FetchSuccess
	}
	var fe *FetchError
	if errors.As(err, &fe) {
		return fe.Outcome
	}
	return FetchUnreachable
}

// maxECPDSBody bounds a destination-list response.
const maxECPDSBody = 32 << 20

// DestinationListURL returns the destination-list URL of an ECPDS server
// for a user: the server's path (a reverse-proxy prefix, trailing slashes
// ignored) plus /ecpds/v1/destination/list, and ?id=<username>
// percent-encoded.
func DestinationListURL(server *url.URL, username string) *url.URL {
	u := *server
	u.User = nil
	u.Path = strings.TrimRight(u.Path, "/") + "/ecpds/v1/destination/list"
	u.RawPath = ""
	u.RawQuery = url.Values{"id": {username}}.Encode()
	u.Fragment = ""
	return &u
}

// fetchServer fetches and parses one server's destination list.
func (e *Client) fetchServer(ctx context.Context, server *url.URL, username string) ([]string, error) {
	name := server.Redacted()
	fail := func(outcome string, err error) ([]string, error) {
		return nil, &FetchError{Server: name, Outcome: outcome, Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, DestinationListURL(server, username).String(), nil)
	if err != nil {
		return fail(FetchUnreachable, err)
	}
	req.SetBasicAuth(e.cfg.Username, e.cfg.Password)
	req.Header.Set("Accept", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		return fail(FetchUnreachable, errors.New(transportError(err)))
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized:
		return fail(FetchHTTP401, errors.New("the service account was rejected (401)"))
	case code == http.StatusForbidden:
		return fail(FetchHTTP403, errors.New("the service account is not allowed (403)"))
	case code >= 500:
		return fail(FetchHTTP5xx, fmt.Errorf("status %d", code))
	case code < 200 || code > 299:
		return fail(FetchHTTP4xx, fmt.Errorf("status %d", code))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxECPDSBody+1))
	if err != nil {
		return fail(FetchUnreachable, fmt.Errorf("reading the response: %s", transportError(err)))
	}
	if len(body) > maxECPDSBody {
		return fail(FetchInvalidResponse, fmt.Errorf("response larger than %d bytes", maxECPDSBody))
	}
	dests, err := ParseDestinationList(body, e.cfg.TargetField)
	if err != nil {
		return fail(FetchInvalidResponse, err)
	}
	return dests, nil
}

// transportError describes a client error without the request URL (which
// holds the username) and without internals.
func transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return err.Error()
}

// ParseDestinationList parses an ECPDS destination-list response:
// `{"destinationList": [...], "success": "yes"}`. success must be exactly
// "yes"; of the records, only objects with `"active": true` and a string
// value at targetField count. Other records are skipped.
func ParseDestinationList(body []byte, targetField string) ([]string, error) {
	var doc struct {
		Success         *string           `json:"success"`
		DestinationList []json.RawMessage `json:"destinationList"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("not a destination list: %w", err)
	}
	switch {
	case doc.Success == nil:
		return nil, errors.New(`the response has no "success" field`)
	case *doc.Success != "yes":
		return nil, fmt.Errorf(`"success" is %q, not "yes"`, *doc.Success)
	case doc.DestinationList == nil:
		return nil, errors.New(`the response has no "destinationList" array`)
	}
	out := make([]string, 0, len(doc.DestinationList))
	for _, raw := range doc.DestinationList {
		var rec map[string]json.RawMessage
		if json.Unmarshal(raw, &rec) != nil {
			continue
		}
		var active bool
		if a, ok := rec["active"]; !ok || json.Unmarshal(a, &active) != nil || !active {
			continue
		}
		var name string
		if v, ok := rec[targetField]; !ok || len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &name) != nil {
			continue
		}
		out = append(out, name)
	}
	return out, nil
}
