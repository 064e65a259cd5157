package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// servedPage is the docs page as DocsPage serves it.
func servedPage(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	DocsPage(rec, httptest.NewRequest(http.MethodGet, "/swagger-ui/", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("Content-Type %q, want text/html; charset=utf-8", ct)
	}
	return rec.Body.String()
}

// prose is page without its scripts, preformatted blocks and code spans:
// the text that Markdown must not show raw.
func prose(page string) string {
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?s)<pre>.*?</pre>`),
		regexp.MustCompile(`(?s)<code>.*?</code>`),
		regexp.MustCompile(`(?s)<textarea[^>]*>.*?</textarea>`),
		regexp.MustCompile(`data-body="[^"]*"`),
	} {
		page = re.ReplaceAllString(page, "")
	}
	return page
}

// TestDocsPage: the page lists every operation once in the index and
// once as a section with its details rendered, shows the descriptions'
// Markdown as HTML (no raw Markdown left), and is self-contained.
func TestDocsPage(t *testing.T) {
	body := servedPage(t)
	for _, r := range routes {
		id := opID(r.method, r.path)
		entry := `<li><a href="#` + id + `"><code>` + r.method + " " + r.path + "</code></a>"
		if strings.Count(body, entry) != 1 {
			t.Errorf("the index lists %q %d times, want once", entry, strings.Count(body, entry))
		}
		section := fmt.Sprintf(`<section class="op" id="%s" data-method="%s" data-path="%s">`, id, strings.ToLower(r.method), r.path)
		i := strings.Index(body, section)
		if i < 0 || strings.Count(body, section) != 1 {
			t.Errorf("page has section %q %d times, want once", section, strings.Count(body, section))
			continue
		}
		sec := body[i : i+strings.Index(body[i:], "</section>")]
		if !strings.Contains(sec, "<h3>Responses</h3>") || strings.Count(sec, "<details><summary><code>") != len(r.statuses) {
			t.Errorf("section %s does not show its %d responses", id, len(r.statuses))
		}
	}
	if n := strings.Count(body, `<section class="op"`); n != len(routes) {
		t.Errorf("%d operation sections, want %d", n, len(routes))
	}

	// Markdown is rendered on the server.
	text := prose(body)
	for _, raw := range []string{"**", "`", "](", "<!-- raw HTML omitted -->"} {
		if i := strings.Index(text, raw); i >= 0 {
			t.Errorf("the page shows %q as text: …%s…", raw, text[max(0, i-80):min(len(text), i+80)])
		}
	}
	for _, frag := range []string{
		// From info.description.
		"<strong>Request id.</strong>",
		"(<code>POST /api/v1/notification</code>)",
		// A parameter's description.
		"<td>query</td><td><div class=\"md\"><p><code>true</code> applies a reload",
	} {
		if !strings.Contains(body, frag) {
			t.Errorf("page lacks %s", frag)
		}
	}

	// Self-contained: it loads its own script and stylesheet, served
	// beside it, and nothing else; nothing is inline (its policy forbids
	// it), and the forms fetch only this server's paths.
	assets := `<link rel="stylesheet" href="/swagger-ui/docs.css">` + "\n" + `<script src="/swagger-ui/docs.js" defer></script>`
	if strings.Count(body, assets) != 1 {
		t.Errorf("page lacks its script and stylesheet %s", assets)
	}
	rest := strings.Replace(body, assets, "", 1)
	for _, bad := range []string{"src=", "<link", "<script", "<style", "style=", "@import", "url(", "<img", "<iframe", "<object", "<embed", "srcset"} {
		if strings.Contains(rest, bad) {
			t.Errorf("page contains %q: it must load nothing else and hold nothing inline", bad)
		}
	}
	if m := regexp.MustCompile(`<[a-z][^>]*\son[a-z]+=`).FindString(rest); m != "" {
		t.Errorf("page has an inline event handler: %s", m)
	}
	// It opens with the list of endpoints: right under the title.
	if i, j := strings.Index(body, "</h1>"), strings.Index(body, `<nav id="endpoints"><h2>Endpoints</h2><ul>`); i < 0 || j != i+len("</h1>\n") {
		t.Errorf("the endpoint list does not follow the title: </h1> at %d, the list at %d", i, j)
	}
	for _, m := range regexp.MustCompile(`data-path="([^"]*)"`).FindAllStringSubmatch(body, -1) {
		if !strings.HasPrefix(m[1], "/") {
			t.Errorf("a form sends to %q, not a path of this server", m[1])
		}
	}
}

// TestDocsPageTryForms: exactly the operations whose answers are JSON,
// and the streaming ones (watch and replay, whose forms show the events
// and have a Stop button), get a form, hidden until the script shows it,
// with the path parameter's example, the query parameter, an
// Authorization field where credentials are taken, and the body
// prefilled from the first example.
func TestDocsPageTryForms(t *testing.T) {
	body := servedPage(t)
	var forms []string
	for _, m := range regexp.MustCompile(`<form class="try" id="try-([^"]+)" data-method="([A-Z]+)" data-path="([^"]+)"( data-stream="")? hidden>`).FindAllStringSubmatch(body, -1) {
		if m[1] != opID(m[2], m[3]) {
			t.Errorf("form %s is for %s %s", m[1], m[2], m[3])
		}
		if m[4] != "" {
			m[3] += " (stream)"
		}
		forms = append(forms, m[2]+" "+m[3])
	}
	want := []string{
		"GET /health", "GET /ready", "GET /api-docs/openapi.json", "GET /api-docs/asyncapi.json",
		"GET /api/v1/schema", "GET /api/v1/schema/{event_type}", "GET /schema/{event_type}", "POST /api/v1/notification", "POST /api/v1/notifications", "POST /api/v1/events/{event_type}",
		"POST /api/v1/watch (stream)", "POST /api/v1/replay (stream)",
		"DELETE /api/v1/admin/notification/{notification_id}", "DELETE /api/v1/admin/wipe/stream",
		"DELETE /api/v1/admin/wipe/all", "POST /api/v1/admin/reload",
	}
	if !reflect.DeepEqual(forms, want) {
		t.Fatalf("try forms\n got %q\nwant %q", forms, want)
	}
	form := func(method, path string) string {
		start := `<form class="try" id="try-` + opID(method, path) + `"`
		i := strings.Index(body, start)
		return body[i : i+strings.Index(body[i:], "</form>")]
	}

	var doc struct {
		Paths map[string]map[string]struct {
			Parameters  []map[string]any `json:"parameters"`
			RequestBody struct {
				Content map[string]struct {
					Examples map[string]struct {
						Value any `json:"value"`
					} `json:"examples"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			Parameters map[string]map[string]any `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	// The path parameter is prefilled with its example.
	eventType := doc.Components.Parameters["EventType"]["example"].(string)
	if f := form("GET", "/api/v1/schema/{event_type}"); !strings.Contains(f, `<input name="event_type" data-in="path" value="`+html.EscapeString(eventType)+`" placeholder="" required>`) {
		t.Errorf("schema form:\n%s", f)
	}
	// The query parameter is empty, its example a placeholder.
	if f := form("POST", "/api/v1/admin/reload"); !strings.Contains(f, `<input name="force" data-in="query" value="" placeholder="true">`) {
		t.Errorf("reload form:\n%s", f)
	}
	// Public operations take no credentials.
	if strings.Contains(form("GET", "/health"), "Authorization") || !strings.Contains(form("POST", "/api/v1/notification"), `name="Authorization"`) {
		t.Error("the Authorization field is where credentials are not taken, or missing where they are")
	}
	// The body is the first example, as JSON the document holds, and a
	// menu offers every example.
	f := form("POST", "/api/v1/notification")
	m := regexp.MustCompile(`(?s)<textarea name="body" rows="\d+" spellcheck="false">(.*?)</textarea>`).FindStringSubmatch(f)
	if m == nil {
		t.Fatalf("no body field:\n%s", f)
	}
	var prefilled any
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &prefilled); err != nil {
		t.Fatalf("prefilled body %s: %v", m[1], err)
	}
	first := firstExampleKey(t, "/api/v1/notification")
	exs := doc.Paths["/api/v1/notification"]["post"].RequestBody.Content["application/json"].Examples
	if !reflect.DeepEqual(prefilled, exs[first].Value) {
		t.Errorf("prefilled body %v, want the example %q: %v", prefilled, first, exs[first].Value)
	}
	if n := strings.Count(f, "<option "); n != len(exs) {
		t.Errorf("%d examples offered, want %d", n, len(exs))
	}
	// A stream's form: its body, Send and Stop, and the list the events
	// go to.
	for _, path := range []string{"/api/v1/watch", "/api/v1/replay"} {
		f := form("POST", path)
		for _, part := range []string{`<textarea name="body"`, `name="Authorization"`, `<button type="submit">Send</button> <button type="button" class="try-stop" disabled>Stop</button>`,
			`<ol class="try-events"></ol>`} {
			if !strings.Contains(f, part) {
				t.Errorf("%s form lacks %s:\n%s", path, part, f)
			}
		}
	}
}

// withRequestID is a recorder holding the X-Request-ID header that
// package api's middleware sets before any handler runs.
func withRequestID() *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Request-ID", "0b9f6bde-5c43-4f0a-9f77-2a1c3c8f0e11")
	return rec
}

// TestDocsAssets: the page's script and stylesheet are served with the
// page's policy, as the document describes them; another name is the
// router's 404. The page is served with the same policy.
func TestDocsAssets(t *testing.T) {
	notFound := func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no route", http.StatusNotFound) }
	for name, want := range map[string]struct {
		ct   string
		body []byte
	}{"docs.js": {"text/javascript; charset=utf-8", docsScript}, "docs.css": {"text/css; charset=utf-8", docsStyle}} {
		rec := withRequestID()
		DocsAsset(notFound)(rec, httptest.NewRequest(http.MethodGet, "/swagger-ui/"+name, nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != want.ct || !bytes.Equal(rec.Body.Bytes(), want.body) ||
			rec.Header().Get("Content-Security-Policy") != DocsPolicy || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %v", name, rec.Code, rec.Header())
		}
		for _, e := range CheckResponse(http.MethodGet, "/swagger-ui/{file}", rec.Code, rec.Header(), rec.Body.Bytes()) {
			t.Errorf("%s: %v", name, e)
		}
	}
	rec := httptest.NewRecorder()
	DocsAsset(notFound)(rec, httptest.NewRequest(http.MethodGet, "/swagger-ui/other.js", nil))
	if rec.Code != http.StatusNotFound || rec.Body.String() != "no route\n" {
		t.Errorf("other.js: %d %q", rec.Code, rec.Body.String())
	}
	rec = withRequestID()
	DocsPage(rec, httptest.NewRequest(http.MethodGet, "/swagger-ui/", nil))
	if got := rec.Header().Get("Content-Security-Policy"); got != DocsPolicy {
		t.Errorf("page policy %q", got)
	}
	for _, e := range CheckResponse(http.MethodGet, "/swagger-ui/", rec.Code, rec.Header(), rec.Body.Bytes()) {
		t.Error(e)
	}
}

// firstExampleKey is the name of the first example of an operation's
// POST JSON body, in document order.
func firstExampleKey(t *testing.T, path string) string {
	t.Helper()
	root, err := parseTree(spec)
	if err != nil {
		t.Fatal(err)
	}
	exs := root.get("paths").get(path).get("post").get("requestBody").get("content").get("application/json").get("examples")
	if exs == nil || len(exs.keys) == 0 {
		t.Fatalf("%s has no body examples", path)
	}
	return exs.keys[0]
}

// TestMarkdownRendering: descriptions are CommonMark rendered safely:
// formatting becomes HTML, raw HTML is shown as text, dangerous links
// lose their destination and images become links.
func TestMarkdownRendering(t *testing.T) {
	p := &pager{md: newMarkdown()}
	cases := []struct{ in, want string }{
		{"Use `code` and **bold**.", `<div class="md"><p>Use <code>code</code> and <strong>bold</strong>.</p>` + "\n</div>"},
		{"```json\n{\"a\": 1}\n```", `<div class="md"><pre><code class="language-json">{&quot;a&quot;: 1}` + "\n</code></pre>\n</div>"},
		{"| a | b |\n|---|---|\n| `x` | y |", "<div class=\"md\"><table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td><code>x</code></td>\n<td>y</td>\n</tr>\n</tbody>\n</table>\n</div>"},
		{"- one\n- two", "<div class=\"md\"><ul>\n<li>one</li>\n<li>two</li>\n</ul>\n</div>"},
		{"a <b>bold</b> <script>x</script>", `<div class="md"><p>a &lt;b&gt;bold&lt;/b&gt; &lt;script&gt;x&lt;/script&gt;</p>` + "\n</div>"},
		{"<div onclick=\"x()\">\nblock\n</div>", `<div class="md"><p>&lt;div onclick=&#34;x()&#34;&gt;` + "\nblock\n" + `&lt;/div&gt;</p>` + "\n</div>"},
		{"[run](javascript:alert(1)) [ok](https://example.org/a)", `<div class="md"><p><a href="">run</a> <a href="https://example.org/a">ok</a></p>` + "\n</div>"},
		{"![logo](https://cdn.example.org/x.png) ![](javascript:x)", `<div class="md"><p><a href="https://cdn.example.org/x.png">logo</a> image</p>` + "\n</div>"},
		{"  ", ""},
	}
	for _, c := range cases {
		if got := p.markdown(c.in); got != c.want {
			t.Errorf("markdown(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	if got := p.inlineMarkdown(firstSentence("The `a. b` field. More.")); got != "The <code>a. b</code> field." {
		t.Errorf("inline first sentence: %q", got)
	}
}

// TestRenderPageSynthetic renders a small document and checks the
// server-side parts exactly: schema facts, references as links, the
// expanded body schema, examples in document order, and the security
// line.
func TestRenderPageSynthetic(t *testing.T) {
	doc := `{"info":{"title":"T","version":"1","description":"Intro with ` + "`x`" + `."},
"security":[{},{"bearer":[]}],
"paths":{"/things/{id}":{"post":{"summary":"Make","description":"Makes **one**.",
 "parameters":[{"name":"id","in":"path","required":true,"description":"The id.","schema":{"type":"integer","format":"int64","minimum":1},"example":7}],
 "requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"},
  "examples":{"b":{"summary":"Second key first","value":{"z":1,"a":"<x>"}},"a":{"value":{}}}}}},
 "responses":{"200":{"description":"Made. Really.","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Thing"}}}}}}}},
"components":{"securitySchemes":{"bearer":{"type":"http","scheme":"bearer","description":"A *JWT*."}},
 "schemas":{"Thing":{"type":"object","required":["z"],"additionalProperties":false,
  "properties":{"z":{"type":["integer","null"],"description":"Zed."},"a":{"$ref":"#/components/schemas/Name"}}},
  "Name":{"type":"string","enum":["x","y"]}}}}`
	out, err := renderPage([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	for _, frag := range []string{
		`<div id="info"><div class="md"><p>Intro with <code>x</code>.</p>`,
		`<div class="details"><div class="md"><p>Makes <strong>one</strong>.</p>` + "\n</div>" +
			`<p class="muted">Credentials: <a href="#security-bearer">bearer</a> (optional: only when the deployment enables authentication).</p>`,
		`<tr><td><code>id</code> <span class="req">required</span></td><td>path</td><td><div class="md"><p>The id.</p>` + "\n</div>" +
			`<span class="type">integer; format int64; minimum 1</span><div>Example: <code>7</code></div></td></tr>`,
		`<h3>Request body <span class="req">required</span></h3><h4><code>application/json</code></h4><div><a href="#schema-Thing">Thing</a></div>` +
			`<div class="schema"><span class="type">object</span><table class="props"><tr><th>field</th><th>schema</th></tr>` +
			`<tr><td><code>z</code> <span class="req">required</span></td><td><div class="schema"><span class="type">integer | null</span><div class="md"><p>Zed.</p>` + "\n</div></div></td></tr>" +
			`<tr><td><code>a</code></td><td><a href="#schema-Name">Name</a></td></tr></table><div class="muted">No other fields.</div></div>` +
			"<details><summary>example: Second key first</summary><pre>{\n  &#34;z&#34;: 1,\n  &#34;a&#34;: &#34;&lt;x&gt;&#34;\n}</pre></details>" +
			"<details><summary>example: a</summary><pre>{}</pre></details>",
		`<details><summary><code>200</code> Made.</summary>`,
		`<section id="schema-Name"><h3>Name</h3><div class="schema"><span class="type">string; one of &#34;x&#34;, &#34;y&#34;</span></div></section>`,
		`<h3 id="security-bearer">bearer <span class="type">http bearer</span></h3><div class="md"><p>A <em>JWT</em>.</p>`,
		`<input name="id" data-in="path" value="7" placeholder="" required>`,
		"<option value=\"0\" data-body=\"{\n  &#34;z&#34;: 1,\n  &#34;a&#34;: &#34;&lt;x&gt;&#34;\n}\">Second key first</option><option value=\"1\" data-body=\"{}\">a</option>",
		"<textarea name=\"body\" rows=\"5\" spellcheck=\"false\">{\n  &#34;z&#34;: 1,\n  &#34;a&#34;: &#34;&lt;x&gt;&#34;\n}</textarea>",
	} {
		if !strings.Contains(page, frag) {
			t.Errorf("page lacks\n%s", frag)
		}
	}
}

// FuzzParseTree: the page's order-keeping JSON decoder accepts what
// encoding/json accepts (up to its depth limit) and writes it back as the
// same value.
func FuzzParseTree(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"b":1,"a":[true,false,null,"x<&>"],"b":2}`, `"\u2028"`, `1e400`, `{"a":`, `[1,]`, `{} {}`} {
		f.Add([]byte(s))
	}
	f.Add(spec[:2000])
	f.Fuzz(func(t *testing.T, doc []byte) {
		n, err := parseTree(doc)
		want, stdErr := decodeNumbers(doc)
		if err != nil {
			if stdErr == nil && !strings.Contains(err.Error(), "nested more than") {
				t.Fatalf("parseTree refused %q (%v), encoding/json accepts it", doc, err)
			}
			return
		}
		if stdErr != nil {
			t.Fatalf("parseTree accepted %q, encoding/json refuses it: %v", doc, stdErr)
		}
		if got, err := decodeNumbers([]byte(n.pretty())); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q written back as %s (%v)", doc, n.pretty(), err)
		}
	})
}

// decodeNumbers decodes one JSON document as encoding/json does, numbers
// as json.Number.
func decodeNumbers(doc []byte) (any, error) {
	if !json.Valid(doc) {
		return nil, errors.New("not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// FuzzMarkdown: whatever a description holds, its HTML has no element or
// attribute that runs a script or loads something.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"**b** `c`", "<script>alert(1)</script>", "<img src=x onerror=y>", "[a](javascript:x)", "![i](http://h/x.png)",
		"<div>\n\n*x*\n\n</div>", "| a |\n|---|\n| <b> |", "[a](<javascript:x>)", "<a href=\"javascript:x\">y</a>", "&lt;script&gt;", "<!-- c -->"} {
		f.Add(s)
	}
	p := &pager{md: newMarkdown()}
	// Text is escaped, so every "<" left starts a tag goldmark wrote.
	tag := regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)([^>]*)>`)
	attr := regexp.MustCompile(`\s([a-zA-Z-]+)="([^"]*)"`)
	allowed := map[string]bool{}
	for _, n := range strings.Fields("div p code pre strong em a ul ol li table thead tbody tr th td h1 h2 h3 h4 h5 h6 blockquote hr br") {
		allowed[n] = true
	}
	f.Fuzz(func(t *testing.T, text string) {
		out := p.markdown(text)
		for _, m := range tag.FindAllStringSubmatch(out, -1) {
			if !allowed[strings.ToLower(m[2])] {
				t.Fatalf("markdown(%q) has a <%s> element: %q", text, m[2], out)
			}
			rest := attr.ReplaceAllStringFunc(m[3], func(a string) string {
				kv := attr.FindStringSubmatch(a)
				name, value := strings.ToLower(kv[1]), strings.ToLower(strings.TrimSpace(html.UnescapeString(kv[2])))
				switch {
				case name == "href" && !regexp.MustCompile(`^(javascript|vbscript|data|file):`).MatchString(value):
				case name == "class" || name == "start" || name == "title":
				case name == "style" && regexp.MustCompile(`^text-align:\s*(left|right|center)$`).MatchString(value):
				default:
					t.Fatalf("markdown(%q) has the attribute %s: %q", text, a, out)
				}
				return ""
			})
			if strings.TrimSpace(strings.TrimSuffix(rest, "/")) != "" {
				t.Fatalf("markdown(%q) has a tag with %q: %q", text, rest, out)
			}
		}
	})
}
