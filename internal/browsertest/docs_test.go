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

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"herald/configs"
	"herald/handlers"
	"herald/internal/browsertest"
	"herald/openapi"
	"herald/server"
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
	ts.Config.ConnContext = handlers.ConnContext
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
// exactly what the endpoint answers, and on POST /api/v1/notification
// with the prefilled example shows the 200 and the stored notification's
// answer. The page requests nothing but herald's own URLs and throws no
// script error.
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

	for _, r := range tab.Requests() {
		if _, url, _ := strings.Cut(r, " "); !strings.HasPrefix(url, base+"/") {
			t.Errorf("the page requested %s, not from herald", r)
		}
	}
	if p := tab.Problems(); len(p) > 0 {
		t.Errorf("script errors: %q", p)
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
