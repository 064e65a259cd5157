package console_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"

	"github.com/herald-gateway/herald/auth"
	"github.com/herald-gateway/herald/internal/browsertest"
	"github.com/herald-gateway/herald/internal/testkit"
	"github.com/herald-gateway/herald/server"
)

// TestConsoleInChromium drives the console in one real headless
// Chromium: the whole flow (watch with a filter, pause and resume, replay
// from a sequence and from a date, publish from the form, a bad filter's
// error) on the in-memory engine and on the shipped default (embedded
// JetStream); authentication with a token; and resuming without a gap or
// a duplicate after a reload ends the subscriptions and after the
// connection is cut. Each step writes a screenshot under
// build/screenshots/.
func TestConsoleInChromium(t *testing.T) {
	tab := browsertest.Open(t)
	t.Run("FlowInMemory", func(t *testing.T) { testFlow(t, tab, "in_memory") })
	t.Run("FlowJetStream", func(t *testing.T) { testFlow(t, tab, "jetstream") })
	t.Run("Auth", func(t *testing.T) { testAuth(t, tab) })
	t.Run("ResumeAfterReload", func(t *testing.T) { testResumeAfterReload(t, tab) })
	t.Run("ResumeAfterMaxDuration", func(t *testing.T) { testResumeAfterMaxDuration(t, tab) })
	t.Run("ResumeAfterConnectionLoss", func(t *testing.T) { testResumeAfterConnectionLoss(t, tab) })
	t.Run("PolicyInForce", func(t *testing.T) { testPolicyInForce(t, tab) })
	t.Run("Options", func(t *testing.T) { testOptions(t, tab) })
	t.Run("WholeIds", func(t *testing.T) { testWholeIds(t, tab) })
	t.Run("Hints", func(t *testing.T) { testHints(t, tab) })
}

// longConfig has an event type whose name, and so every id, is longer
// than the id column was wide, and an identifier of a long name.
const longConfig = `
application: {host: 127.0.0.1, port: 0}
notification_backend: {kind: in_memory}
notification_schema:
  readings_of_the_north_atlantic_weather_station:
    topic: {base: north, key_order: [the_station_identification_code]}
    identifier:
      the_station_identification_code: {type: StringHandler, required: false}
`

// testWholeIds: a long id is shown whole in the subscription's table
// (its text is the id, nothing overflows its cell), as are the long
// identifier name in the forms and the session id in the status.
func testWholeIds(t *testing.T, tab *browsertest.Tab) {
	cfg, path := fromYAML(t, longConfig)
	h := start(t, cfg, path)
	p := open(t, tab, h.url)
	if got := p.text("#conn-status"); !regexp.MustCompile(`^connected · session [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(got) {
		t.Errorf("status %q, want the whole session id", got)
	}
	const long = "readings_of_the_north_atlantic_weather_station"
	p.pick(long)
	p.startSub("s1", "live")
	for i := 1; i <= 12; i++ {
		h.notify(t, fmt.Sprintf(`{"event_type":%q,"identifier":{"the_station_identification_code":"st-%d"}}`, long, i))
	}
	ids := make([]string, 12)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s@%d", long, 12-i)
	}
	p.waitRows("s1", ids...)
	p.shot("console-whole-ids")
	// Each id cell: its text is the row's id, and its content fits it.
	cut := eval[[]string](p, "measure the id cells", `Array.from(document.querySelectorAll("#sub-s1 tbody td.id"), (td) => {
	  const id = td.parentElement.dataset.id;
	  return td.textContent === id && td.innerText.replace(/\s/g, "") === id && td.scrollWidth <= td.clientWidth && td.scrollHeight <= td.clientHeight ? "" : id + ": " + JSON.stringify(td.innerText) + " " + td.scrollWidth + "/" + td.clientWidth;
	}).filter((s) => s)`)
	if len(cut) != 0 {
		t.Errorf("id cells not shown whole: %q", cut)
	}
	// The identifier's long name is not cut in the forms either.
	labels := eval[[]string](p, "measure the field labels", `Array.from(document.querySelectorAll(".field > label"), (l) => l.scrollWidth <= l.clientWidth ? "" : l.textContent).filter((s) => s)`)
	if len(labels) != 0 {
		t.Errorf("field labels cut: %q", labels)
	}
	if got := p.text("#sub-s1 .sub-type"); got != long+" · watch" {
		t.Errorf("subscription type %q", got)
	}
	p.clean()
}

// testHints: on the shipped config the console selects the first event
// type, and the WHERE and payload hints it shows are those of the type
// selected; each hint is valid as written: the WHERE example is accepted
// by a replay that then shows the notification published with the
// payload example (for CBOR, the example's form: a base64 string).
func testHints(t *testing.T, tab *browsertest.Tab) {
	h := start(t, shipped(t, "in_memory"), "")
	p := open(t, tab, h.url)
	hints := func() []string {
		return eval[[]string](p, "read the hints", `[document.querySelector("#event-type").value, document.querySelector("#where").placeholder,
		  document.querySelector("#payload-hint").textContent, document.querySelector("#payload").placeholder]`)
	}
	want := map[string][]string{
		"alert": {"alert", "severity >= 3 AND region IN ('europe', 'africa')", "(any JSON, required)", `{"key": "value"}`},
		"mars":  {"mars", "step >= 180 AND class IN ('od', 'rd')", "(any JSON, optional)", `{"key": "value"}`},
		"sensor": {"sensor", "sensor IS NOT NULL", "(a JSON record for codec reading_json, required)",
			`{"sensor":"sensor-1","at":"2025-07-06T12:00:00Z","value":0,"samples":[]}`},
		"sensor_cbor": {"sensor_cbor", "sensor IS NOT NULL", "(the CBOR payload as a JSON string of base64, codec reading_cbor, required)",
			`"base64…"`},
	}
	// The type selected at load, and its hints.
	if got := hints(); !reflect.DeepEqual(got, want["alert"]) {
		t.Errorf("at load: type and hints %q, want %q", got, want["alert"])
	}
	cbor, err := os.ReadFile("../configs/codecs/payloads/reading.cbor")
	if err != nil {
		t.Fatal(err)
	}
	// What the notify form is given besides the payload example.
	idents := map[string]map[string]string{
		"alert": {"region": "europe", "severity": "4", "date": "2025-07-06",
			"polygon": "[[52.5,13.4],[52.6,13.5],[52.5,13.6],[52.4,13.5],[52.5,13.4]]"},
		"mars":        {"class": "od", "domain": "g", "date": "2025-07-06", "time": "12:00", "stream": "enfo", "step": "200"},
		"sensor":      {},
		"sensor_cbor": {},
	}
	pins := map[string][2]string{"alert": {"region", "europe"}, "mars": {"class", "od"}}
	p.click(`#watch-form [name=kind][value=replay]`)
	p.set("#from_id", "1")
	for i, typ := range []string{"alert", "mars", "sensor", "sensor_cbor"} {
		p.pick(typ)
		got := hints()
		if !reflect.DeepEqual(got, want[typ]) {
			t.Errorf("%s: type and hints %q, want %q", typ, got, want[typ])
			continue
		}
		for k, v := range idents[typ] {
			p.set(`#notify-fields [name="`+k+`"]`, v)
		}
		payload := got[3]
		if typ == "sensor_cbor" {
			payload = `"` + base64.StdEncoding.EncodeToString(cbor) + `"`
		}
		p.set("#payload", payload)
		p.click("#notify-form button[type=submit]")
		p.wait(typ+" published", `document.querySelector("#notify-form").dataset.state === "done" && document.querySelector("#notify-form .form-result").dataset.id === `+js(typ+"@1"))
		if pin, ok := pins[typ]; ok {
			p.set(`#watch-fields [name="`+pin[0]+`"]`, pin[1])
		}
		p.set("#where", got[1])
		name := fmt.Sprintf("s%d", i+1)
		p.startSub(name, "ended")
		p.waitRows(name, typ+"@1")
		p.set("#where", "")
		p.set("#payload", "")
	}
	p.shot("console-hints")
	// The ids of the shipped types are short enough for one line each.
	lines := eval[map[string]int](p, "count the lines of the ids", `Object.fromEntries(Array.from(document.querySelectorAll(".sub tbody td.id"), (td) => {
	  const r = document.createRange(); r.selectNodeContents(td);
	  return [td.textContent, new Set(Array.from(r.getClientRects(), (b) => Math.round(b.top))).size]; }))`)
	if want := map[string]int{"alert@1": 1, "mars@1": 1, "sensor@1": 1, "sensor_cbor@1": 1}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines of each id %v, want %v", lines, want)
	}
	p.clean()
}

// testOptions: the form's DROPPING mode and sample rate reach the
// session's subscribe, a replay to a date ends at that date, a sample
// rate of 0 shows nothing, and a replay given both ends is refused by the
// form. The requests are read as the page sent them.
func testOptions(t *testing.T, tab *browsertest.Tab) {
	h := start(t, shipped(t, "in_memory"), "")
	h.notify(t, mars("od", "enfo", 1)) // mars@1
	first := h.replay(t, `{"event_type":"mars","identifier":{"class":"od"},"from_id":"1"}`)
	at, err := time.Parse(time.RFC3339Nano, first[0]["time"].(string))
	if err != nil {
		t.Fatal(err)
	}
	// The end date: the second after mars@1's; mars@2 is stored once the
	// clock has passed it (the form's dates have whole seconds).
	to := at.Truncate(time.Second).Add(time.Second)
	for time.Now().Before(to.Add(100 * time.Millisecond)) {
		time.Sleep(10 * time.Millisecond) // polling the clock
	}
	h.notify(t, mars("od", "enfo", 2)) // mars@2

	p := open(t, tab, h.url)
	eval[bool](p, "record the session's requests", `(() => { window.sentFrames = []; const send = WebSocket.prototype.send;
	  WebSocket.prototype.send = function (d) { window.sentFrames.push(JSON.parse(d)); return send.call(this, d); }; return true; })()`)
	p.pick("mars")
	p.set(`#watch-fields [name="class"]`, "od")

	// A DROPPING watch from sequence 1, sample rate 1: every event.
	p.set("#from_id", "1")
	p.set("#mode", "dropping")
	p.set("#sample_rate", "1")
	p.startSub("s1", "live")
	p.waitRows("s1", "mars@2", "mars@1")
	if got := p.text("#sub-s1 .sub-filter"); got != `{"class":"od"} from 1 DROPPING SAMPLE RATE 1` {
		t.Errorf("s1 filter %q", got)
	}

	// A replay from 1 to the date: mars@1 only.
	p.click(`#watch-form [name=kind][value=replay]`)
	p.set("#sample_rate", "")
	p.set("#to_date", localInput(to))
	p.startSub("s2", "ended")
	p.waitRows("s2", "mars@1")
	toText := to.UTC().Format(time.RFC3339)
	if got := p.text("#sub-s2 .sub-filter"); got != `{"class":"od"} from 1 to `+toText {
		t.Errorf("s2 filter %q", got)
	}
	p.shot("console-options-1-to-date")

	// A replay with sample rate 0: it ends, and shows nothing.
	p.set("#to_date", "")
	p.set("#sample_rate", "0")
	p.startSub("s3", "ended")
	if got := p.text("#sub-s3 .sub-note"); got != "replay complete" {
		t.Errorf("s3 note %q", got)
	}
	if got := p.rows("s3"); len(got) != 0 {
		t.Errorf("s3 rows %q, want none at sample rate 0", got)
	}

	// Both ends: refused by the form, nothing sent.
	p.set("#sample_rate", "")
	p.set("#to_id", "2")
	p.set("#to_date", localInput(to))
	p.click("#watch-form button[type=submit]")
	p.wait("the form's error", `!document.querySelector("#watch-form .form-error").hidden`)
	if got := p.text("#watch-form .form-error"); got != "INVALID_INPUT: end: give a sequence or a date, not both" {
		t.Errorf("both ends: %q", got)
	}

	sent := eval[[]map[string]any](p, "read the requests sent", `window.sentFrames.filter((f) => f.op === "subscribe" || f.op === "replay").map((f) => { delete f.id; return f; })`)
	od := map[string]any{"class": "od"}
	want := []map[string]any{
		{"op": "subscribe", "name": "s1", "event_type": "mars", "identifier": od, "from_id": "1", "mode": "dropping", "sample_rate": 1.0},
		{"op": "replay", "name": "s2", "event_type": "mars", "identifier": od, "from_id": "1", "to_date": toText},
		{"op": "replay", "name": "s3", "event_type": "mars", "identifier": od, "from_id": "1", "sample_rate": 0.0},
	}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("requests sent:\n%v\nwant:\n%v", sent, want)
	}
	p.clean()
}

// localInput is t as a datetime-local input holds it: the HTML value
// sanitisation drops the seconds when they are zero, so "…T15:23:00"
// reads back as "…T15:23".
func localInput(t time.Time) string {
	if t.Second() == 0 {
		return t.Local().Format("2006-01-02T15:04")
	}
	return t.Local().Format("2006-01-02T15:04:05")
}

// mars is a notify body of the shipped mars event type.
func mars(class, stream string, step int) string {
	return fmt.Sprintf(`{"event_type":"mars","identifier":{"class":%q,"expver":"1","domain":"g","date":"2025-07-06","time":"12","stream":%q,"step":%d},"payload":{"step":%d}}`,
		class, stream, step, step)
}

func testFlow(t *testing.T, tab *browsertest.Tab, engine string) {
	h := start(t, shipped(t, engine), "")
	p := open(t, tab, h.url)
	shot := func(step string) { p.shot("console-" + engine + "-" + step) }

	// The event types and the filter form come from the schemas.
	types := eval[[]string](p, "read the event types", `Array.from(document.querySelectorAll("#event-type option"), (o) => o.value)`)
	if want := h.srv.Runtime().Registry.Names(); !reflect.DeepEqual(types, want) {
		t.Fatalf("event types %q, want %q", types, want)
	}
	p.pick("mars")
	fields := eval[map[string]string](p, "read the filter fields", `Object.fromEntries(Array.from(document.querySelectorAll("#watch-fields .field"), (f) => [f.dataset.field, f.dataset.handler]))`)
	wantFields := map[string]string{"class": "EnumHandler", "expver": "ExpverHandler", "domain": "EnumHandler", "date": "DateHandler",
		"time": "TimeHandler", "stream": "StringHandler", "step": "IntHandler"}
	if !reflect.DeepEqual(fields, wantFields) {
		t.Fatalf("filter fields %v, want %v", fields, wantFields)
	}
	inputs := eval[[]string](p, "read the filter inputs", `Array.from(document.querySelectorAll("#watch-fields [name]"), (e) => e.name + ":" + (e.type || e.tagName))`)
	wantInputs := []string{"class:select-one", "date:date", "domain:select-one", "expver:text", "step.min:number", "step.max:number", "stream:text", "time:time"}
	if !reflect.DeepEqual(inputs, wantInputs) {
		t.Errorf("filter inputs %q, want %q", inputs, wantInputs)
	}
	options := eval[[]string](p, "read the class options", `Array.from(document.querySelectorAll("#watch-fields [name=class] option"), (o) => o.value)`)
	if want := []string{"", "od", "rd", "ea", "ei", "mc"}; !reflect.DeepEqual(options, want) {
		t.Errorf("class options %q, want %q", options, want)
	}
	shot("1-open")

	// A live watch with a filter: class od, step 6 to 12, stream enfo
	// (a WHERE predicate).
	p.set(`#watch-fields [name="class"]`, "od")
	p.set(`#watch-fields [name="step.min"]`, "6")
	p.set(`#watch-fields [name="step.max"]`, "12")
	p.set("#where", "stream = 'enfo'")
	p.startSub("s1", "live")
	if got := p.text("#sub-s1 .sub-filter"); got != `{"class":"od","step":{"between":[6,12]}} WHERE stream = 'enfo'` {
		t.Errorf("shown filter %q", got)
	}
	h.notify(t, mars("od", "enfo", 6))  // mars@1: matches
	h.notify(t, mars("rd", "enfo", 6))  // mars@2: class
	h.notify(t, mars("od", "oper", 7))  // mars@3: WHERE
	h.notify(t, mars("od", "enfo", 13)) // mars@4: step
	h.notify(t, mars("od", "enfo", 12)) // mars@5: matches
	// Events come in sequence order, so once mars@5 shows, every row
	// before it that would show is there.
	p.waitRows("s1", "mars@5", "mars@1")
	if got := p.text("#sub-s1 tbody tr td.ident"); got != "class=od date=20250706 domain=g expver=0001 step=12 stream=enfo time=1200" {
		t.Errorf("identifier shown %q", got)
	}
	p.click("#sub-s1 tbody tr summary")
	if got := p.text("#sub-s1 tbody tr details[open] pre"); got != "{\n  \"step\": 12\n}" {
		t.Errorf("expanded payload %q", got)
	}
	if got := p.text("#sub-s1 .count"); got != "2 events" {
		t.Errorf("count %q", got)
	}
	shot("2-watch")

	// Paused: a new event is held, not shown; resumed: it shows.
	p.click("#sub-s1 .pause")
	p.wait("s1 paused", `document.querySelector("#sub-s1").dataset.paused !== undefined`)
	h.notify(t, mars("od", "enfo", 8)) // mars@6
	p.wait("mars@6 held", `document.querySelector("#sub-s1").dataset.total === "3"`)
	if got := p.rows("s1"); !reflect.DeepEqual(got, []string{"mars@5", "mars@1"}) {
		t.Errorf("rows while paused %q", got)
	}
	if got := p.text("#sub-s1 .held"); got != "1 held" {
		t.Errorf("held %q", got)
	}
	shot("3-paused")
	p.click("#sub-s1 .pause")
	p.waitRows("s1", "mars@6", "mars@5", "mars@1")
	// The rate chart counts the three events within its last minute.
	p.wait("the rate chart counting 3", `(document.querySelector("#sub-s1 .chart").dataset.counts || "").split(",").reduce((a, b) => a + Number(b), 0) === 3`)
	shot("4-resumed")

	// A replay from sequence 1 of class od: exactly the stored rows,
	// then the end.
	p.set(`#watch-fields [name="step.min"]`, "")
	p.set(`#watch-fields [name="step.max"]`, "")
	p.set("#where", "")
	p.click(`#watch-form [name=kind][value=replay]`)
	p.set("#from_id", "1")
	p.startSub("s2", "ended")
	p.waitRows("s2", "mars@6", "mars@5", "mars@4", "mars@3", "mars@1")
	if got := p.text("#sub-s2 .sub-note"); got != "replay complete" {
		t.Errorf("replay note %q", got)
	}
	phases := eval[[]string](p, "read the phases", `Array.from(document.querySelectorAll("#sub-s2 tbody tr"), (r) => r.dataset.phase)`)
	if want := []string{"history", "history", "history", "history", "history"}; !reflect.DeepEqual(phases, want) {
		t.Errorf("replay phases %q", phases)
	}
	shot("5-replay")
	if engine == "in_memory" {
		// The README's picture (docs/console.png is a copy), small.
		if _, err := chromedp.Call(tab.Ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 1200, Height: 640, DeviceScaleFactor: 1}); err != nil {
			t.Fatal(err)
		}
		eval[bool](p, "scroll to the top", `(window.scrollTo(0, 0), document.activeElement.blur(), true)`)
		shot("readme")
		if _, err := chromedp.Call(tab.Ctx, emulation.ClearDeviceMetricsOverride, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
	}

	// A watch from a date: history since then, then live.
	p.click(`#watch-form [name=kind][value=watch]`)
	p.set("#from_id", "")
	p.set(`#watch-fields [name="class"]`, "rd")
	p.set("#from_date", "2000-01-01T00:00")
	p.startSub("s3", "live")
	p.waitRows("s3", "mars@2")
	if got := p.text("#sub-s3 .sub-filter"); !strings.HasSuffix(got, " from "+time.Date(2000, 1, 1, 0, 0, 0, 0, time.Local).UTC().Format(time.RFC3339)) {
		t.Errorf("from-date filter %q", got)
	}
	p.set("#from_date", "")

	// Publish from the form: stored (read back from the API) and seen
	// live by s1, whose filter it matches.
	for sel, v := range map[string]string{"class": "od", "stream": "enfo", "step": "9", "date": "2025-07-06", "time": "12:00", "domain": "g"} {
		p.set(`#notify-fields [name="`+sel+`"]`, v)
	}
	p.set("#payload", `{"path": "/data/od/enfo/20250706/12/step9.grib"}`)
	p.click("#notify-form button[type=submit]")
	p.wait("the publish done", `document.querySelector("#notify-form").dataset.state === "done"`)
	if got := p.text("#notify-form .form-result"); !regexp.MustCompile(`^stored as mars@7 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(request [0-9a-f-]{36}\)$`).MatchString(got) {
		t.Errorf("publish result %q", got)
	}
	p.waitRows("s1", "mars@7", "mars@6", "mars@5", "mars@1")
	got := h.replay(t, `{"event_type":"mars","identifier":{"class":"od"},"from_id":"7"}`)
	if len(got) != 1 || got[0]["id"] != "mars@7" ||
		!reflect.DeepEqual(got[0]["data"], map[string]any{
			"identifier": map[string]any{"class": "od", "date": "20250706", "domain": "g", "expver": "0001", "step": "9", "stream": "enfo", "time": "1200"},
			"payload":    map[string]any{"path": "/data/od/enfo/20250706/12/step9.grib"}}) {
		t.Errorf("stored after the publish: %v", got)
	}
	shot("6-published")

	// A bad filter: the form shows the server's own error, and no
	// subscription is left behind.
	p.set(`#watch-fields [name="class"]`, "od")
	p.set("#where", "step >")
	p.click("#watch-form button[type=submit]")
	p.wait("the filter error", `!document.querySelector("#watch-form .form-error").hidden`)
	status, body := post(t, h.url+"/api/v1/watch", "", `{"event_type":"mars","identifier":{"class":"od"},"where":"step >"}`)
	if status != http.StatusBadRequest {
		t.Fatalf("the same watch over HTTP: %d %v", status, body)
	}
	if code, msg := p.text("#watch-form .error-code"), p.text("#watch-form .error-message"); code != body["code"].(string)+":" || msg != body["message"] {
		t.Errorf("shown error %q %q, want the server's %q %q", code, msg, body["code"], body["message"])
	}
	if n := eval[int](p, "count the subscriptions", `document.querySelectorAll(".sub").length`); n != 3 {
		t.Errorf("%d subscriptions after the refused one, want 3", n)
	}
	// A bad publish shows the server's error too.
	p.set(`#notify-fields [name="step"]`, "400")
	p.click("#notify-form button[type=submit]")
	p.wait("the publish error", `document.querySelector("#notify-form").dataset.state === "error"`)
	status, body = post(t, h.url+"/api/v1/notification", "", mars("od", "enfo", 400))
	if status != http.StatusBadRequest {
		t.Fatalf("the same notify over HTTP: %d %v", status, body)
	}
	if msg := p.text("#notify-form .error-message"); msg != body["message"] {
		t.Errorf("shown publish error %q, want the server's %q", msg, body["message"])
	}
	shot("7-errors")

	// A spatial filter: a point inside the alerts' polygons.
	p.pick("alert")
	inputs = eval[[]string](p, "read the alert filter inputs", `Array.from(document.querySelectorAll("#watch-fields [name]"), (e) => e.name + ":" + (e.type || e.tagName))`)
	if want := []string{"date:date", "polygon:text", "point:text", "region:select-one", "severity.min:number", "severity.max:number"}; !reflect.DeepEqual(inputs, want) {
		t.Errorf("alert filter inputs %q, want %q", inputs, want)
	}
	p.set("#where", "")
	p.set(`#watch-fields [name="region"]`, "europe")
	p.set(`#watch-fields [name="point"]`, "52.5")
	p.click("#watch-form button[type=submit]")
	p.wait("the point error", `document.querySelector("#watch-form .error-message").textContent.startsWith("point:")`)
	if got := p.text("#watch-form .form-error"); got != "INVALID_INPUT: point: write it as lat,lon (for example 52.5,13.4)" {
		t.Errorf("bad point: %q", got)
	}
	p.set(`#watch-fields [name="point"]`, "52.5, 13.5")
	p.startSub("s4", "live")
	alert := func(lat float64) string {
		return fmt.Sprintf(`{"event_type":"alert","identifier":{"region":"europe","severity":4,"date":"20250706","polygon":[[%[1]g,13.4],[%[2]g,13.5],[%[1]g,13.6],[%[3]g,13.5],[%[1]g,13.4]]},"payload":{"text":"storm"}}`,
			lat, lat+0.1, lat-0.1)
	}
	h.notify(t, alert(52.5)) // alert@1: holds the point
	h.notify(t, alert(48.5)) // alert@2: elsewhere
	h.notify(t, alert(52.5)) // alert@3
	p.waitRows("s4", "alert@3", "alert@1")
	shot("8-spatial")

	if d := eval[string](p, "read the duplicates", `Array.from(document.querySelectorAll(".sub"), (s) => s.dataset.duplicates).join()`); d != "0,0,0,0" {
		t.Errorf("duplicates per subscription %s", d)
	}
	p.clean()
}

// authConfig protects mars: reading needs a user, writing an admin; and
// it restricts cross-origin requests to another site.
const authConfig = `
application:
  host: 127.0.0.1
  port: 0
  # The console's own origin needs no entry.
  cors: {allowed_origins: [https://dashboard.example.org]}
notification_backend: {kind: in_memory}
auth:
  enabled: true
  mode: trusted_proxy
  jwt_secret: console-test-secret
  admin_roles: {ecmwf: [admin]}
notification_schema:
  mars:
    auth: {required: true}
    topic: {base: mars, key_order: [class, step]}
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true}
      step: {type: IntHandler, range: [0, 360], required: false}
`

func testAuth(t *testing.T, tab *browsertest.Tab) {
	cfg, path := fromYAML(t, authConfig)
	h := start(t, cfg, path)
	p := open(t, tab, h.url)
	p.pick("mars")
	p.set(`#watch-fields [name="class"]`, "od")

	// Without a token: the server's refusal, shown by the form.
	p.click("#watch-form button[type=submit]")
	p.wait("the auth error", `!document.querySelector("#watch-form .form-error").hidden`)
	if got := p.text("#watch-form .form-error"); got != "UNAUTHORIZED: "+auth.MsgStreamAuthRequired {
		t.Errorf("without a token: %q", got)
	}
	p.shot("console-auth-1-no-token")

	// A bad token is refused by name.
	p.set("#token", "not-a-token")
	p.click("#token-use")
	p.wait("the token refused", `document.querySelector("#auth-status").dataset.state === "error"`)
	if got := p.text("#auth-status"); got != "UNAUTHORIZED: "+auth.MsgInvalidToken {
		t.Errorf("bad token: %q", got)
	}

	// A good one: signed in, kept in sessionStorage only.
	tok := jwtFor(t, "console-test-secret", "alice", "admin")
	p.set("#token", tok)
	p.click("#token-use")
	p.wait("signed in", `document.querySelector("#auth-status").dataset.state === "ok"`)
	if got := p.text("#auth-status"); got != "signed in as alice (admin)" {
		t.Errorf("auth status %q", got)
	}
	if got := eval[[]string](p, "read the storage", `[sessionStorage.getItem("herald.console.token"), String(localStorage.length), document.querySelector("#token").value]`); !reflect.DeepEqual(got, []string{tok, "0", ""}) {
		t.Errorf("sessionStorage token, localStorage size, token field: %q", got)
	}
	p.startSub("s1", "live")
	p.set(`#notify-fields [name="class"]`, "od")
	p.set(`#notify-fields [name="step"]`, "3")
	p.click("#notify-form button[type=submit]")
	p.wait("the publish done", `document.querySelector("#notify-form").dataset.state === "done"`)
	p.waitRows("s1", "mars@1")
	p.shot("console-auth-2-signed-in")

	// Forgotten: the session restarts without credentials; the
	// subscription cannot resume and says why, and a publish is refused.
	p.click("#token-forget")
	p.wait("s1 refused", `document.querySelector("#sub-s1").dataset.state === "error"`)
	if got := p.text("#sub-s1 .sub-note"); got != "UNAUTHORIZED: "+auth.MsgStreamAuthRequired {
		t.Errorf("s1 after forgetting the token: %q", got)
	}
	p.click("#notify-form button[type=submit]")
	p.wait("the publish refused", `document.querySelector("#notify-form").dataset.state === "error"`)
	status, body := post(t, h.url+"/api/v1/notification", "", `{"event_type":"mars","identifier":{"class":"od","step":3}}`)
	if got := p.text("#notify-form .form-error"); status != http.StatusUnauthorized || got != body["code"].(string)+": "+body["message"].(string) {
		t.Errorf("publish without a token shows %q; the API answers %d %v", got, status, body)
	}
	if got := eval[int](p, "read the storage", `sessionStorage.length`); got != 0 {
		t.Errorf("sessionStorage holds %d items after forgetting", got)
	}
	p.shot("console-auth-3-forgotten")
	p.clean()
}

// jwtFor mints an HS256 token of realm ecmwf.
func jwtFor(t *testing.T, secret, user string, roles ...string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"username": user, "realm": "ecmwf", "roles": roles, "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// resumeConfig has one event type whose step range a reload changes.
const resumeConfig = `
application: {host: 127.0.0.1, port: 0}
notification_backend: {kind: in_memory}
notification_schema:
  mars:
    topic: {base: mars, key_order: [class, step]}
    identifier:
      class: {type: EnumHandler, values: [od, rd], required: true}
      step: {type: IntHandler, range: [0, 360], required: false}
`

func small(class string, step int) string {
	return fmt.Sprintf(`{"event_type":"mars","identifier":{"class":%q,"step":%d}}`, class, step)
}

// testResumeAfterReload: a reload that changes the event type ends the
// subscription (schema_changed, with a resume id); the console
// subscribes again from it by itself. A notification published while it
// does so is shown once.
func testResumeAfterReload(t *testing.T, tab *browsertest.Tab) {
	cfg, path := fromYAML(t, resumeConfig)
	h := start(t, cfg, path)
	p := open(t, tab, h.url)
	p.pick("mars")
	p.set(`#watch-fields [name="class"]`, "od")
	p.startSub("s1", "live")
	h.notify(t, small("od", 1))
	p.waitRows("s1", "mars@1")

	if err := os.WriteFile(path, []byte(strings.Replace(resumeConfig, "range: [0, 360]", "range: [0, 400]", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := h.srv.Reload(context.Background(), server.ReloadOptions{Trigger: "test"})
	if err != nil || !reflect.DeepEqual(rep.Changed, []string{"mars"}) || rep.StreamsEnded != 1 {
		t.Fatalf("reload: %+v %v", rep, err)
	}
	h.notify(t, small("od", 380)) // mars@2, valid only under the new schema
	h.notify(t, small("rd", 2))   // mars@3, not matching
	p.wait("s1 resumed", `document.querySelector("#sub-s1").dataset.restarts === "1" && document.querySelector("#sub-s1").dataset.state === "live"`)
	h.notify(t, small("od", 3)) // mars@4
	p.waitRows("s1", "mars@4", "mars@2", "mars@1")
	if got := p.text("#sub-s1 .resumes"); got != "· resumed once, last from mars@2 after schema_changed" {
		t.Errorf("resumes %q", got)
	}
	// The form follows the new schema and keeps what was typed.
	if got := eval[string](p, "read the class", `document.querySelector('#watch-fields [name="class"]').value`); got != "od" {
		t.Errorf("class after the reload %q", got)
	}
	p.wait("the new step range", `document.querySelector('#watch-fields [name="step.max"]').placeholder === "≤ 400"`)
	if d := p.text("#sub-s1 .count"); d != "3 events" || eval[string](p, "read duplicates", `document.querySelector("#sub-s1").dataset.duplicates`) != "0" {
		t.Errorf("count %q, duplicates seen", d)
	}
	p.shot("console-resume-after-reload")
	p.clean()
}

// testResumeAfterMaxDuration: connection_max_duration_sec ends every
// subscription after a second with a resume id; the console goes on
// from it, so a long watch shows everything once.
func testResumeAfterMaxDuration(t *testing.T, tab *browsertest.Tab) {
	cfg, path := fromYAML(t, resumeConfig+"watch_endpoint: {connection_max_duration_sec: 1}\n")
	h := start(t, cfg, path)
	p := open(t, tab, h.url)
	p.pick("mars")
	p.set(`#watch-fields [name="class"]`, "od")
	p.startSub("s1", "live")
	h.notify(t, small("od", 1)) // mars@1
	p.waitRows("s1", "mars@1")
	p.wait("s1 resumed", `document.querySelector("#sub-s1").dataset.restarts === "1"`)
	h.notify(t, small("rd", 1)) // mars@2
	h.notify(t, small("od", 2)) // mars@3
	p.waitRows("s1", "mars@3", "mars@1")
	if got := eval[string](p, "read the last resume", `document.querySelector("#sub-s1 .resumes").dataset.last`); !regexp.MustCompile(`^from mars@[0-9]+ after max_duration$`).MatchString(got) {
		t.Errorf("last resume %q", got)
	}
	if d := eval[string](p, "read duplicates", `document.querySelector("#sub-s1").dataset.duplicates`); d != "0" {
		t.Errorf("%s duplicates", d)
	}
	p.shot("console-resume-after-max-duration")
	p.clean()
}

// testResumeAfterConnectionLoss: the connection is cut and refused for a
// while, during which a notification is stored; the console reconnects
// with backoff and resumes from its last sequence: nothing twice,
// nothing missed.
func testResumeAfterConnectionLoss(t *testing.T, tab *browsertest.Tab) {
	cfg, path := fromYAML(t, resumeConfig)
	h := start(t, cfg, path)
	px := testkit.NewProxy(t, h.url)
	p := open(t, tab, "http://"+px.Addr())
	p.pick("mars")
	p.set(`#watch-fields [name="class"]`, "od")
	p.startSub("s1", "live")
	p.set(`#watch-fields [name="class"]`, "rd")
	p.startSub("s2", "live")
	h.notify(t, small("rd", 1)) // mars@1
	h.notify(t, small("od", 1)) // mars@2
	p.waitRows("s1", "mars@2")
	p.waitRows("s2", "mars@1")

	px.Down()
	p.wait("the loss seen", `document.querySelector("#conn-status").dataset.state === "closed" && document.querySelector("#sub-s1").dataset.state === "waiting"`)
	h.notify(t, small("od", 2)) // mars@3, while disconnected
	h.notify(t, small("rd", 2)) // mars@4
	p.shot("console-connection-lost")
	px.Up()
	p.wait("reconnected", `document.body.dataset.connections === "2"`)
	h.notify(t, small("od", 3)) // mars@5
	p.waitRows("s1", "mars@5", "mars@3", "mars@2")
	p.waitRows("s2", "mars@4", "mars@1")
	for _, s := range []string{"s1", "s2"} {
		got := eval[[]string](p, "read "+s, `(() => { const e = document.querySelector("#sub-`+s+`"); return [e.dataset.state, e.dataset.restarts, e.dataset.duplicates, e.querySelector(".resumes").textContent]; })()`)
		want := []string{"live", "1", "0", "· resumed once, last from sequence " + map[string]string{"s1": "3", "s2": "2"}[s] + " after a reconnect"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: state, restarts, duplicates, note %q, want %q", s, got, want)
		}
	}
	p.shot("console-resume-after-connection-loss")
	p.clean()
}

// testPolicyInForce: the page runs under its Content-Security-Policy: an
// inline script added to it does not run, and the console reports the
// refusal as a script error (so that any refusal of its own would fail
// the other tests).
func testPolicyInForce(t *testing.T, tab *browsertest.Tab) {
	h := start(t, shipped(t, "in_memory"), "")
	before := len(tab.Problems())
	p := open(t, tab, h.url)
	ran := eval[bool](p, "add an inline script", `(() => { const s = document.createElement("script");
	  s.textContent = "window.inlineRan = true"; document.body.append(s); return window.inlineRan === true; })()`)
	if ran {
		t.Fatal("an inline script ran: the policy is not in force")
	}
	p.wait("the refusal counted", `document.body.dataset.policyViolations === "1"`)
	// The console.error event travels to the test on its own.
	testkit.WaitFor(t, Deadline, "the console.error event", func() bool { return len(tab.Problems()) > before })
	if got := tab.Problems()[before:]; len(got) != 1 || got[0] != `console.error: "Content-Security-Policy refused script-src-elem inline"` {
		t.Errorf("reported %q", got)
	}
}
