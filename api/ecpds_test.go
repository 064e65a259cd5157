package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/internal/testkit"
)

// clock is a settable clock for the ECPDS cache.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fakeECPDS is a fake ECPDS server: it checks the service account and
// the path, records the queries, and answers from per-user lists.
type fakeECPDS struct {
	ts    *httptest.Server
	calls atomic.Int64
	mu    sync.Mutex
	// lists maps a username to the response body; absent users get an
	// empty list.
	lists   map[string]string
	status  int           // when not 0, answer this status instead
	gate    chan struct{} // when not nil, answers wait for it
	queries []string
}

func newFakeECPDS(t *testing.T) *fakeECPDS {
	t.Helper()
	f := &fakeECPDS{lists: map[string]string{}}
	f.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		u, p, ok := r.BasicAuth()
		if r.Method != http.MethodGet || r.URL.Path != "/prefix/ecpds/v1/destination/list" || !ok || u != "svc" || p != "s3cret pass" {
			http.Error(w, "bad request "+r.URL.String(), http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		f.queries = append(f.queries, r.URL.RawQuery)
		gate, status := f.gate, f.status
		body, ok := f.lists[r.URL.Query().Get("id")]
		f.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		if !ok {
			body = `{"destinationList":[],"success":"yes"}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(f.ts.Close)
	return f
}

func (f *fakeECPDS) set(user, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists[user] = body
}

func (f *fakeECPDS) setStatus(code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status = code
}

func (f *fakeECPDS) lastQuery() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queries) == 0 {
		return ""
	}
	return f.queries[len(f.queries)-1]
}

// destinations renders an ECPDS answer with active records.
func destinations(names ...string) string {
	recs := make([]string, len(names))
	for i, n := range names {
		recs[i] = fmt.Sprintf(`{"name":%q,"type":16,"active":true}`, n)
	}
	return `{"destinationList":[` + strings.Join(recs, ",") + `],"success":"yes"}`
}

// ecpdsConfig is a trusted_proxy config with the ecpds plugin on stream
// "diss" and a stream "plain" without it.
func ecpdsConfig(policy string, maxEntries int, servers ...string) string {
	return fmt.Sprintf(`application: {host: 127.0.0.1, port: 8000}
notification_backend: {kind: in_memory}
watch_endpoint: {replay_batch_delay_ms: 0}
auth: {enabled: true, mode: trusted_proxy, jwt_secret: %s, admin_roles: {ecmwf: [admin]}}
ecpds:
  username: svc
  password: "s3cret pass"
  servers: [%s]
  match_key: destination
  partial_outage_policy: %s
  cache_ttl_seconds: 300
  max_entries: %d
  request_timeout_seconds: 5
notification_schema:
  diss:
    topic: {base: diss, key_order: [destination, step]}
    identifier:
      destination: {type: StringHandler, required: true}
      step: {type: IntHandler, required: false}
    auth: {required: true, write_roles: {ecmwf: [writer]}, plugins: [ecpds]}
  plain:
    topic: {base: plain, key_order: [destination]}
    identifier:
      destination: {type: StringHandler, required: true}
    auth: {required: true}
`, testSecret, strings.Join(servers, ", "), policy, maxEntries)
}

func watchDiss(dest string) string {
	return `{"event_type":"diss","identifier":{"destination":"` + dest + `"}}`
}

// TestECPDSDecisions covers allow, deny, inactive records, an empty
// list, a wildcard match key, the order of checks, the admin bypass, a
// stream without the plugin, and notify never calling ECPDS.
func TestECPDSDecisions(t *testing.T) {
	f := newFakeECPDS(t)
	f.set("rita", `{"destinationList":[{"name":"CIP","active":true},{"name":"FOO","active":true},{"name":"BAR","active":false},{"id":"X","active":true},{"name":7,"active":true}],"success":"yes"}`)
	s := start(t, setup{yaml: ecpdsConfig("strict", 100, f.ts.URL+"/prefix/")})
	rita := bearer(hs256(t, user("rita", "ecmwf", "reader")))
	nobody := bearer(hs256(t, user("nina", "ecmwf", "reader")))
	admin := bearer(hs256(t, user("ada", "ecmwf", "admin")))
	writer := bearer(hs256(t, user("walt", "ecmwf", "writer")))

	type check struct {
		name, path, body string
		hdr              http.Header
		status           int
		msg              string
		calls            int64 // upstream calls after the request
	}
	for _, c := range []check{
		{"unauthenticated is refused before ECPDS", "/api/v1/watch", watchDiss("CIP"), nil, 401, auth.MsgStreamAuthRequired, 0},
		{"notify as admin never calls ECPDS", "/api/v1/notification", `{"event_type":"diss","identifier":{"destination":"CIP","step":1}}`, admin, 200, "", 0},
		{"notify as writer never calls ECPDS", "/api/v1/notification", `{"event_type":"diss","identifier":{"destination":"ZZZ","step":1}}`, writer, 200, "", 0},
		{"admin bypass", "/api/v1/watch", watchDiss("ANY"), admin, 200, "", 0},
		{"stream without the plugin", "/api/v1/watch", `{"event_type":"plain","identifier":{"destination":"ANY"}}`, rita, 200, "", 0},
		{"missing match key is an identifier error first", "/api/v1/watch", `{"event_type":"diss","identifier":{}}`, rita, 400, "", 0},
		{"wildcard match key", "/api/v1/watch", watchDiss("*"), rita, 403, "Required field 'destination' not found in request identifiers", 0},
		{"allowed destination", "/api/v1/watch", watchDiss("CIP"), rita, 200, "", 1},
		{"allowed on replay, from the cache", "/api/v1/replay", `{"event_type":"diss","identifier":{"destination":"FOO"},"from_id":"0"}`, rita, 200, "", 1},
		{"inactive destination", "/api/v1/watch", watchDiss("BAR"), rita, 403, "User 'rita' does not have access to destination 'BAR'", 1},
		{"record without target field", "/api/v1/watch", watchDiss("X"), rita, 403, "User 'rita' does not have access to destination 'X'", 1},
		{"unknown destination on replay", "/api/v1/replay", `{"event_type":"diss","identifier":{"destination":"cip"},"from_id":"0"}`, rita, 403, "User 'rita' does not have access to destination 'cip'", 1},
		{"empty list", "/api/v1/watch", watchDiss("CIP"), nobody, 403, "User 'nina' does not have access to destination 'CIP'", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.call(t, http.MethodPost, c.path, c.body, c.hdr)
			switch {
			case c.status == 401:
				wantAuthError(t, r, 401, "UNAUTHORIZED", "unauthorized", c.msg, []string{"Bearer"})
			case c.status == 403:
				wantAuthError(t, r, 403, "FORBIDDEN", "forbidden", c.msg, nil)
			case r.Status != c.status:
				t.Fatalf("got %d %s", r.Status, r.Raw)
			}
			if got := f.calls.Load(); got != c.calls {
				t.Fatalf("%d upstream calls, want %d", got, c.calls)
			}
		})
	}
	if st := s.ECPDS.Stats(); st.Fetches != 2 || st.Entries != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// TestECPDSOutages covers one server down under each policy, all down,
// invalid answers, the union of lists, and errors not being cached.
func TestECPDSOutages(t *testing.T) {
	unavailable := func(t *testing.T, r reply) {
		t.Helper()
		wantAuthError(t, r, 503, "SERVICE_UNAVAILABLE", "service_unavailable", auth.MsgECPDSUnavailable, nil)
		if r.Header.Get("Retry-After") != "5" {
			t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
		}
	}
	rita := bearer(hs256(t, user("rita", "ecmwf", "reader")))
	tests := []struct {
		name    string
		policy  string
		a, b    func(f *fakeECPDS) // configure the two servers
		bDown   bool               // server b is not listening
		dest    string
		wantOK  bool
		callsAB [2]int64
	}{
		{"strict, both answer, union", "strict", func(f *fakeECPDS) { f.set("rita", destinations("CIP")) }, func(f *fakeECPDS) { f.set("rita", destinations("FOO")) }, false, "FOO", true, [2]int64{1, 1}},
		{"strict, one server 500", "strict", func(f *fakeECPDS) { f.set("rita", destinations("CIP")) }, func(f *fakeECPDS) { f.setStatus(500) }, false, "CIP", false, [2]int64{1, 1}},
		{"strict, one server unreachable", "strict", func(f *fakeECPDS) { f.set("rita", destinations("CIP")) }, nil, true, "CIP", false, [2]int64{1, 0}},
		{"strict, one server says success no", "strict", func(f *fakeECPDS) { f.set("rita", destinations("CIP")) }, func(f *fakeECPDS) { f.set("rita", `{"destinationList":[],"success":"no"}`) }, false, "CIP", false, [2]int64{1, 1}},
		{"any_success, one server 500", "any_success", func(f *fakeECPDS) { f.set("rita", destinations("CIP")) }, func(f *fakeECPDS) { f.setStatus(500) }, false, "CIP", true, [2]int64{1, 1}},
		{"any_success, one server unreachable", "any_success", func(f *fakeECPDS) { f.set("rita", destinations("CIP")) }, nil, true, "CIP", true, [2]int64{1, 0}},
		{"any_success, one server 401", "any_success", func(f *fakeECPDS) { f.setStatus(401) }, func(f *fakeECPDS) { f.set("rita", destinations("CIP")) }, false, "CIP", true, [2]int64{1, 1}},
		{"any_success, union", "any_success", func(f *fakeECPDS) { f.set("rita", destinations("CIP")) }, func(f *fakeECPDS) { f.set("rita", destinations("FOO")) }, false, "FOO", true, [2]int64{1, 1}},
		{"any_success, all fail", "any_success", func(f *fakeECPDS) { f.set("rita", "not json") }, nil, true, "CIP", false, [2]int64{1, 0}},
		{"any_success, the answering server denies", "any_success", func(f *fakeECPDS) { f.set("rita", destinations("CIP")) }, nil, true, "FOO", false, [2]int64{1, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := newFakeECPDS(t), newFakeECPDS(t)
			tc.a(a)
			bURL := b.ts.URL + "/prefix"
			if tc.bDown {
				bURL = closedURL(t) + "/prefix"
			} else {
				tc.b(b)
			}
			s := start(t, setup{yaml: ecpdsConfig(tc.policy, 100, a.ts.URL+"/prefix", bURL)})
			r := s.call(t, http.MethodPost, "/api/v1/watch", watchDiss(tc.dest), rita)
			switch {
			case tc.wantOK && r.Status != 200:
				t.Fatalf("got %d %s", r.Status, r.Raw)
			case !tc.wantOK && tc.name == "any_success, the answering server denies":
				wantAuthError(t, r, 403, "FORBIDDEN", "forbidden", "User 'rita' does not have access to destination 'FOO'", nil)
			case !tc.wantOK:
				unavailable(t, r)
			}
			if got := [2]int64{a.calls.Load(), b.calls.Load()}; got != tc.callsAB {
				t.Fatalf("upstream calls %v, want %v", got, tc.callsAB)
			}
		})
	}

	// Failures are not cached: the next request fetches again.
	t.Run("errors not cached", func(t *testing.T) {
		f := newFakeECPDS(t)
		f.set("rita", destinations("CIP"))
		f.setStatus(502)
		s := start(t, setup{yaml: ecpdsConfig("strict", 100, f.ts.URL+"/prefix")})
		unavailable(t, s.call(t, http.MethodPost, "/api/v1/watch", watchDiss("CIP"), rita))
		f.setStatus(0)
		if r := s.call(t, http.MethodPost, "/api/v1/watch", watchDiss("CIP"), rita); r.Status != 200 {
			t.Fatalf("after recovery: %d %s", r.Status, r.Raw)
		}
		if r := s.call(t, http.MethodPost, "/api/v1/watch", watchDiss("CIP"), rita); r.Status != 200 || f.calls.Load() != 2 {
			t.Fatalf("cached: %d, %d calls", r.Status, f.calls.Load())
		}
	})
}

// TestECPDSCache covers hits, expiry on an injected clock, the entry
// bound and the URL-encoding of usernames.
func TestECPDSCache(t *testing.T) {
	f := newFakeECPDS(t)
	special := "u+s er&name/é=1"
	f.set("rita", destinations("CIP"))
	f.set("walt", destinations("CIP"))
	f.set(special, destinations("CIP"))
	clk := newClock()
	s := start(t, setup{yaml: ecpdsConfig("strict", 2, f.ts.URL+"/prefix"), ecpdsNow: clk.Now})
	watch := func(name string) {
		t.Helper()
		if r := s.call(t, http.MethodPost, "/api/v1/watch", watchDiss("CIP"), bearer(hs256(t, user(name, "ecmwf", "reader")))); r.Status != 200 {
			t.Fatalf("%s: %d %s", name, r.Status, r.Raw)
		}
	}
	steps := []struct {
		name    string
		advance time.Duration
		user    string
		calls   int64
	}{
		{"first request fetches", 0, "rita", 1},
		{"second is a hit", 0, "rita", 1},
		{"still cached just before the TTL", 299 * time.Second, "rita", 1},
		{"expired at the TTL", time.Second, "rita", 2},
		{"cached again", 0, "rita", 2},
		{"a second user", 0, "walt", 3},
		{"a third user evicts the oldest", 0, special, 4},
		{"the evicted user fetches again", 0, "rita", 5},
		{"the newest users are still cached", 0, special, 5},
	}
	for _, st := range steps {
		clk.Advance(st.advance)
		watch(st.user)
		if got := f.calls.Load(); got != st.calls {
			t.Fatalf("%s: %d upstream calls, want %d", st.name, got, st.calls)
		}
	}
	if st := s.ECPDS.Stats(); st.Entries != 2 || st.Hits != 4 || st.Misses != 5 || st.Fetches != 5 {
		t.Fatalf("stats %+v", st)
	}
	f.mu.Lock()
	q := f.queries[3]
	f.mu.Unlock()
	if q != "id=u%2Bs+er%26name%2F%C3%A9%3D1" {
		t.Fatalf("query for a special username %q", q)
	}
}

// TestECPDSSingleFlight: concurrent requests of one user share one
// upstream fetch.
func TestECPDSSingleFlight(t *testing.T) {
	f := newFakeECPDS(t)
	f.set("rita", destinations("CIP"))
	gate := make(chan struct{})
	f.gate = gate
	s := start(t, setup{yaml: ecpdsConfig("strict", 100, f.ts.URL+"/prefix")})
	token := hs256(t, user("rita", "ecmwf", "reader"))
	const n = 8
	statuses := make(chan int, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < n; i++ {
		go func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/api/v1/watch", strings.NewReader(watchDiss("CIP")))
			if err != nil {
				statuses <- -1
				return
			}
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				statuses <- -1
				return
			}
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	testkit.WaitFor(t, 5*time.Second, "every request to wait on one fetch", func() bool { return s.ECPDS.Stats().Misses == n && f.calls.Load() >= 1 })
	close(gate)
	for i := 0; i < n; i++ {
		if st := <-statuses; st != 200 {
			t.Fatalf("request %d: status %d", i, st)
		}
	}
	if got, st := f.calls.Load(), s.ECPDS.Stats(); got != 1 || st.Fetches != 1 {
		t.Fatalf("%d upstream calls, stats %+v", got, st)
	}
	if f.lastQuery() != "id=rita" {
		t.Fatalf("query %q", f.lastQuery())
	}
}
