package openapi

import (
	_ "embed"
	"fmt"
	"html"
	"html/template"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
)

// The docs page is rendered whole on the server: the descriptions
// (CommonMark, as HTML), parameters, request and response schemas,
// examples and the schema list are all in the HTML, so the page reads
// the same without JavaScript. Its script (docs.js, served beside it
// with its stylesheet, never inline) only runs the "try it" forms of the
// JSON and streaming operations, which are hidden without it.

//go:embed docs.html
var pageHTML string

var pageTemplate = template.Must(template.New("docs").Funcs(template.FuncMap{
	"opid":  opID,
	"lower": strings.ToLower,
}).Parse(pageHTML))

// pager renders the parts of one document's page.
type pager struct {
	root *node
	md   goldmark.Markdown
}

// pageOp is one operation as the page shows it.
type pageOp struct {
	operation
	Body template.HTML // description, parameters, body, responses
	Try  template.HTML // the "try it" form; empty for non-JSON operations
}

// pageData is what the page template renders.
type pageData struct {
	Title       string
	Version     string
	Summary     string
	Description template.HTML
	DocPath     string
	AsyncPath   string
	Ops         []pageOp
	Security    template.HTML
	Schemas     template.HTML
	AssetPath   string
}

// renderPage renders the docs page of an OpenAPI document.
func renderPage(doc []byte) ([]byte, error) {
	ops, err := operations(doc)
	if err != nil {
		return nil, err
	}
	root, err := parseTree(doc)
	if err != nil {
		return nil, err
	}
	p := &pager{root: root, md: newMarkdown()}
	info := root.get("info")
	data := pageData{
		Title: info.str("title"), Version: info.str("version"), Summary: info.str("summary"),
		Description: template.HTML(p.markdown(info.str("description"))),
		DocPath:     DocumentPath, AsyncPath: AsyncAPIPath,
		Security:  template.HTML(p.securitySchemes()),
		Schemas:   template.HTML(p.schemaList()),
		AssetPath: DocsAssetPrefix,
	}
	paths := root.get("paths")
	for _, o := range ops {
		item := paths.get(o.Path)
		op := item.get(strings.ToLower(o.Method))
		data.Ops = append(data.Ops, pageOp{operation: o, Body: template.HTML(p.operation(item, op)), Try: template.HTML(p.tryForm(o, item, op))})
	}
	var b strings.Builder
	if err := pageTemplate.Execute(&b, data); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// esc escapes text for HTML.
func esc(s string) string { return html.EscapeString(s) }

// deref follows a $ref, or returns n.
func (p *pager) deref(n *node) *node {
	for i := 0; i < 8 && n.has("$ref"); i++ {
		r := p.root.resolve(n.str("$ref"))
		if r == nil {
			return &node{kind: 'o', vals: map[string]*node{}}
		}
		n = r
	}
	return n
}

// refName is the last segment of a reference.
func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

// refLink links a schema reference to its entry in the schema list.
func refLink(ref string) string {
	n := refName(ref)
	if !strings.HasPrefix(ref, "#/components/schemas/") {
		return "<code>" + esc(n) + "</code>"
	}
	return `<a href="#schema-` + esc(n) + `">` + esc(n) + `</a>`
}

// scalarText is a short JSON rendering of a schema keyword's value.
func scalarText(n *node) string {
	if n.kind == 's' {
		return jsonString(n.text)
	}
	var b strings.Builder
	n.json(&b, "")
	return strings.Join(strings.Fields(b.String()), " ")
}

// typeLine summarises the scalar facts of a schema on one line.
func typeLine(s *node) string {
	var bits []string
	if t := s.get("type"); t != nil {
		if t.kind == 'a' {
			var ts []string
			for _, x := range t.items {
				ts = append(ts, x.text)
			}
			bits = append(bits, strings.Join(ts, " | "))
		} else {
			bits = append(bits, t.text)
		}
	}
	if c := s.get("const"); c != nil {
		bits = append(bits, "= "+scalarText(c))
	}
	if e := s.get("enum"); e != nil && e.kind == 'a' {
		var vs []string
		for _, x := range e.items {
			vs = append(vs, scalarText(x))
		}
		bits = append(bits, "one of "+strings.Join(vs, ", "))
	}
	for _, k := range []string{"format", "pattern", "contentMediaType"} {
		if v := s.str(k); v != "" {
			if k == "contentMediaType" {
				bits = append(bits, v)
			} else {
				bits = append(bits, k+" "+v)
			}
		}
	}
	for _, k := range []string{"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "default"} {
		if v := s.get(k); v != nil {
			bits = append(bits, k+" "+scalarText(v))
		}
	}
	if len(bits) == 0 {
		return ""
	}
	return `<span class="type">` + esc(strings.Join(bits, "; ")) + `</span>`
}

// schema renders a schema readably. References are links to the schema
// list, except at the top (expand), where the referenced schema is shown
// in place.
func (p *pager) schema(s *node, expand bool) string {
	switch {
	case s == nil || s.isTrue():
		return `<span class="type">any JSON value</span>`
	case s.isFalse():
		return `<span class="type">nothing</span>`
	case s.kind != 'o':
		return `<span class="type">` + esc(scalarText(s)) + `</span>`
	}
	if ref := s.str("$ref"); ref != "" {
		if !expand {
			return refLink(ref)
		}
		return "<div>" + refLink(ref) + "</div>" + p.schema(p.deref(s), false)
	}
	var b strings.Builder
	b.WriteString(`<div class="schema">` + typeLine(s))
	b.WriteString(p.markdown(s.str("description")))
	if props := s.get("properties"); props != nil && props.kind == 'o' {
		var req []string
		for _, r := range s.list("required") {
			req = append(req, r.text)
		}
		b.WriteString(`<table class="props"><tr><th>field</th><th>schema</th></tr>`)
		for _, k := range props.keys {
			b.WriteString("<tr><td><code>" + esc(k) + "</code>")
			if slices.Contains(req, k) {
				b.WriteString(` <span class="req">required</span>`)
			}
			b.WriteString("</td><td>" + p.schema(props.vals[k], false) + "</td></tr>")
		}
		b.WriteString("</table>")
	}
	if ap := s.get("additionalProperties"); ap != nil {
		switch {
		case ap.isFalse() && s.has("properties"):
			b.WriteString(`<div class="muted">No other fields.</div>`)
		case ap.kind == 'o':
			b.WriteString("<div>Each value: " + p.schema(ap, false) + "</div>")
		}
	}
	if pi := s.list("prefixItems"); pi != nil {
		b.WriteString("<div>Items in order: ")
		for _, x := range pi {
			b.WriteString(p.schema(x, false))
		}
		b.WriteString("</div>")
	}
	if it := s.get("items"); it != nil {
		if it.isFalse() {
			b.WriteString(`<div class="muted">No further items.</div>`)
		} else {
			b.WriteString("<div>Each item: " + p.schema(it, false) + "</div>")
		}
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		alts := s.list(k)
		if alts == nil {
			continue
		}
		label := map[string]string{"oneOf": "Exactly one of:", "anyOf": "Any of:", "allOf": "All of:"}[k]
		b.WriteString("<div>" + label + "<ul>")
		for _, x := range alts {
			b.WriteString("<li>" + p.schema(x, false) + "</li>")
		}
		b.WriteString("</ul></div>")
	}
	if d := s.get("discriminator"); d != nil {
		b.WriteString(`<div class="muted">Told apart by <code>` + esc(d.str("propertyName")) + `</code>`)
		if m := d.get("mapping"); m != nil && m.kind == 'o' {
			b.WriteString(":")
			for i, k := range m.keys {
				if i > 0 {
					b.WriteString(",")
				}
				b.WriteString(" <code>" + esc(k) + "</code> → " + refLink(m.vals[k].text))
			}
		}
		b.WriteString("</div>")
	}
	if cs := s.get("contentSchema"); cs != nil {
		b.WriteString("<div>Each event: " + p.schema(cs, true) + "</div>")
	}
	if ex := s.list("examples"); ex != nil {
		b.WriteString("<details><summary>examples</summary>")
		for _, x := range ex {
			b.WriteString("<pre>" + esc(x.pretty()) + "</pre>")
		}
		b.WriteString("</details>")
	}
	b.WriteString("</div>")
	return b.String()
}

// content renders the media types of a request or response body with
// their schemas and examples.
func (p *pager) content(c *node) string {
	if c == nil || c.kind != 'o' {
		return ""
	}
	var b strings.Builder
	for _, mt := range c.keys {
		m := c.vals[mt]
		b.WriteString("<h4><code>" + esc(mt) + "</code></h4>")
		if s := m.get("schema"); s != nil {
			b.WriteString(p.schema(s, true))
		}
		for _, ex := range examples(p, m) {
			b.WriteString("<details><summary>example: " + p.inlineMarkdown(ex.summary) + "</summary><pre>" + esc(ex.text) + "</pre></details>")
		}
	}
	return b.String()
}

// example is one example of a media type.
type example struct {
	summary string
	text    string // a string example as is, anything else as indented JSON
	value   *node
}

// examples lists the examples of a media type object in document order:
// its examples map, else its example.
func examples(p *pager, m *node) []example {
	var out []example
	if exs := m.get("examples"); exs != nil && exs.kind == 'o' {
		for _, k := range exs.keys {
			e := p.deref(exs.vals[k])
			v := e.get("value")
			if v == nil {
				continue
			}
			summary := e.str("summary")
			if summary == "" {
				summary = k
			}
			out = append(out, example{summary: summary, text: exampleText(v), value: v})
		}
	} else if v := m.get("example"); v != nil {
		out = append(out, example{summary: "example", text: exampleText(v), value: v})
	}
	return out
}

func exampleText(v *node) string {
	if v.kind == 's' {
		return v.text
	}
	return v.pretty()
}

// headers renders the headers of a response.
func (p *pager) headers(h *node) string {
	if h == nil || h.kind != 'o' || len(h.keys) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<table class="params"><tr><th>header</th><th>description</th></tr>`)
	for _, k := range h.keys {
		hd := p.deref(h.vals[k])
		b.WriteString("<tr><td><code>" + esc(k) + "</code>")
		if hd.get("required").isTrue() {
			b.WriteString(` <span class="req">always</span>`)
		}
		b.WriteString("</td><td>" + p.markdown(hd.str("description")))
		if s := hd.get("schema"); s != nil {
			b.WriteString(typeLine(p.deref(s)))
		}
		b.WriteString("</td></tr>")
	}
	b.WriteString("</table>")
	return b.String()
}

// security says which credentials an operation takes.
func (p *pager) security(op *node) string {
	sec := op.get("security")
	if sec == nil {
		sec = p.root.get("security")
	}
	if sec == nil || len(sec.items) == 0 {
		return `<p class="muted">No credentials needed.</p>`
	}
	var names []string
	optional := false
	for _, r := range sec.items {
		if len(r.keys) == 0 {
			optional = true
		}
		names = append(names, r.keys...)
	}
	if len(names) == 0 {
		return `<p class="muted">No credentials needed.</p>`
	}
	var links []string
	for _, n := range names {
		links = append(links, `<a href="#security-`+esc(n)+`">`+esc(n)+`</a>`)
	}
	s := `<p class="muted">Credentials: ` + strings.Join(links, " or ")
	if optional {
		s += " (optional: only when the deployment enables authentication)"
	}
	return s + ".</p>"
}

// parameters lists the parameters of an operation (the path item's and
// its own).
func (p *pager) parameters(item, op *node) []*node {
	var ps []*node
	for _, x := range append(append([]*node(nil), item.list("parameters")...), op.list("parameters")...) {
		ps = append(ps, p.deref(x))
	}
	return ps
}

// operation renders an operation's description, credentials,
// parameters, request body and responses.
func (p *pager) operation(item, op *node) string {
	var b strings.Builder
	b.WriteString(p.markdown(op.str("description")))
	b.WriteString(p.security(op))
	if params := p.parameters(item, op); len(params) > 0 {
		b.WriteString(`<h3>Parameters</h3><table class="params"><tr><th>name</th><th>in</th><th>description</th></tr>`)
		for _, pr := range params {
			b.WriteString("<tr><td><code>" + esc(pr.str("name")) + "</code>")
			if pr.get("required").isTrue() {
				b.WriteString(` <span class="req">required</span>`)
			}
			b.WriteString("</td><td>" + esc(pr.str("in")) + "</td><td>" + p.markdown(pr.str("description")))
			if s := pr.get("schema"); s != nil {
				b.WriteString(typeLine(p.deref(s)))
			}
			if ex := pr.get("example"); ex != nil {
				b.WriteString("<div>Example: <code>" + esc(exampleText(ex)) + "</code></div>")
			}
			b.WriteString("</td></tr>")
		}
		b.WriteString("</table>")
	}
	if rb := op.get("requestBody"); rb != nil {
		rb = p.deref(rb)
		b.WriteString("<h3>Request body")
		if rb.get("required").isTrue() {
			b.WriteString(` <span class="req">required</span>`)
		}
		b.WriteString("</h3>" + p.markdown(rb.str("description")) + p.content(rb.get("content")))
	}
	b.WriteString("<h3>Responses</h3>")
	if resp := op.get("responses"); resp != nil {
		codes := slices.Clone(resp.keys)
		slices.Sort(codes)
		for _, code := range codes {
			r := resp.vals[code]
			name := ""
			if ref := r.str("$ref"); ref != "" {
				name = " (" + refName(ref) + ")"
			}
			r = p.deref(r)
			d := r.str("description")
			b.WriteString("<details><summary><code>" + esc(code) + "</code>" + esc(name) + " " + p.inlineMarkdown(firstSentence(d)) + "</summary>" +
				p.markdown(d) + p.headers(r.get("headers")) + p.content(r.get("content")) + "</details>")
		}
	}
	return b.String()
}

// securitySchemes describes the document's security schemes.
func (p *pager) securitySchemes() string {
	ss := p.root.get("components").get("securitySchemes")
	if ss == nil || len(ss.keys) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<section id="security"><h2>Credentials</h2>`)
	for _, k := range ss.keys {
		s := ss.vals[k]
		kind := s.str("type")
		if sc := s.str("scheme"); sc != "" {
			kind += " " + sc
		}
		if f := s.str("bearerFormat"); f != "" {
			kind += " (" + f + ")"
		}
		b.WriteString(`<h3 id="security-` + esc(k) + `">` + esc(k) + ` <span class="type">` + esc(kind) + `</span></h3>` + p.markdown(s.str("description")))
	}
	b.WriteString("</section>")
	return b.String()
}

// schemaList renders every schema of components.schemas.
func (p *pager) schemaList() string {
	schemas := p.root.get("components").get("schemas")
	if schemas == nil || len(schemas.keys) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<h2>Schemas</h2>")
	for _, n := range schemas.keys {
		b.WriteString(`<section id="schema-` + esc(n) + `"><h3>` + esc(n) + "</h3>" + p.schema(schemas.vals[n], false) + "</section>")
	}
	return b.String()
}

// jsonOperation reports whether every documented success answer of an
// operation is JSON (and there is one): the operations the page offers to
// try. Streams, the WebSocket upgrade and HTML pages are left out.
func (p *pager) jsonOperation(op *node) bool {
	resp := op.get("responses")
	if resp == nil {
		return false
	}
	found := false
	for _, code := range resp.keys {
		if !strings.HasPrefix(code, "2") && code != "101" {
			continue
		}
		c := p.deref(resp.vals[code]).get("content")
		if code == "101" || c == nil || len(c.keys) == 0 {
			return false
		}
		for _, mt := range c.keys {
			if mt != "application/json" {
				return false
			}
		}
		found = true
	}
	return found
}

// tryForm renders the "try it" form of a JSON or streaming operation
// (empty for the others): an input per
// path and query parameter, an Authorization field when the operation
// takes credentials, and a JSON body prefilled from the first example
// (a menu switches between examples). It is hidden until the script runs.
func (p *pager) tryForm(o operation, item, op *node) string {
	stream := p.streamOperation(op)
	if !stream && !p.jsonOperation(op) {
		return ""
	}
	id := opID(o.Method, o.Path)
	var b strings.Builder
	if stream {
		fmt.Fprintf(&b, `<form class="try" id="try-%s" data-method="%s" data-path="%s" data-stream="" hidden>`, esc(id), esc(o.Method), esc(o.Path))
		b.WriteString(`<h3>Try it</h3><p class="muted">Sends the request from this page to this server and shows the Server-Sent Events as they arrive: each event's name and data. Stop ends the stream.</p>`)
	} else {
		fmt.Fprintf(&b, `<form class="try" id="try-%s" data-method="%s" data-path="%s" hidden>`, esc(id), esc(o.Method), esc(o.Path))
		b.WriteString(`<h3>Try it</h3><p class="muted">Sends the request from this page to this server and shows the answer.</p>`)
	}
	for _, pr := range p.parameters(item, op) {
		in := pr.str("in")
		if in != "path" && in != "query" {
			continue
		}
		name := pr.str("name")
		value, placeholder := "", ""
		if ex := pr.get("example"); ex != nil {
			if in == "path" {
				value = exampleText(ex)
			} else {
				placeholder = exampleText(ex)
			}
		}
		req := ""
		if in == "path" || pr.get("required").isTrue() {
			req = " required"
		}
		fmt.Fprintf(&b, `<label>%s <small>(%s)</small> <input name="%s" data-in="%s" value="%s" placeholder="%s"%s></label>`,
			esc(name), esc(in), esc(name), esc(in), esc(value), esc(placeholder), req)
	}
	if sec := op.get("security"); (sec == nil && len(p.root.list("security")) > 0) || (sec != nil && len(sec.items) > 0) {
		b.WriteString(`<label>Authorization <small>(header, optional)</small> <input name="Authorization" data-in="header" placeholder="Bearer TOKEN" autocomplete="off"></label>`)
	}
	if rb := op.get("requestBody"); rb != nil {
		if m := p.deref(rb).get("content").get("application/json"); m != nil {
			exs := examples(p, m)
			if len(exs) > 1 {
				b.WriteString(`<label>Example <select class="try-example">`)
				for i, ex := range exs {
					fmt.Fprintf(&b, `<option value="%d" data-body="%s">%s</option>`, i, esc(ex.text), esc(p.plainText(ex.summary)))
				}
				b.WriteString(`</select></label>`)
			}
			body := ""
			if len(exs) > 0 {
				body = exs[0].text
			}
			rows := min(max(strings.Count(body, "\n")+2, 4), 24)
			fmt.Fprintf(&b, `<label class="try-body-label">Body <small>(application/json)</small><textarea name="body" rows="%d" spellcheck="false">%s</textarea></label>`, rows, esc(body))
		}
	}
	if stream {
		b.WriteString(`<p><button type="submit">Send</button> <button type="button" class="try-stop" disabled>Stop</button></p>`)
		b.WriteString(`<div class="try-result" hidden><p>Status <code class="try-status"></code> <span class="try-stream-state muted"></span></p><h4>Headers</h4><pre class="try-headers"></pre>` +
			`<h4>Events</h4><ol class="try-events"></ol><pre class="try-response" hidden></pre></div>`)
	} else {
		b.WriteString(`<p><button type="submit">Send</button></p>`)
		b.WriteString(`<div class="try-result" hidden><p>Status <code class="try-status"></code></p><h4>Headers</h4><pre class="try-headers"></pre><h4>Body</h4><pre class="try-response"></pre></div>`)
	}
	b.WriteString(`</form>`)
	return b.String()
}

// streamOperation reports whether an operation answers 200 with
// Server-Sent Events (text/event-stream) and takes a JSON body: watch
// and replay. Their forms show the events as they arrive.
func (p *pager) streamOperation(op *node) bool {
	c := p.deref(op.get("responses").get("200")).get("content")
	if c == nil || len(c.keys) != 1 || c.keys[0] != "text/event-stream" {
		return false
	}
	rb := op.get("requestBody")
	return rb != nil && p.deref(rb).get("content").get("application/json") != nil
}
