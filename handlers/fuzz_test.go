package handlers_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// fuzzRoutes are the endpoints FuzzEndpoints sends to, by index.
var fuzzRoutes = []struct{ method, path string }{
	{http.MethodPost, "/api/v1/notification"},
	{http.MethodPost, "/api/v1/watch"},
	{http.MethodPost, "/api/v1/replay"},
	{http.MethodDelete, "/api/v1/admin/wipe/stream"},
	{http.MethodDelete, "/api/v1/admin/notification/"}, // + the fuzzed id
	{http.MethodGet, "/api/v1/schema/"},                // + the fuzzed name
}

// FuzzEndpoints sends arbitrary requests to herald on the JetStream
// engine (some as watchers that never read) and checks after each that
// no answer is a 5xx or leaks internals, and that a normal notify is
// still stored: no request may take the backend down.
func FuzzEndpoints(f *testing.F) {
	long := strings.Repeat("a", 4100)
	cjk := strings.Repeat("日", 1400)
	for _, c := range []struct {
		route int
		arg   string
		body  string
		stuck bool
	}{
		{0, "", `{"event_type":"extreme","identifier":{"region":"` + long + `","anomaly":1}}`, false},
		{0, "", `{"event_type":"extreme","identifier":{"region":"` + cjk + `","anomaly":1}}`, false},
		{0, "", `{"event_type":"mars","identifier":{"class":"od","class":"rd"}}`, false},
		{1, "", `{"event_type":"extreme","identifier":{"region":"` + cjk + `"},"from_id":"1"}`, false},
		{1, "", `{"event_type":"extreme","identifier":{"region":"r"}}`, true},
		{1, "", `{"event_type":"extreme","identifier":{},"from_id":"0"}`, true},
		{2, "", `{"event_type":"extreme","identifier":{"region":"` + long + `"},"from_id":"0"}`, false},
		{2, "", `{"event_type":"extreme","identifier":{"region":"north"},"from_id":"0"}`, false},
		{3, "", `{"stream_name":"` + long + `"}`, false},
		{3, "", `{"stream_name":"*"}`, false},
		{3, "", `{"stream_name":">"}`, false},
		{3, "", `{"stream_name":"../x"}`, false},
		{3, "", `{"stream_name":"EXTREME"}`, false},
		{4, long + "@1", "", false},
		{4, "extreme@1", "", false},
		{5, "mars", "", false},
	} {
		f.Add(uint8(c.route), c.arg, []byte(c.body), c.stuck)
	}
	s := startServer(f, testConfig, nil)
	u, _ := url.Parse(s.URL)
	stuckOpen := 0
	f.Fuzz(func(t *testing.T, route uint8, arg string, body []byte, stuck bool) {
		rt := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path := rt.path
		if strings.HasSuffix(path, "/") {
			path += url.PathEscape(arg)
		}
		if stuck && rt.path == "/api/v1/watch" && stuckOpen < 50 {
			stuckOpen++
			stuckWatcher(t, u.Host, string(body))
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, rt.method, s.URL+path, strings.NewReader(string(body)))
			if err != nil {
				return
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %.200s %.300q: %v", rt.method, path, body, err)
			}
			var text string
			if resp.Header.Get("Content-Type") == "text/event-stream" {
				line, _ := bufio.NewReader(resp.Body).ReadString('\n') // the first event, then hang up
				text = line
			} else {
				raw, _ := io.ReadAll(resp.Body)
				text = string(raw)
			}
			resp.Body.Close()
			if resp.StatusCode >= 500 {
				t.Fatalf("%s %.200s %.300q: status %d: %.500s", rt.method, path, body, resp.StatusCode, text)
			}
			for _, leak := range []string{"nats:", "nats-server", "data directory", "/tmp/"} {
				if strings.Contains(text, leak) {
					t.Fatalf("%s %.200s: the answer leaks %q: %.500s", rt.method, path, leak, text)
				}
			}
		}
		client := http.Client{Timeout: 20 * time.Second}
		resp, err := client.Post(s.URL+"/api/v1/notification", "application/json",
			strings.NewReader(`{"event_type":"extreme","identifier":{"region":"north","anomaly":2}}`))
		if err != nil {
			t.Fatalf("after %s %.200s %.300q: a normal notify failed: %v", rt.method, path, body, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("after %s %.200s %.300q: a normal notify got %d: %s", rt.method, path, body, resp.StatusCode, raw)
		}
	})
}
