// Package openapi owns herald's OpenAPI 3.1 document (openapi.json,
// embedded in the binary), the AsyncAPI 3.0 document of the WebSocket
// session protocol (asyncapi.json, embedded too), the self-contained HTML
// page that documents the HTTP API from the first, and the JSON Schema
// check of answers and session frames against them. It serves the
// documents and the page as plain http.HandlerFuncs; routing belongs to
// package api. It must not import other herald packages: the
// document describes the API, it does not depend on the code serving it.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strings"
	"sync"
)

//go:embed openapi.json
var spec []byte

// DocumentPath is where herald serves the document; the docs page fetches
// it from there.
const DocumentPath = "/api-docs/openapi.json"

// Spec returns the raw OpenAPI document (a copy: callers may modify it).
func Spec() []byte { return bytes.Clone(spec) }

// Document serves GET /api-docs/openapi.json: the OpenAPI document as
// application/json.
func Document(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(spec)
}

// DocsPage serves the HTML documentation page. Every path, method and
// summary is rendered on the server, so the page lists the endpoints
// without JavaScript; a small inline script then fetches the document from
// DocumentPath and adds descriptions, parameters, request and response
// schemas and examples. The page loads nothing from other hosts.
func DocsPage(w http.ResponseWriter, r *http.Request) {
	page, err := docsPage()
	if err != nil {
		http.Error(w, "the OpenAPI document is invalid: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(page)
}

// docsPage renders the page once from the embedded document.
var docsPage = sync.OnceValues(func() ([]byte, error) { return renderPage(spec) })

// operation is one path and method of the document, as listed on the page.
type operation struct {
	Method      string // upper case: "GET"
	Path        string
	Summary     string
	Description string
	Tags        []string
	Statuses    []status
}

// status is one documented response of an operation.
type status struct {
	Code        string
	Description string
}

// pageData is what the page template renders.
type pageData struct {
	Title       string
	Version     string
	Summary     string
	Description string
	DocPath     string
	AsyncPath   string
	Ops         []operation
}

// methods are the OpenAPI path-item keys that name HTTP methods, in the
// order the page lists them.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// operations lists the operations of an OpenAPI document in document
// order: paths as they appear, methods in the order of the methods list.
func operations(doc []byte) ([]operation, error) {
	var top struct {
		Paths json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, err
	}
	if top.Paths == nil {
		return nil, errors.New("no paths")
	}
	order, err := objectKeys(top.Paths)
	if err != nil {
		return nil, fmt.Errorf("paths: %w", err)
	}
	var items map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top.Paths, &items); err != nil {
		return nil, fmt.Errorf("paths: %w", err)
	}
	var ops []operation
	for _, p := range order {
		for _, m := range methods {
			raw, ok := items[p][m]
			if !ok {
				continue
			}
			var op struct {
				Summary     string                     `json:"summary"`
				Description string                     `json:"description"`
				Tags        []string                   `json:"tags"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, p, err)
			}
			o := operation{Method: strings.ToUpper(m), Path: p, Summary: op.Summary, Description: op.Description, Tags: op.Tags}
			for code, rr := range op.Responses {
				var resp struct {
					Ref         string `json:"$ref"`
					Description string `json:"description"`
				}
				if err := json.Unmarshal(rr, &resp); err != nil {
					return nil, fmt.Errorf("%s %s response %s: %w", m, p, code, err)
				}
				d := resp.Description
				if resp.Ref != "" {
					d = strings.TrimPrefix(resp.Ref, "#/components/responses/")
				}
				if i := strings.Index(d, ". "); i >= 0 {
					d = d[:i+1]
				}
				o.Statuses = append(o.Statuses, status{Code: code, Description: d})
			}
			sort.Slice(o.Statuses, func(i, j int) bool { return o.Statuses[i].Code < o.Statuses[j].Code })
			ops = append(ops, o)
		}
	}
	return ops, nil
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// renderPage renders the docs page of an OpenAPI document.
func renderPage(doc []byte) ([]byte, error) {
	var top struct {
		Info struct {
			Title       string `json:"title"`
			Version     string `json:"version"`
			Summary     string `json:"summary"`
			Description string `json:"description"`
		} `json:"info"`
	}
	if err := json.Unmarshal(doc, &top); err != nil {
		return nil, err
	}
	ops, err := operations(doc)
	if err != nil {
		return nil, err
	}
	data := pageData{
		Title: top.Info.Title, Version: top.Info.Version, Summary: top.Info.Summary,
		Description: top.Info.Description, DocPath: DocumentPath, AsyncPath: AsyncAPIPath, Ops: ops,
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// opID is the HTML id of an operation's section.
func opID(method, path string) string {
	var b strings.Builder
	b.WriteString("op-")
	b.WriteString(strings.ToLower(method))
	for _, r := range path {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

var pageTemplate = template.Must(template.New("docs").Funcs(template.FuncMap{
	"opid":  opID,
	"lower": strings.ToLower,
}).Parse(pageHTML))

// pageHTML is the docs page template. The script and style are inline:
// the page must work without network access to anything but herald.
const pageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} API {{.Version}}</title>
<style>
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header,main,footer{max-width:1100px;margin:0 auto;padding:0 1.2em}
header{padding-top:1.2em}
h1{margin:.2em 0}h1 small{font-size:.55em;color:#667}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
pre{background:#fff;border:1px solid #dde;padding:.6em;overflow:auto;white-space:pre-wrap;word-break:break-word}
.desc{white-space:pre-wrap}
.md{white-space:normal}
.md table,.params,.props{border-collapse:collapse;margin:.4em 0}
.md td,.md th,.params td,.params th,.props td,.props th{border:1px solid #dde;padding:.2em .5em;vertical-align:top;text-align:left}
nav ul{columns:2;padding-left:1.2em}
section.op{background:#fff;border:1px solid #d5d9e0;border-radius:6px;margin:.8em 0;padding:.4em .9em}
section.op>h2{font-size:1.05em;margin:.4em 0}
.method{display:inline-block;min-width:4.5em;text-align:center;border-radius:4px;color:#fff;font-weight:600;padding:0 .4em;margin-right:.4em}
.m-get{background:#2f7bbf}.m-post{background:#3a9a5b}.m-delete{background:#c0392b}.m-put{background:#b7791f}.m-patch{background:#7b4fb3}
.path{font-weight:600}.summary{color:#445;margin-left:.4em}
.statuses{margin:.2em 0 .4em;padding-left:1.2em}
.schema{border-left:3px solid #cfd6e4;padding-left:.6em;margin:.3em 0}
.type{color:#7b4fb3;font-family:ui-monospace,monospace}
.req{color:#c0392b;font-size:.8em}
.tag{display:inline-block;background:#eef;border-radius:3px;padding:0 .4em;margin-right:.3em;font-size:.8em}
h3{font-size:.95em;margin:.8em 0 .2em}h4{font-size:.9em;margin:.6em 0 .2em}
details>summary{cursor:pointer}
#schemas section{background:#fff;border:1px solid #d5d9e0;border-radius:6px;margin:.6em 0;padding:.3em .9em}
.muted{color:#667}
</style>
</head>
<body data-doc="{{.DocPath}}">
<header>
<h1>{{.Title}} <small>API {{.Version}}</small></h1>
<p>{{.Summary}}</p>
<p>The machine-readable <a href="{{.DocPath}}">OpenAPI 3.1 document</a> is at <code>{{.DocPath}}</code>.</p>
<p>The frames of the WebSocket session protocol <code>herald.v1</code> are described by the <a href="{{.AsyncPath}}">AsyncAPI 3.0 document</a> at <code>{{.AsyncPath}}</code>.</p>
<noscript><p class="muted">JavaScript is off: the endpoints are listed below; the request and response schemas are in the OpenAPI document.</p></noscript>
<div id="info" class="desc">{{.Description}}</div>
<nav><h2>Endpoints</h2><ul>
{{- range .Ops}}
<li><a href="#{{opid .Method .Path}}"><code>{{.Method}} {{.Path}}</code></a> {{.Summary}}</li>
{{- end}}
</ul></nav>
</header>
<main id="ops">
{{- range .Ops}}
<section class="op" id="{{opid .Method .Path}}" data-method="{{lower .Method}}" data-path="{{.Path}}">
<h2><span class="method m-{{lower .Method}}">{{.Method}}</span><code class="path">{{.Path}}</code><span class="summary">{{.Summary}}</span></h2>
<div class="static">
{{- if .Tags}}<p>{{range .Tags}}<span class="tag">{{.}}</span>{{end}}</p>{{end}}
{{- if .Description}}
<div class="desc">{{.Description}}</div>{{end}}
<ul class="statuses">
{{- range .Statuses}}
<li><code>{{.Code}}</code> {{.Description}}</li>
{{- end}}
</ul>
</div>
<div class="details"></div>
</section>
{{- end}}
</main>
<footer><div id="schemas"></div></footer>
<script>
(function () {
  "use strict";
  var DOC = document.body.getAttribute("data-doc");
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }
  function inline(s) {
    return esc(s).replace(/\x60([^\x60]+)\x60/g, "<code>$1</code>").replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  }
  // md renders the small Markdown subset the document uses: paragraphs,
  // lists, tables, fenced code, inline code and bold.
  function md(text) {
    if (!text) return "";
    var lines = String(text).split("\n"), out = [], i = 0;
    while (i < lines.length) {
      var l = lines[i];
      if (/^\x60\x60\x60/.test(l)) {
        var code = [];
        for (i++; i < lines.length && !/^\x60\x60\x60/.test(lines[i]); i++) code.push(lines[i]);
        i++;
        out.push("<pre>" + esc(code.join("\n")) + "</pre>");
      } else if (/^\|/.test(l)) {
        var rows = [];
        for (; i < lines.length && /^\|/.test(lines[i]); i++) rows.push(lines[i]);
        var html = "<table>";
        rows.forEach(function (r, n) {
          if (/^\|[\s:|-]+\|$/.test(r)) return;
          var cells = r.replace(/^\||\|$/g, "").split("|");
          var tag = n === 0 ? "th" : "td";
          html += "<tr>" + cells.map(function (c) { return "<" + tag + ">" + inline(c.trim()) + "</" + tag + ">"; }).join("") + "</tr>";
        });
        out.push(html + "</table>");
      } else if (/^\s*(- |\d+\. )/.test(l)) {
        var ordered = /^\s*\d+\. /.test(l), items = [];
        for (; i < lines.length && lines[i].trim() !== "" && !/^\x60\x60\x60|^\|/.test(lines[i]); i++) {
          if (/^\s*(- |\d+\. )/.test(lines[i])) items.push(lines[i].replace(/^\s*(- |\d+\. )/, ""));
          else items[items.length - 1] += " " + lines[i].trim();
        }
        var t = ordered ? "ol" : "ul";
        out.push("<" + t + ">" + items.map(function (x) { return "<li>" + inline(x) + "</li>"; }).join("") + "</" + t + ">");
      } else if (l.trim() === "") {
        i++;
      } else {
        var para = [];
        for (; i < lines.length && lines[i].trim() !== "" && !/^\x60\x60\x60|^\||^\s*(- |\d+\. )/.test(lines[i]); i++) para.push(lines[i]);
        out.push("<p>" + inline(para.join(" ")) + "</p>");
      }
    }
    return "<div class=\"md\">" + out.join("") + "</div>";
  }
  var spec;
  function resolve(ref) {
    var parts = ref.replace(/^#\//, "").split("/"), v = spec;
    parts.forEach(function (p) { v = v == null ? v : v[p.replace(/~1/g, "/").replace(/~0/g, "~")]; });
    return v;
  }
  function refName(ref) { return ref.split("/").pop(); }
  function refLink(ref) {
    var n = refName(ref);
    return "<a href=\"#schema-" + esc(n) + "\">" + esc(n) + "</a>";
  }
  function json(v) { return esc(JSON.stringify(v, null, 2)); }
  // typeLine summarises the scalar facts of a schema on one line.
  function typeLine(s) {
    var bits = [];
    if (s.type) bits.push([].concat(s.type).join(" | "));
    if ("const" in s) bits.push("= " + JSON.stringify(s["const"]));
    if (s["enum"]) bits.push("one of " + s["enum"].map(function (x) { return JSON.stringify(x); }).join(", "));
    if (s.format) bits.push("format " + s.format);
    if (s.pattern) bits.push("pattern " + s.pattern);
    if (s.contentMediaType) bits.push(s.contentMediaType);
    ["minimum", "maximum", "minLength", "minItems", "maxItems", "minProperties", "maxProperties"].forEach(function (k) {
      if (k in s) bits.push(k + " " + s[k]);
    });
    return bits.length ? "<span class=\"type\">" + esc(bits.join("; ")) + "</span>" : "";
  }
  // schemaHTML renders a schema readably. References are links to the
  // schema list, except at the top (expand), which is shown in place.
  function schemaHTML(s, expand) {
    if (s === true || s === undefined) return "<span class=\"type\">any JSON value</span>";
    if (s === false) return "<span class=\"type\">nothing</span>";
    if (s.$ref) {
      if (!expand) return refLink(s.$ref);
      return "<div>" + refLink(s.$ref) + "</div>" + schemaHTML(resolve(s.$ref) || {}, false);
    }
    var h = "<div class=\"schema\">" + typeLine(s);
    if (s.description) h += md(s.description);
    if (s.properties) {
      var req = s.required || [];
      h += "<table class=\"props\"><tr><th>field</th><th>schema</th></tr>";
      Object.keys(s.properties).forEach(function (k) {
        h += "<tr><td><code>" + esc(k) + "</code>" + (req.indexOf(k) >= 0 ? " <span class=\"req\">required</span>" : "") +
          "</td><td>" + schemaHTML(s.properties[k], false) + "</td></tr>";
      });
      h += "</table>";
    }
    if (s.additionalProperties === false && s.properties) h += "<div class=\"muted\">No other fields.</div>";
    else if (s.additionalProperties && s.additionalProperties !== true) h += "<div>Each value: " + schemaHTML(s.additionalProperties, false) + "</div>";
    if (s.prefixItems) h += "<div>Items in order: " + s.prefixItems.map(function (x) { return schemaHTML(x, false); }).join("") + "</div>";
    if (s.items) h += "<div>Each item: " + schemaHTML(s.items, false) + "</div>";
    ["oneOf", "anyOf", "allOf"].forEach(function (k) {
      if (!s[k]) return;
      var label = { oneOf: "Exactly one of:", anyOf: "Any of:", allOf: "All of:" }[k];
      h += "<div>" + label + "<ul>" + s[k].map(function (x) { return "<li>" + schemaHTML(x, false) + "</li>"; }).join("") + "</ul></div>";
    });
    if (s.contentSchema) h += "<div>Each event: " + schemaHTML(s.contentSchema, true) + "</div>";
    if (s.examples) h += "<details><summary>examples</summary>" + s.examples.map(function (x) { return "<pre>" + json(x) + "</pre>"; }).join("") + "</details>";
    return h + "</div>";
  }
  function deref(o) { return o && o.$ref ? resolve(o.$ref) || {} : o || {}; }
  function contentHTML(content) {
    var h = "";
    Object.keys(content || {}).forEach(function (mt) {
      var m = content[mt];
      h += "<h4><code>" + esc(mt) + "</code></h4>" + (m.schema ? schemaHTML(m.schema, true) : "");
      Object.keys(m.examples || {}).forEach(function (k) {
        var e = deref(m.examples[k]);
        var v = typeof e.value === "string" ? esc(e.value) : json(e.value);
        h += "<details><summary>example: " + esc(e.summary || k) + "</summary><pre>" + v + "</pre></details>";
      });
    });
    return h;
  }
  function headersHTML(headers) {
    var ks = Object.keys(headers || {});
    if (!ks.length) return "";
    return "<table class=\"params\"><tr><th>header</th><th>description</th></tr>" + ks.map(function (k) {
      var hd = deref(headers[k]);
      return "<tr><td><code>" + esc(k) + "</code></td><td>" + md(hd.description) + "</td></tr>";
    }).join("") + "</table>";
  }
  function securityHTML(op) {
    var sec = op.security || spec.security || [];
    if (!sec.length) return "<p class=\"muted\">No credentials needed.</p>";
    var names = [];
    sec.forEach(function (r) { Object.keys(r).forEach(function (k) { names.push(k); }); });
    var optional = sec.some(function (r) { return Object.keys(r).length === 0; });
    return "<p class=\"muted\">Credentials: " + esc(names.join(" or ")) + (optional ? " (optional: only when the deployment enables authentication)" : "") + ".</p>";
  }
  function opHTML(path, item, op) {
    var h = "";
    if (op.description) h += md(op.description);
    h += securityHTML(op);
    var params = (item.parameters || []).concat(op.parameters || []).map(deref);
    if (params.length) {
      h += "<h3>Parameters</h3><table class=\"params\"><tr><th>name</th><th>in</th><th>description</th></tr>" + params.map(function (p) {
        return "<tr><td><code>" + esc(p.name) + "</code></td><td>" + esc(p["in"]) + "</td><td>" + md(p.description) +
          (p.example !== undefined ? "<div>Example: <code>" + esc(p.example) + "</code></div>" : "") + "</td></tr>";
      }).join("") + "</table>";
    }
    if (op.requestBody) {
      var rb = deref(op.requestBody);
      h += "<h3>Request body" + (rb.required ? " <span class=\"req\">required</span>" : "") + "</h3>" + md(rb.description) + contentHTML(rb.content);
    }
    h += "<h3>Responses</h3>";
    Object.keys(op.responses || {}).sort().forEach(function (code) {
      var r = op.responses[code], name = r.$ref ? " (" + refName(r.$ref) + ")" : "";
      r = deref(r);
      h += "<details><summary><code>" + esc(code) + "</code>" + esc(name) + " " + inline((r.description || "").split(". ")[0]) + "</summary>" +
        md(r.description) + headersHTML(r.headers) + contentHTML(r.content) + "</details>";
    });
    return h;
  }
  function render(s) {
    spec = s;
    var info = document.getElementById("info");
    if (info && s.info) { info.className = ""; info.innerHTML = md(s.info.description); }
    var sections = document.querySelectorAll("section.op");
    Array.prototype.forEach.call(sections, function (sec) {
      var path = sec.getAttribute("data-path"), method = sec.getAttribute("data-method");
      var item = (s.paths || {})[path], op = item && item[method];
      if (!op) return;
      var st = sec.querySelector(".static");
      if (st) st.parentNode.removeChild(st);
      var tags = (op.tags || []).map(function (t) { return "<span class=\"tag\">" + esc(t) + "</span>"; }).join("");
      sec.querySelector(".details").innerHTML = (tags ? "<p>" + tags + "</p>" : "") + opHTML(path, item, op);
    });
    var schemas = (s.components || {}).schemas || {};
    var h = "<h2>Schemas</h2>";
    Object.keys(schemas).forEach(function (n) {
      h += "<section id=\"schema-" + esc(n) + "\"><h3>" + esc(n) + "</h3>" + schemaHTML(schemas[n], false) + "</section>";
    });
    document.getElementById("schemas").innerHTML = h;
    if (location.hash) {
      var target = document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
    }
  }
  if (!window.fetch) return;
  fetch(DOC).then(function (r) {
    if (!r.ok) throw new Error(DOC + ": HTTP " + r.status);
    return r.json();
  }).then(render)["catch"](function (e) {
    var f = document.getElementById("schemas");
    f.innerHTML = "<p class=\"muted\">Could not load " + esc(DOC) + ": " + esc(e.message) + "</p>";
  });
})();
</script>
</body>
</html>
`
