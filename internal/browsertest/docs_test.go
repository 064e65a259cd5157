package browsertest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/herald-gateway/herald/configs"
	"github.com/herald-gateway/herald/internal/browsertest"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/openapi"
	"github.com/herald-gateway/herald/server"
	"github.com/herald-gateway/herald/sse"
)

// startHerald runs herald on a loopback port with the shipped default
// config (its embedded JetStream storing under a temporary directory),
// whose event types every example of the document uses.
func startHerald(t *testing.T) (*server.Server, string) {
	t.Helper()
	cfg, err := configs.Load("../../configs/config.yaml", []string{
		"HERALD_NOTIFICATION_BACKEND__JETSTREAM__DATA_DIR=" + t.TempDir(), "HERALD_APPLICATION__PORT=0"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), cfg, server.Options{Version: "browser-test"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnContext = sse.ConnContext
	ts.Start()
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return srv, ts.URL
}

// tried is what a "try it" form showed.
type tried struct {
	status, headers, body string
}

// try submits the try-it form of an operation and returns what it shows.
func try(t *testing.T, tab *browsertest.Tab, method, path string) tried {
	t.Helper()
	form := "#try-" + opID(method, path)
	tab.Do(t, "try "+method+" "+path,
		chromedp.Click(chromedp.CSS(form+` button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(form+`[data-state=done] .try-result`)),
	)
	text := func(part string) string {
		return browsertest.Run(t, tab, "read "+part, chromedp.TextContent(chromedp.CSS(form+" "+part)))
	}
	return tried{status: text(".try-status"), headers: text(".try-headers"), body: text(".try-response")}
}

// opID is the docs page's id of an operation (openapi.opID).
func opID(method, path string) string {
	return "op-" + strings.ToLower(method) + regexp.MustCompile(`[^a-zA-Z0-9]`).ReplaceAllString(path, "-")
}

// header returns the value of one "name: value" line of shown headers.
func header(t *testing.T, shown, name string) string {
	t.Helper()
	for _, l := range strings.Split(shown, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && k == name {
			return v
		}
	}
	t.Fatalf("no %s among the shown headers:\n%s", name, shown)
	return ""
}

func jsonValue(t *testing.T, what, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", what, err, s)
	}
	return v
}

// TestDocsPageInChromium opens the docs page of a running herald in a
// real headless Chromium: without JavaScript the text is there (Markdown
// rendered, no forms); with it, "try it" on GET /api/v1/schema shows
// exactly what the endpoint answers, on POST /api/v1/notification with
// the prefilled example shows the 200 and the stored notification's
// answer, on replay shows the streamed events to the end, and on watch
// shows the opening event and then a notification sent meanwhile, until
// Stop. The page opens with the endpoint list, runs under its
// Content-Security-Policy (an inline script does not run), requests
// nothing but herald's own URLs and throws no script error.
func TestDocsPageInChromium(t *testing.T) {
	tab := browsertest.Open(t)
	srv, base := startHerald(t)

	// Without JavaScript.
	if _, err := chromedp.Call(tab.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	tab.Do(t, "open the docs page without JavaScript", chromedp.Navigate(base+"/swagger-ui/"), chromedp.WaitReady(chromedp.CSS("#schemas")))
	if got := browsertest.Run(t, tab, "read the intro", chromedp.Text(chromedp.CSS("#info strong"))); got != "Request id." {
		t.Errorf("first bold text of the intro %q, want %q", got, "Request id.")
	}
	visible := browsertest.Run(t, tab, "count visible forms", chromedp.Evaluate[int](
		`Array.prototype.filter.call(document.querySelectorAll("form.try"), function (f) { return f.offsetParent !== null; }).length`))
	if visible != 0 {
		t.Errorf("%d try-it forms visible without JavaScript", visible)
	}
	tab.Screenshot(t, "docs-without-javascript", "")

	// With JavaScript.
	if _, err := chromedp.Call(tab.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	tab.Do(t, "open the docs page", chromedp.Navigate(base+"/swagger-ui/"),
		chromedp.WaitVisible(chromedp.CSS("#try-"+opID("GET", "/api/v1/schema"))))

	// GET /api/v1/schema: the shown body is the endpoint's answer.
	got := try(t, tab, "GET", "/api/v1/schema")
	resp, err := http.Get(base + "/api/v1/schema")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got.status != "200 OK" || header(t, got.headers, "content-type") != "application/json" {
		t.Errorf("GET /api/v1/schema showed status %q, headers\n%s", got.status, got.headers)
	}
	if !reflect.DeepEqual(jsonValue(t, "the shown schema list", got.body), jsonValue(t, "GET /api/v1/schema", string(want))) {
		t.Errorf("shown body\n%s\nwant\n%s", got.body, want)
	}

	// POST /api/v1/notification with the prefilled example.
	form := "#try-" + opID("POST", "/api/v1/notification")
	prefilled := browsertest.Run(t, tab, "read the prefilled body", chromedp.Value(chromedp.CSS(form+" textarea")))
	example := firstNotifyExample(t)
	if !reflect.DeepEqual(jsonValue(t, "the prefilled body", prefilled), example) {
		t.Fatalf("prefilled body\n%s\nwant the document's first example %v", prefilled, example)
	}
	eventType := example.(map[string]any)["event_type"].(string)
	got = try(t, tab, "POST", "/api/v1/notification")
	if got.status != "200 OK" {
		t.Fatalf("notify showed status %q, body\n%s", got.status, got.body)
	}
	body, _ := jsonValue(t, "the shown notify answer", got.body).(map[string]any)
	requestID := header(t, got.headers, "x-request-id")
	if len(body) != 4 || body["status"] != "success" || body["request_id"] != requestID || body["notification_id"] != eventType+"@1" ||
		!regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(body["processed_at"].(string)) {
		t.Errorf("shown notify answer %s (X-Request-ID %s)", got.body, requestID)
	}
	schema, _ := srv.Runtime().Registry.Schema(eventType)
	if seq, err := srv.Engine().LastSeq(context.Background(), schema.Base); err != nil || seq != 1 {
		t.Errorf("stream %s holds %d notifications (%v), want the 1 sent from the page", schema.Base, seq, err)
	}
	tab.Screenshot(t, "docs-try-notify", form)

	// POST /api/v1/replay with its prefilled example (alert, europe,
	// severity 2 to 4, from sequence 0): replay_started, the stored
	// notification, replay_completed, then connection-closing, each as
	// it arrived.
	replay := "#try-" + opID("POST", "/api/v1/replay")
	tab.Do(t, "send the replay", chromedp.Click(chromedp.CSS(replay+" button[type=submit]")))
	waitJS(t, tab, "the replay ended", `document.querySelector(`+jsq(replay)+`).getAttribute("data-state") === "ended"`)
	events := shownEvents(t, tab, replay)
	if names := eventNames(events); !reflect.DeepEqual(names, []string{"replay-control", "replay", "replay-control", "connection-closing"}) {
		t.Fatalf("replay showed events %q: %v", names, events)
	}
	if events[0].data["type"] != "replay_started" || events[1].data["id"] != eventType+"@1" || events[2].data["type"] != "replay_completed" ||
		events[3].data["reason"] != "end_of_stream" {
		t.Errorf("replay showed\n%v", events)
	}
	if st := browsertest.Run(t, tab, "read the replay status", chromedp.TextContent(chromedp.CSS(replay+" .try-status"))); st != "200 OK" {
		t.Errorf("replay status %q", st)
	}
	tab.Screenshot(t, "docs-try-replay", replay)

	// POST /api/v1/watch with its prefilled example (alert, europe,
	// severity at least 3): connection_established, then a notification
	// sent now shows live; Stop ends the stream, on the server too. (A
	// heartbeat may come between them.)
	watch := "#try-" + opID("POST", "/api/v1/watch")
	tab.Do(t, "start the watch", chromedp.Click(chromedp.CSS(watch+" button[type=submit]")))
	waitJS(t, tab, "the watch established", `Number(document.querySelector(`+jsq(watch)+`).getAttribute("data-events")) >= 1`)
	if events := shownEvents(t, tab, watch); events[0].name != "live-notification" || events[0].data["type"] != "connection_established" {
		t.Fatalf("watch opened with %v", events)
	}
	if srv.Handlers().Streams() != 1 {
		t.Errorf("%d streams open on the server, want the watch", srv.Handlers().Streams())
	}
	notify(t, base, example)
	waitJS(t, tab, "the live notification", `Array.from(document.querySelectorAll(`+jsq(watch+` .try-events li[data-event="live-notification"] .try-event-data`)+`)).some((d) => JSON.parse(d.textContent).id === `+jsq(eventType+"@2")+`)`)
	var shown []event
	for _, e := range shownEvents(t, tab, watch) {
		if e.name != "heartbeat" {
			shown = append(shown, e)
		}
	}
	if data, _ := shown[len(shown)-1].data["data"].(map[string]any); len(shown) != 2 || shown[1].name != "live-notification" ||
		shown[1].data["id"] != eventType+"@2" || !reflect.DeepEqual(data["payload"], example.(map[string]any)["payload"]) {
		t.Errorf("watch showed\n%v", shown)
	}
	tab.Screenshot(t, "docs-try-watch", watch)
	tab.Do(t, "stop the watch", chromedp.Click(chromedp.CSS(watch+" .try-stop")))
	waitJS(t, tab, "the watch stopped", `document.querySelector(`+jsq(watch)+`).getAttribute("data-state") === "stopped"`)
	testkit.WaitFor(t, 10*time.Second, "the server to end the watch", func() bool { return srv.Handlers().Streams() == 0 })

	// A refused stream shows the error answer whole, as the JSON forms do.
	bad := `{"event_type":"alert","identifier":{"region":"europe"}}`
	tab.Do(t, "send a replay without a start", chromedp.SetValue(chromedp.CSS(replay+" textarea"), bad),
		chromedp.Click(chromedp.CSS(replay+" button[type=submit]")))
	waitJS(t, tab, "the replay refused", `document.querySelector(`+jsq(replay)+`).getAttribute("data-state") === "done"`)
	status, answer := post(t, base+"/api/v1/replay", bad)
	shownStatus := browsertest.Run(t, tab, "read the refusal", chromedp.TextContent(chromedp.CSS(replay+" .try-status")))
	shownBody := browsertest.Run(t, tab, "read the refusal", chromedp.TextContent(chromedp.CSS(replay+" .try-response")))
	if shown := jsonValue(t, "the shown refusal", shownBody).(map[string]any); status != http.StatusBadRequest || shownStatus != "400 Bad Request" ||
		shown["code"] != answer["code"] || shown["message"] != answer["message"] || len(shownEvents(t, tab, replay)) != 0 {
		t.Errorf("refused replay shows %s %s; the API answers %d %v", shownStatus, shownBody, status, answer)
	}

	// The page opens with the endpoint list, on the first screen.
	top := browsertest.Run(t, tab, "find the endpoint list", chromedp.Evaluate[[]any](
		`(() => { window.scrollTo(0, 0); const n = document.querySelector("#endpoints");
		  return [n.previousElementSibling.tagName, n.getBoundingClientRect().top < window.innerHeight, n.querySelectorAll("li").length]; })()`))
	if len(top) != 3 || top[0] != "H1" || top[1] != true || top[2] != float64(strings.Count(string(openapi.Spec()), `"operationId"`)) {
		t.Errorf("endpoint list: after %v, on the first screen %v, %v entries", top[0], top[1], top[2])
	}
	tab.Screenshot(t, "docs-top", "")

	// The page and its files keep their policy: nothing inline runs.
	resp, err = http.Get(base + "/swagger-ui/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Content-Security-Policy"); got != openapi.DocsPolicy {
		t.Errorf("page policy %q", got)
	}
	ran := browsertest.Run(t, tab, "add an inline script", chromedp.Evaluate[bool](`(() => { const s = document.createElement("script");
	  s.textContent = "window.inlineRan = true"; document.body.append(s); return window.inlineRan === true; })()`))
	if ran {
		t.Error("an inline script ran: the policy is not in force")
	}
	waitJS(t, tab, "the refusal counted", `document.body.getAttribute("data-policy-violations") === "1"`)
	problems := tab.Problems()
	if len(problems) > 0 && problems[len(problems)-1] == `console.error: "Content-Security-Policy refused script-src-elem inline"` {
		problems = problems[:len(problems)-1]
	}

	for _, r := range tab.Requests() {
		if _, url, _ := strings.Cut(r, " "); !strings.HasPrefix(url, base+"/") {
			t.Errorf("the page requested %s, not from herald", r)
		}
	}
	if len(problems) > 0 {
		t.Errorf("script errors: %q", problems)
	}
}

// waitJS polls a JavaScript condition until it is true, for at most ten
// seconds.
func waitJS(t *testing.T, tab *browsertest.Tab, what, cond string) {
	t.Helper()
	if _, err := chromedp.Run(tab.Ctx, chromedp.Poll[bool](cond,
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		state := browsertest.Run(t, tab, "read the forms' state", chromedp.Evaluate[string](`JSON.stringify(Array.from(document.querySelectorAll("form.try[data-state]"),
		  (f) => [f.id, f.getAttribute("data-state"), f.getAttribute("data-events"), f.querySelector(".try-status").textContent, f.querySelector(".try-response").textContent.slice(0, 400)]))`))
		t.Fatalf("waiting for %s: %v\nforms: %s", what, err, state)
	}
}

// jsq quotes s as a JavaScript string literal.
func jsq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// event is one Server-Sent Event a stream's form shows.
type event struct {
	name string
	data map[string]any
}

// shownEvents reads the events a stream's form lists, in order.
func shownEvents(t *testing.T, tab *browsertest.Tab, form string) []event {
	t.Helper()
	raw := browsertest.Run(t, tab, "read the events of "+form, chromedp.Evaluate[[][2]string](
		`Array.from(document.querySelectorAll(`+jsq(form+" .try-events li")+`), (li) => [li.getAttribute("data-event"), li.querySelector(".try-event-data").textContent])`))
	out := make([]event, len(raw))
	for i, r := range raw {
		out[i].name = r[0]
		if err := json.Unmarshal([]byte(r[1]), &out[i].data); err != nil {
			t.Fatalf("event %d (%s) of %s: data %q: %v", i, r[0], form, r[1], err)
		}
	}
	return out
}

// eventNames are the names of events, in order.
func eventNames(events []event) []string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = e.name
	}
	return names
}

// post sends a JSON body and returns the status and the decoded answer.
func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	v, _ := jsonValue(t, "POST "+url, string(raw)).(map[string]any)
	return resp.StatusCode, v
}

// notify posts a notification as JSON and fails the test unless it is
// stored.
func notify(t *testing.T, base string, body any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(base+"/api/v1/notification", "application/json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		answer, _ := io.ReadAll(resp.Body)
		t.Fatalf("notify %s: %d %s", raw, resp.StatusCode, answer)
	}
}

// firstNotifyExample is the first example of POST /api/v1/notification's
// JSON body, in document order.
func firstNotifyExample(t *testing.T) any {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Examples json.RawMessage `json:"examples"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Spec(), &doc); err != nil {
		t.Fatal(err)
	}
	raw := doc.Paths["/api/v1/notification"]["post"].RequestBody.Content["application/json"].Examples
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("examples: %v %v", tok, err)
	}
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var first struct {
		Value any `json:"value"`
	}
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	return first.Value
}
