package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/browsertest"
	"github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/sse"
)

// herald is one herald under test, on a loopback port.
type herald struct {
	srv  *server.Server
	url  string
	path string // the config file, for reloads ("" when there is none)
}

// shipped loads the shipped default config (configs/config.yaml) on
// engine "jetstream" (its embedded server storing under a temporary
// directory, as `go run .` does) or "in_memory" (the same event types
// without their JetStream storage policies).
func shipped(t *testing.T, engine string) *configs.Config {
	t.Helper()
	cfg, err := configs.Load("../configs/config.yaml", []string{
		"HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR=" + t.TempDir(), "HERALD_APPLICATION__PORT=0"})
	if err != nil {
		t.Fatal(err)
	}
	if engine == "in_memory" {
		cfg.NotificationBackend.Kind = "in_memory"
		for _, s := range cfg.NotificationSchema {
			s.StoragePolicy = nil
		}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// fromYAML writes yaml to a config file and loads it, so that the herald
// started from it can reload.
func fromYAML(t *testing.T, yaml string) (*configs.Config, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := configs.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, path
}

// start runs herald on cfg on a loopback port until the test ends.
func start(t *testing.T, cfg *configs.Config, path string) *herald {
	t.Helper()
	srv, err := server.New(context.Background(), cfg, server.Options{ConfigPath: path, Version: "console-test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnContext = sse.ConnContext
	ts.Start()
	t.Cleanup(func() {
		srv.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return &herald{srv: srv, url: ts.URL, path: path}
}

// post sends a JSON body and returns the status and the decoded answer.
func post(t *testing.T, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("POST %s: %d, not JSON: %s", url, resp.StatusCode, raw)
	}
	return resp.StatusCode, v
}

// notify publishes through the HTTP API and fails the test unless it is
// stored.
func (h *herald) notify(t *testing.T, body string) {
	t.Helper()
	if status, v := post(t, h.url+"/api/v1/notification", "", body); status != http.StatusOK {
		t.Fatalf("notify %s: %d %v", body, status, v)
	}
}

// replay reads the CloudEvents of a replay through the HTTP API (SSE).
func (h *herald) replay(t *testing.T, body string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url+"/api/v1/replay", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("replay %s: %d %s", body, resp.StatusCode, raw)
	}
	var out []map[string]any
	event := ""
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == sse.EventReplay:
			var ev map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				t.Fatalf("replay event: %v: %s", err, line)
			}
			out = append(out, ev)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("replay %s: %v", body, err)
	}
	return out
}

// page drives the console in a browser tab.
type page struct {
	t   *testing.T
	tab *browsertest.Tab
	url string
	// seen and problems count the tab's requests and script errors
	// from before this page.
	seen, problems int
}

// Deadline bounds each wait for a DOM condition.
const Deadline = 10 * time.Second

// open loads the console from base and waits until its session is
// connected.
func open(t *testing.T, tab *browsertest.Tab, base string) *page {
	t.Helper()
	p := &page{t: t, tab: tab, url: base, seen: len(tab.Requests()), problems: len(tab.Problems())}
	tab.Do(t, "open the console", chromedp.Navigate(base+"/console/"))
	p.wait("the console connected", `document.body.dataset.ready !== undefined && document.querySelector("#conn-status").dataset.state === "open"`)
	return p
}

// eval evaluates a JavaScript expression and decodes its value into T.
func eval[T any](p *page, what, js string) T {
	p.t.Helper()
	return browsertest.Run(p.t, p.tab, what, chromedp.Evaluate[T](js))
}

// state describes the console for a failure message: the connection,
// the forms' errors and every subscription with its rows.
const state = `JSON.stringify({
  connection: document.querySelector("#conn-status").textContent,
  auth: document.querySelector("#auth-status").textContent,
  messages: document.querySelector("#messages").textContent,
  errors: Array.from(document.querySelectorAll(".form-error:not([hidden])"), (e) => e.textContent),
  subs: Array.from(document.querySelectorAll(".sub"), (s) => ({name: s.dataset.name, state: s.dataset.state,
    note: s.querySelector(".sub-note").textContent, rows: Array.from(s.querySelectorAll("tbody tr"), (r) => r.dataset.id)})),
})`

// wait polls a JavaScript condition until it is true, for at most
// Deadline; on timeout it fails with the console's state.
func (p *page) wait(what, cond string) {
	p.t.Helper()
	_, err := chromedp.Run(p.tab.Ctx, chromedp.Poll[bool](cond,
		chromedp.WithPollingTimeout(Deadline), chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		p.t.Fatalf("waiting for %s: %v\nconsole state: %s", what, err, eval[string](p, "read the console state", state))
	}
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// set gives the element sel matches a value, as typing or choosing would
// (input and change events).
func (p *page) set(sel, value string) {
	p.t.Helper()
	ok := eval[bool](p, "set "+sel, `(() => { const e = document.querySelector(`+js(sel)+`); if (!e) return false;
	  e.value = `+js(value)+`; e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return e.value === `+js(value)+`; })()`)
	if !ok {
		p.t.Fatalf("cannot set %s to %q", sel, value)
	}
}

// click clicks the element sel matches.
func (p *page) click(sel string) {
	p.t.Helper()
	p.tab.Do(p.t, "click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// text is the text content of the element sel matches.
func (p *page) text(sel string) string {
	p.t.Helper()
	return eval[string](p, "read "+sel, `(() => { const e = document.querySelector(`+js(sel)+`); return e ? e.textContent : "<no "+`+js(sel)+`+">"; })()`)
}

// rows are the ids of a subscription's table rows, top to bottom.
func (p *page) rows(sub string) []string {
	p.t.Helper()
	return eval[[]string](p, "read the rows of "+sub, `Array.from(document.querySelectorAll("#sub-`+sub+` tbody tr"), (r) => r.dataset.id)`)
}

// waitRows waits until a subscription's table shows exactly ids, top to
// bottom.
func (p *page) waitRows(sub string, ids ...string) {
	p.t.Helper()
	want, _ := json.Marshal(ids)
	p.wait(sub+" showing exactly "+string(want), `JSON.stringify(Array.from(document.querySelectorAll("#sub-`+sub+` tbody tr"), (r) => r.dataset.id)) === `+js(string(want)))
}

// pick chooses an event type and waits for its forms.
func (p *page) pick(eventType string) {
	p.t.Helper()
	p.set("#event-type", eventType)
	p.wait("the forms of "+eventType, `document.querySelector("#watch-form").dataset.eventType === `+js(eventType))
}

// startSub submits the watch form and waits for subscription name to
// reach state.
func (p *page) startSub(name, state string) {
	p.t.Helper()
	p.click("#watch-form button[type=submit]")
	p.wait(name+" "+state, `(document.querySelector("#sub-`+name+`") || {dataset: {}}).dataset.state === `+js(state))
}

// shot writes a screenshot of the viewport as build/screenshots/NAME.png.
func (p *page) shot(name string) {
	p.t.Helper()
	p.tab.Screenshot(p.t, name, "")
}

// clean fails the test if the page threw a script error or requested
// anything but herald's own URLs (WebSockets are not among the recorded
// requests; connect-src 'self' bounds them).
func (p *page) clean() {
	p.t.Helper()
	for _, r := range p.tab.Requests()[p.seen:] {
		// data: URLs are the page's empty icon and Chromium's own
		// images of date inputs, not requests to anywhere.
		if _, u, _ := strings.Cut(r, " "); !strings.HasPrefix(u, p.url+"/") && !strings.HasPrefix(u, "data:") {
			p.t.Errorf("the page requested %s, not from herald", r)
		}
	}
	if pr := p.tab.Problems()[p.problems:]; len(pr) > 0 {
		p.t.Errorf("script errors: %q", pr)
	}
}
