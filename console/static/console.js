// herald console: watch, replay and publish notifications from a browser.
//
// It uses herald's public API only: GET /api/v1/schema for the event types
// and their identifier handlers (the forms are generated from them), POST
// /api/v1/notification to publish, and one WebSocket session
// (GET /api/v1/session, subprotocol herald.v1) that carries every
// subscription side by side. A token typed into the page is kept in
// sessionStorage (this tab only) and sent as the session's first request
// ({"op":"auth"}) and as the Authorization header of a publish.
//
// Each subscription remembers the next sequence it needs: after a lost
// connection or a server-side end with a resume id it subscribes again
// from there by itself, so nothing is shown twice and nothing is missed.
"use strict";

(() => {
  const TOKEN_KEY = "herald.console.token";
  const MAX_ROWS = 500; // rows kept in a table; older ones are removed
  const MAX_HELD = 10000; // events held while paused
  const CHART_SECONDS = 60;
  // Reasons after which a subscription resumes by itself from its
  // resume_from_id; the others end it for good.
  const RESUMABLE = new Set(["schema_changed", "max_duration", "overflow", "gap", "server_shutdown"]);

  const $ = (sel, root = document) => root.querySelector(sel);

  // el builds an element: el("td", {className: "id", title: "x"}, "text", child).
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k === "dataset") Object.assign(e.dataset, v);
      else if (k in e) e[k] = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) e.append(c);
    return e;
  }

  // seqOf returns the sequence of a CloudEvent id ("mars@42" -> 42), or
  // null for anything else.
  function seqOf(id) {
    const m = /@(\d+)$/.exec(String(id || ""));
    return m ? Number(m[1]) : null;
  }

  function showError(box, err) {
    box.hidden = false;
    $(".error-code", box).textContent = err.code ? err.code + ":" : "";
    $(".error-message", box).textContent = err.message || String(err);
  }

  function hideError(box) {
    box.hidden = true;
    $(".error-code", box).textContent = "";
    $(".error-message", box).textContent = "";
  }

  // FormError is a mistake found in a form before anything is sent; it
  // names the field.
  class FormError extends Error {
    constructor(field, message) {
      super(field + ": " + message);
      this.code = "INVALID_INPUT";
    }
  }

  // ---- schemas -------------------------------------------------------

  const schemas = { types: [], byName: {} };

  async function loadSchemas() {
    const resp = await fetch("/api/v1/schema", { headers: { Accept: "application/json" } });
    const body = await resp.json();
    if (!resp.ok) throw { code: body.code || String(resp.status), message: body.message || resp.statusText };
    schemas.types = body.event_types || [];
    schemas.byName = body.schema || {};
  }

  function fieldsOf(type) {
    const s = schemas.byName[type];
    return s && s.identifier ? Object.entries(s.identifier) : [];
  }

  // idCell is the table cell of an event id, whole: a long one may wrap
  // after its event type ("sensor_cbor" / "@123"), never be cut.
  function idCell(id) {
    const text = String(id || "");
    const at = text.lastIndexOf("@");
    if (at <= 0) return el("td", { className: "id" }, text);
    return el("td", { className: "id" }, text.slice(0, at), el("wbr"), text.slice(at));
  }

  // ---- hints ------------------------------------------------------------

  // whereHint is an example WHERE predicate written from the event type's
  // own identifier fields (so it is valid for the type selected): a
  // number field against the middle of its range, an enum field IN two
  // of its values, else a text field IS NOT NULL.
  function whereHint(type) {
    const terms = [];
    const fields = fieldsOf(type);
    const num = fields.find(([, s]) => s.type === "IntHandler" || s.type === "FloatHandler");
    if (num) {
      const [lo, hi] = num[1].range || [0, 0];
      const mid = num[1].type === "IntHandler" ? Math.round((lo + hi) / 2) : (lo + hi) / 2;
      terms.push(num[0] + " >= " + mid);
    }
    const en = fields.find(([, s]) => s.type === "EnumHandler" && (s.values || []).length);
    if (en) terms.push(en[0] + " IN (" + en[1].values.slice(0, 2).map((v) => "'" + v + "'").join(", ") + ")");
    if (!terms.length) {
      const txt = fields.find(([, s]) => s.type === "StringHandler" || s.type === "ExpverHandler");
      if (txt) terms.push(txt[0] + " IS NOT NULL");
    }
    return terms.join(" AND ");
  }

  // TEXT_FORMATS are the codec formats whose payload a JSON notify
  // carries as a JSON string holding the text; the binary ones take a
  // JSON string of base64, JSON the JSON value itself.
  const TEXT_FORMATS = new Set(["SYSLOG", "YAML", "TOML", "XML"]);

  // exampleOf is an example JSON value of a payload schema field, by its
  // type (the types of a CREATE SCHEMA statement).
  function exampleOf(name, t) {
    if (/^(VEC|ARRAY|LIST|SET)\b/.test(t)) return [];
    if (/^(MAP|STRUCT|RECORD)\b/.test(t)) return {};
    if (/^(I|U|F)\d+$|^(INT|FLOAT|DOUBLE|DECIMAL|NUMBER)/.test(t)) return 0;
    if (/^BOOL/.test(t)) return false;
    if (/^(DATETIME|TIMESTAMP)/.test(t)) return "2025-07-06T12:00:00Z";
    if (/^DATE/.test(t)) return "2025-07-06";
    if (/^BYTES/.test(t)) return "AAE=";
    return name + "-1";
  }

  // payloadHint describes the payload the event type takes: {label,
  // placeholder}. A typed payload in JSON gets an example record of its
  // schema's required fields.
  function payloadHint(type) {
    const p = (schemas.byName[type] || {}).payload || {};
    const need = p.required ? "required" : "optional";
    if (!p.codec) return { label: "(any JSON, " + need + ")", placeholder: '{"key": "value"}' };
    const format = String(p.format || "").toUpperCase();
    if (format === "JSON" || format === "") {
      const record = {};
      const m = /\(([\s\S]*)\)/.exec(p.schema || "");
      for (const line of (m ? m[1] : "").split("\n")) {
        const f = /^\s*([A-Za-z_][\w]*)\s+([A-Z][A-Z0-9_]*(?:<[^>]*>)?)(.*)$/.exec(line);
        if (f && !/\bOPTIONAL\b/.test(f[3])) record[f[1]] = exampleOf(f[1], f[2]);
      }
      return { label: "(a JSON record for codec " + p.codec + ", " + need + ")", placeholder: JSON.stringify(record) };
    }
    if (TEXT_FORMATS.has(format)) {
      return { label: "(the " + format + " text as a JSON string, codec " + p.codec + ", " + need + ")", placeholder: '"…"' };
    }
    return { label: "(the " + format + " payload as a JSON string of base64, codec " + p.codec + ", " + need + ")", placeholder: '"base64…"' };
  }

  // ---- form generation -----------------------------------------------

  // fieldRow labels one generated input; required marks it with a star.
  function fieldRow(name, spec, control, required) {
    const label = el("label", { title: spec.description || spec.type }, name);
    if (required) label.append(el("span", { className: "req", title: "required" }, " *"));
    const id = control.querySelector ? (control.querySelector("[id]") || control).id : "";
    if (id) label.htmlFor = id;
    return el("div", { className: "field", dataset: { field: name, handler: spec.type } }, label, control);
  }

  // watchControl is the filter input of one identifier, by its handler.
  function watchControl(form, name, spec) {
    const id = form + "-" + name;
    switch (spec.type) {
      case "EnumHandler": {
        const s = el("select", { id, name }, el("option", { value: "" }, "any"));
        for (const v of spec.values || []) s.append(el("option", { value: v }, v));
        return s;
      }
      case "DateHandler":
        return el("input", { id, name, type: "date" });
      case "TimeHandler":
        return el("input", { id, name, type: "time" });
      case "IntHandler":
      case "FloatHandler": {
        const step = spec.type === "IntHandler" ? "1" : "any";
        const [lo, hi] = spec.range || [];
        const min = el("input", { id, name: name + ".min", type: "number", step, placeholder: lo !== undefined ? "≥ " + lo : "min" });
        const max = el("input", { name: name + ".max", type: "number", step, placeholder: hi !== undefined ? "≤ " + hi : "max" });
        max.setAttribute("aria-label", name + " at most");
        return el("span", { className: "pair" }, min, "–", max);
      }
      case "PolygonHandler": {
        const poly = el("input", { id, name: "polygon", type: "text", placeholder: "polygon [[lat,lon],…]", spellcheck: false });
        const point = el("input", { name: "point", type: "text", placeholder: "or point lat,lon", spellcheck: false });
        point.setAttribute("aria-label", "point inside " + name);
        return el("span", { className: "pair" }, poly, point);
      }
      case "PointCloudHandler":
        return el("input", { id, name: "polygon", type: "text", placeholder: "polygon [[lat,lon],…] holding a point", spellcheck: false });
      default:
        return text(id, name, spec, "");
    }
  }

  // text is a text input, bounded by the field's max_length when it has one.
  function text(id, name, spec, placeholder) {
    const e = el("input", { id, name, type: "text", placeholder, spellcheck: false });
    if (spec.max_length) e.maxLength = spec.max_length;
    return e;
  }

  // notifyControl is the publish input of one identifier, by its handler.
  function notifyControl(form, name, spec) {
    const id = form + "-" + name;
    switch (spec.type) {
      case "EnumHandler": {
        const s = el("select", { id, name }, el("option", { value: "" }, "choose"));
        for (const v of spec.values || []) s.append(el("option", { value: v }, v));
        if (spec.default !== undefined) s.value = String(spec.default);
        return s;
      }
      case "DateHandler":
        return el("input", { id, name, type: "date" });
      case "TimeHandler":
        return el("input", { id, name, type: "time" });
      case "IntHandler":
      case "FloatHandler": {
        const [lo, hi] = spec.range || [];
        return el("input", { id, name, type: "number", step: spec.type === "IntHandler" ? "1" : "any",
          placeholder: lo !== undefined ? lo + " to " + hi : "" });
      }
      case "PolygonHandler":
        return el("input", { id, name, type: "text", placeholder: "[[lat,lon],…] first point repeated last", spellcheck: false });
      case "PointCloudHandler":
        return el("input", { id, name, type: "text", placeholder: "[[lat,lon],…]", spellcheck: false });
      default: {
        const e = text(id, name, spec, "");
        if (spec.default !== undefined) e.value = String(spec.default);
        return e;
      }
    }
  }

  // buildForms generates the filter and publish fields of an event type.
  // Values already typed into fields of the same name and handler are
  // kept (a reload that changes the schema keeps the form).
  function buildForms(type) {
    const watch = $("#watch-fields");
    const notify = $("#notify-fields");
    const kept = new Map();
    for (const fs of [watch, notify]) {
      for (const f of fs.querySelectorAll(".field")) {
        for (const e of f.querySelectorAll("[name]")) kept.set(fs.id + "/" + f.dataset.handler + "/" + e.name, e.value);
      }
      fs.replaceChildren(fs.querySelector("legend"));
    }
    if (watch.dataset.eventType !== type) kept.clear();
    watch.dataset.eventType = type;
    for (const [name, spec] of fieldsOf(type)) {
      watch.append(fieldRow(name, spec, watchControl("w", name, spec), spec.required));
      // A notification carries every declared identifier.
      notify.append(fieldRow(name, spec, notifyControl("n", name, spec), true));
    }
    for (const fs of [watch, notify]) {
      for (const f of fs.querySelectorAll(".field")) {
        for (const e of f.querySelectorAll("[name]")) {
          const v = kept.get(fs.id + "/" + f.dataset.handler + "/" + e.name);
          if (v !== undefined) e.value = v;
        }
      }
    }
    const s = schemas.byName[type] || {};
    const payload = s.payload || {};
    // The hints follow the type selected: what they show is valid for it.
    $("#where").placeholder = whereHint(type);
    const ph = payloadHint(type);
    $("#payload-hint").textContent = ph.label;
    $("#payload").placeholder = ph.placeholder;
    $("#event-type-info").textContent = type
      ? fieldsOf(type).length + " identifier fields; payload " + (payload.required ? "required" : "optional")
      : "No event types are configured.";
    for (const f of [$("#watch-form"), $("#notify-form")]) {
      f.dataset.eventType = type;
      for (const box of f.querySelectorAll(".form-error, .form-result")) box.hidden = true;
    }
  }

  // value is the trimmed value of the input named name in a form or
  // fieldset ("" when there is none).
  function value(container, name) {
    const e = container.elements.namedItem(name);
    return e ? e.value.trim() : "";
  }

  // valueOf is the trimmed value of the element with that id.
  function valueOf(id) {
    return document.getElementById(id).value.trim();
  }

  function number(field, text) {
    const n = Number(text);
    if (text === "" || !Number.isFinite(n)) throw new FormError(field, "not a number: " + JSON.stringify(text));
    return n;
  }

  // pointOf reads "lat,lon" or "[lat, lon]".
  function pointOf(text) {
    if (text.startsWith("[")) return jsonOf("point", text);
    const parts = text.split(",").map((p) => p.trim());
    if (parts.length !== 2) throw new FormError("point", "write it as lat,lon (for example 52.5,13.4)");
    return [number("point", parts[0]), number("point", parts[1])];
  }

  function jsonOf(field, text) {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new FormError(field, "not valid JSON: " + e.message);
    }
  }

  // watchIdentifier reads the filter form into a watch identifier: exact
  // values, constraint objects for number ranges, spatial filters.
  function watchIdentifier(form, type) {
    form = form.querySelector("#watch-fields");
    const ident = {};
    for (const [name, spec] of fieldsOf(type)) {
      switch (spec.type) {
        case "IntHandler":
        case "FloatHandler": {
          const lo = value(form, name + ".min");
          const hi = value(form, name + ".max");
          if (lo !== "" && hi !== "") {
            const a = number(name, lo);
            const b = number(name, hi);
            ident[name] = a === b ? a : { between: [a, b] };
          } else if (lo !== "") ident[name] = { gte: number(name, lo) };
          else if (hi !== "") ident[name] = { lte: number(name, hi) };
          break;
        }
        case "PolygonHandler": {
          const poly = value(form, "polygon");
          const point = value(form, "point");
          if (poly !== "") ident.polygon = jsonOf("polygon", poly);
          if (point !== "") ident.point = pointOf(point);
          break;
        }
        case "PointCloudHandler": {
          const poly = value(form, "polygon");
          if (poly !== "") ident.polygon = jsonOf("polygon", poly);
          break;
        }
        default: {
          const v = value(form, name);
          if (v !== "") ident[name] = v;
        }
      }
    }
    return ident;
  }

  function notifyIdentifier(form, type) {
    form = form.querySelector("#notify-fields");
    const ident = {};
    for (const [name, spec] of fieldsOf(type)) {
      const v = value(form, name);
      if (v === "") continue;
      switch (spec.type) {
        case "IntHandler":
        case "FloatHandler":
          ident[name] = number(name, v);
          break;
        case "PolygonHandler":
        case "PointCloudHandler":
          ident[name] = jsonOf(name, v);
          break;
        default:
          ident[name] = v;
      }
    }
    return ident;
  }

  // ---- the token ------------------------------------------------------

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  }

  function authStatus(state, text) {
    const s = $("#auth-status");
    s.dataset.state = state;
    s.textContent = text;
  }

  // ---- the WebSocket session -----------------------------------------

  // Session is the one WebSocket session of the page. It reconnects by
  // itself with a growing delay, authenticates with the token first, and
  // tells the subscriptions when it is up and when it is down.
  class Session {
    constructor() {
      this.ws = null;
      this.ready = false;
      this.nextID = 1;
      this.pending = new Map();
      this.waiters = [];
      this.attempt = 0;
      this.timer = 0;
      this.connections = 0;
    }

    url() {
      const u = new URL("/api/v1/session", location.href);
      u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
      return u.href;
    }

    connect() {
      clearTimeout(this.timer);
      const ws = new WebSocket(this.url(), "herald.v1");
      this.ws = ws;
      this.ready = false;
      connStatus("connecting", "connecting…");
      ws.onmessage = (e) => {
        if (this.ws !== ws) return;
        let f;
        try {
          f = JSON.parse(e.data);
        } catch (err) {
          message("the server sent a frame that is not JSON: " + err.message);
          return;
        }
        this.frame(f);
      };
      ws.onclose = (e) => {
        if (this.ws === ws) this.closed(e);
      };
    }

    // restart drops the connection and opens a new one at once (the token
    // changed).
    restart() {
      const old = this.ws;
      this.ws = null;
      this.ready = false;
      if (old) old.close(1000, "token changed");
      this.failPending("the session was restarted");
      subs.down();
      this.attempt = 0;
      this.connect();
    }

    closed(e) {
      this.ws = null;
      this.ready = false;
      this.failPending("the connection was lost");
      const delay = Math.min(10000, 250 * 2 ** this.attempt);
      this.attempt++;
      const why = e.code + (e.reason ? " " + e.reason : "");
      connStatus("closed", "disconnected (" + why + "); reconnecting in " + (delay / 1000) + " s");
      subs.down();
      this.timer = setTimeout(() => this.connect(), delay);
    }

    failPending(msg) {
      for (const p of this.pending.values()) p({ ok: false, error: { code: "DISCONNECTED", message: msg } });
      this.pending.clear();
    }

    async frame(f) {
      switch (f.type) {
        case "welcome":
          await this.welcome(f);
          break;
        case "reply": {
          const p = this.pending.get(f.id);
          if (p) {
            this.pending.delete(f.id);
            p(f);
          }
          break;
        }
        case "error":
          message("session error " + f.error.code + ": " + f.error.message);
          break;
        default:
          subs.frame(f);
      }
    }

    async welcome(f) {
      const ws = this.ws;
      const tok = token();
      if (tok) {
        const r = await this.request("auth", { token: tok });
        if (this.ws !== ws) return;
        if (r.ok) authStatus("ok", "signed in as " + r.user + (r.roles.length ? " (" + r.roles.join(", ") + ")" : ""));
        else authStatus("error", r.error.code + ": " + r.error.message);
      } else authStatus("none", "no token");
      this.connections++;
      this.attempt = 0;
      this.ready = true;
      connStatus("open", "connected · session " + f.session_id);
      document.body.dataset.connections = String(this.connections);
      const w = this.waiters;
      this.waiters = [];
      for (const resolve of w) resolve();
      subs.up();
    }

    // request sends one request and resolves with its reply (ok or not);
    // it never rejects.
    request(op, fields) {
      return new Promise((resolve) => {
        if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
          resolve({ ok: false, error: { code: "DISCONNECTED", message: "not connected to herald" } });
          return;
        }
        const id = this.nextID++;
        this.pending.set(id, resolve);
        this.ws.send(JSON.stringify(Object.assign({ id, op }, fields)));
      });
    }

    whenReady() {
      return this.ready ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
    }
  }

  function connStatus(state, text) {
    const s = $("#conn-status");
    s.dataset.state = state;
    s.textContent = text;
  }

  function message(text) {
    const m = $("#messages");
    m.hidden = false;
    m.textContent = text;
  }

  // ---- subscriptions --------------------------------------------------

  // Sub is one subscription and its panel. spec: {kind: "watch"|"replay",
  // eventType, identifier, where, from: {id}|{date}|null, to: {id}|{date}|null,
  // mode: "blocking"|"dropping" (watch), sampleRate: number|undefined}.
  class Sub {
    constructor(name, spec) {
      this.name = name;
      this.spec = spec;
      this.gen = null; // generation of the subscription in force
      this.next = spec.from; // the cursor to (re)subscribe from
      this.lastSeq = 0; // highest sequence shown or held
      this.active = false; // wants to be subscribed
      this.paused = false;
      this.held = [];
      this.heldDropped = 0;
      this.total = 0;
      this.dups = 0;
      this.restarts = 0;
      this.buckets = new Map(); // second -> events that arrived in it
      this.panel = null;
      this.idChars = 0; // the longest id shown, in characters
    }

    request() {
      const s = this.spec;
      const body = { name: this.name, event_type: s.eventType, identifier: s.identifier };
      if (s.where) body.where = s.where;
      const c = this.next;
      if (c && c.id !== undefined) body.from_id = String(c.id);
      else if (c && c.date) body.from_date = c.date;
      if (s.kind === "replay" && s.to) {
        if (s.to.id !== undefined) body.to_id = String(s.to.id);
        else body.to_date = s.to.date;
      }
      if (s.kind !== "replay" && s.mode === "dropping") body.mode = "dropping";
      if (s.sampleRate !== undefined) body.sample_rate = s.sampleRate;
      return body;
    }

    // subscribe opens (or reopens) the subscription; it resolves with the
    // reply.
    async subscribe() {
      this.active = true;
      this.setState("starting", this.restarts ? "resuming…" : "subscribing…");
      const body = this.request();
      const r = await session.request(this.spec.kind === "replay" ? "replay" : "subscribe", body);
      if (!this.active) {
        // Closed while the request was on its way: end what it opened.
        if (r.ok) session.request("unsubscribe", { name: this.name });
        return r;
      }
      if (!r.ok) {
        if (r.error.code === "DISCONNECTED") this.setState("waiting", "waiting for the connection");
        else {
          this.active = false;
          this.setState("error", r.error.code + ": " + r.error.message);
        }
        return r;
      }
      this.gen = r.generation;
      if (!body.from_id && !body.from_date) {
        // Live only: everything after the boundary is needed from now on.
        this.next = { id: (seqOf(r.boundary) || 0) + 1 };
        this.setState("live", "live after " + r.boundary);
      } else this.setState("history", "history from " + (body.from_id ? "sequence " + body.from_id : body.from_date));
      if (this.panel) this.panel.dataset.topic = r.topic || "";
      return r;
    }

    frame(f) {
      if (f.gen !== this.gen) return; // a frame of an earlier generation
      switch (f.type) {
        case "events":
          for (const ev of f.events) this.event(ev, f.phase);
          if (f.phase === "live" && this.state !== "live") this.setState("live", "live");
          break;
        case "history_completed": {
          const s = seqOf(f.last_id);
          if (s !== null && (!this.next || this.next.id === undefined || this.next.id <= s)) this.next = { id: s + 1 };
          if (this.spec.kind !== "replay") this.setState("live", "history done at " + f.last_id + ", live");
          break;
        }
        case "dropped":
          this.note("warn", f.count + " notifications dropped by the server");
          break;
        case "skipped":
          this.note("warn", "skipped " + f.ids.join(", ") + " (" + f.reason + ")");
          break;
        case "subscription_ended":
          this.ended(f);
          break;
      }
    }

    event(ev, phase) {
      const seq = seqOf(ev.id);
      if (seq !== null) {
        if (seq <= this.lastSeq) {
          this.dups++;
          this.panel.dataset.duplicates = String(this.dups);
          return;
        }
        this.lastSeq = seq;
        this.next = { id: seq + 1 };
      }
      this.total++;
      const sec = Math.floor(Date.now() / 1000);
      this.buckets.set(sec, (this.buckets.get(sec) || 0) + 1);
      if (this.paused) {
        this.held.push([ev, phase]);
        if (this.held.length > MAX_HELD) {
          this.held.shift();
          this.heldDropped++;
        }
      } else this.row(ev, phase, true);
      this.stats();
    }

    ended(f) {
      this.gen = null;
      const resume = seqOf(f.resume_from_id);
      const why = f.reason + (f.message ? ": " + f.message : "");
      if (f.reason === "end_of_stream") {
        this.active = false;
        this.setState("ended", "replay complete" + (f.resume_from_id ? ", next " + f.resume_from_id : ""));
        return;
      }
      if (RESUMABLE.has(f.reason) && resume !== null) {
        this.next = { id: resume };
        this.restarts++;
        this.panel.dataset.restarts = String(this.restarts);
        if (f.reason === "schema_changed") loadSchemas().then(refreshTypes, () => {});
        if (f.reason === "server_shutdown") {
          // The connection closes next; the reconnect resubscribes.
          this.setState("waiting", "ended (" + why + "); resuming from " + f.resume_from_id + " on reconnect");
          return;
        }
        this.setState("starting", "ended (" + why + "); resuming from " + f.resume_from_id);
        this.subscribe().then((r) => {
          if (r.ok) this.resumed("from " + f.resume_from_id + " after " + f.reason);
        });
        return;
      }
      this.active = false;
      this.setState("error", "ended: " + why + (f.resume_from_id ? " (resume from " + f.resume_from_id + ")" : ""));
    }

    setState(state, text) {
      this.state = state;
      if (!this.panel) return;
      this.panel.dataset.state = state;
      const s = $(".sub-state", this.panel);
      s.dataset.state = state;
      s.textContent = state;
      this.note(state === "error" ? "error" : "", text);
    }

    // resumed records a resubscription by the console itself.
    resumed(how) {
      const r = $(".resumes", this.panel);
      r.textContent = "· resumed " + (this.restarts === 1 ? "once" : this.restarts + " times") + ", last " + how;
      r.dataset.last = how;
    }

    note(state, text) {
      if (!this.panel) return;
      const n = $(".sub-note", this.panel);
      n.dataset.state = state;
      n.textContent = text;
    }

    // mount creates the panel.
    mount() {
      const p = $("#sub-template").content.firstElementChild.cloneNode(true);
      p.id = "sub-" + this.name;
      p.dataset.name = this.name;
      p.dataset.kind = this.spec.kind;
      p.dataset.duplicates = "0";
      p.dataset.restarts = "0";
      $(".sub-name", p).textContent = this.name;
      $(".sub-type", p).textContent = this.spec.eventType + " · " + (this.spec.kind === "replay" ? "replay" : "watch");
      const s = this.spec;
      let filter = JSON.stringify(s.identifier);
      if (s.where) filter += " WHERE " + s.where;
      if (s.from) filter += s.from.id !== undefined ? " from " + s.from.id : " from " + s.from.date;
      if (s.to) filter += " to " + (s.to.id !== undefined ? s.to.id : s.to.date);
      if (s.kind !== "replay" && s.mode === "dropping") filter += " DROPPING";
      if (s.sampleRate !== undefined) filter += " SAMPLE RATE " + s.sampleRate;
      $(".sub-filter", p).textContent = filter;
      $(".pause", p).addEventListener("click", () => this.togglePause());
      $(".clear", p).addEventListener("click", () => {
        $("tbody", p).replaceChildren();
        this.stats();
      });
      $(".close", p).addEventListener("click", () => subs.remove(this));
      this.panel = p;
      this.stats();
      $("#subs").append(p);
      $("#no-subs").hidden = true;
    }

    togglePause() {
      this.paused = !this.paused;
      const b = $(".pause", this.panel);
      b.textContent = this.paused ? "Resume" : "Pause";
      if (this.paused) this.panel.dataset.paused = "";
      else {
        delete this.panel.dataset.paused;
        const held = this.held;
        this.held = [];
        for (const [ev, phase] of held) this.row(ev, phase, true);
        if (this.heldDropped) this.note("warn", this.heldDropped + " events held while paused were discarded (more than " + MAX_HELD + ")");
        this.heldDropped = 0;
      }
      this.stats();
    }

    row(ev, phase, fresh) {
      const data = ev.data || {};
      const ident = el("td", { className: "ident" });
      for (const [k, v] of Object.entries(data.identifier || {})) {
        if (ident.firstChild) ident.append(" ");
        ident.append(el("span", {}, k + "=" + (typeof v === "string" ? v : JSON.stringify(v))));
      }
      const payload = data.payload === undefined ? null : data.payload;
      const short = JSON.stringify(payload);
      // The time of day is shown; the full time is the cell's title.
      const m = /T(\d\d:\d\d:\d\d)/.exec(String(ev.time || ""));
      const time = m ? m[1] : String(ev.time || "");
      const tr = el("tr", { className: "phase-" + phase + (fresh ? " fresh" : ""), dataset: { id: ev.id, phase } },
        idCell(ev.id),
        el("td", { className: "time", title: ev.time || "" }, time),
        ident,
        el("td", { className: "payload" },
          el("details", {}, el("summary", {}, short), el("pre", {}, JSON.stringify(payload, null, 2)))));
      const body = $("tbody", this.panel);
      // The id column grows to the longest id shown (the stylesheet caps
      // it; a longer one wraps), so an id is never cut.
      const chars = String(ev.id || "").length;
      if (chars > this.idChars) {
        this.idChars = chars;
        $("table", this.panel).style.setProperty("--id-ch", String(chars));
      }
      body.prepend(tr);
      while (body.rows.length > MAX_ROWS) body.deleteRow(-1);
    }

    stats() {
      if (!this.panel) return;
      $(".count", this.panel).textContent = this.total + (this.total === 1 ? " event" : " events");
      this.panel.dataset.total = String(this.total);
      $(".held", this.panel).textContent = this.paused ? this.held.length + " held" : "";
    }

    // tick drops old buckets and draws the rate of the last minute.
    tick(now) {
      const sec = Math.floor(now / 1000);
      for (const k of this.buckets.keys()) if (k <= sec - CHART_SECONDS) this.buckets.delete(k);
      const counts = [];
      for (let s = sec - CHART_SECONDS + 1; s <= sec; s++) counts.push(this.buckets.get(s) || 0);
      $(".rate", this.panel).textContent = counts[CHART_SECONDS - 2] + "/s";
      const canvas = $(".chart", this.panel);
      canvas.dataset.counts = counts.join(",");
      const g = canvas.getContext("2d");
      g.clearRect(0, 0, canvas.width, canvas.height);
      const peak = Math.max(1, ...counts);
      const w = canvas.width / CHART_SECONDS;
      g.fillStyle = "#1f5fbf";
      counts.forEach((c, i) => {
        if (!c) return;
        const h = Math.max(1, Math.round((c / peak) * (canvas.height - 2)));
        g.fillRect(Math.floor(i * w), canvas.height - h, Math.max(1, Math.floor(w) - 1), h);
      });
      canvas.title = "events per second over the last minute (peak " + peak + "/s)";
    }
  }

  // subs holds the page's subscriptions by name.
  const subs = {
    all: new Map(),
    count: 0,

    async start(spec) {
      await session.whenReady();
      // Names are s1, s2, … never reused while the server may hold one
      // (a refused start leaves nothing, so its name is taken again).
      const n = ++this.count;
      const name = "s" + n;
      const sub = new Sub(name, spec);
      sub.mount();
      this.all.set(name, sub);
      const r = await sub.subscribe();
      if (!r.ok && r.error.code !== "DISCONNECTED") {
        // Refused: nothing is left behind.
        this.all.delete(name);
        if (this.count === n) this.count--;
        sub.panel.remove();
        $("#no-subs").hidden = this.all.size > 0;
        return r;
      }
      $("#watch-form").dataset.started = name;
      return r;
    },

    async remove(sub) {
      const wasActive = sub.active && sub.gen !== null;
      sub.active = false;
      this.all.delete(sub.name);
      sub.panel.remove();
      $("#no-subs").hidden = this.all.size > 0;
      if (wasActive) await session.request("unsubscribe", { name: sub.name });
    },

    frame(f) {
      const sub = this.all.get(f.sub);
      if (sub) sub.frame(f);
    },

    down() {
      for (const sub of this.all.values()) {
        if (!sub.active) continue;
        sub.gen = null;
        sub.setState("waiting", "connection lost; will resume" + (sub.next && sub.next.id !== undefined ? " from sequence " + sub.next.id : ""));
      }
    },

    up() {
      for (const sub of this.all.values()) {
        if (!sub.active) continue;
        sub.restarts++;
        sub.panel.dataset.restarts = String(sub.restarts);
        const from = sub.next && sub.next.id !== undefined ? "sequence " + sub.next.id : "the start";
        sub.subscribe().then((r) => {
          if (r.ok) sub.resumed("from " + from + " after a reconnect");
        });
      }
    },

    tick() {
      const now = Date.now();
      for (const sub of this.all.values()) sub.tick(now);
    },
  };

  const session = new Session();

  // ---- wiring -----------------------------------------------------------

  function refreshTypes() {
    const sel = $("#event-type");
    const keep = sel.value;
    sel.replaceChildren(...schemas.types.map((t) => el("option", { value: t }, t)));
    if (schemas.types.includes(keep)) sel.value = keep;
    buildForms(sel.value);
  }

  async function onWatch(e) {
    e.preventDefault();
    const form = e.target;
    const box = $(".form-error", form);
    hideError(box);
    const type = $("#event-type").value;
    const kind = form.querySelector("[name=kind]:checked").value;
    let spec;
    try {
      spec = { kind, eventType: type, identifier: watchIdentifier(form, type), where: valueOf("where"), from: null, to: null };
      const fromID = valueOf("from_id");
      const fromDate = valueOf("from_date");
      if (fromID !== "" && fromDate !== "") throw new FormError("start", "give a sequence or a date, not both");
      if (fromID !== "") spec.from = { id: fromID };
      else if (fromDate !== "") {
        const d = new Date(fromDate);
        if (isNaN(d)) throw new FormError("from date", "not a date: " + fromDate);
        spec.from = { date: d.toISOString().replace(".000Z", "Z") };
      }
      const toID = valueOf("to_id");
      const toDate = valueOf("to_date");
      if (kind === "replay") {
        if (toID !== "" && toDate !== "") throw new FormError("end", "give a sequence or a date, not both");
        if (toID !== "") spec.to = { id: toID };
        else if (toDate !== "") {
          const d = new Date(toDate);
          if (isNaN(d)) throw new FormError("to date", "not a date: " + toDate);
          spec.to = { date: d.toISOString().replace(".000Z", "Z") };
        }
      }
      const rate = valueOf("sample_rate");
      if (rate !== "") {
        // The server checks the range (0 to 1) and says so.
        const r = Number(rate);
        if (!Number.isFinite(r)) throw new FormError("sample rate", "not a number: " + rate);
        spec.sampleRate = r;
      }
      if (kind !== "replay") spec.mode = valueOf("mode");
    } catch (err) {
      showError(box, err);
      return;
    }
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const r = await subs.start(spec);
      if (!r.ok && r.error.code !== "DISCONNECTED") showError(box, r.error);
    } finally {
      button.disabled = false;
    }
  }

  async function onNotify(e) {
    e.preventDefault();
    const form = e.target;
    const box = $(".form-error", form);
    const result = $(".form-result", form);
    hideError(box);
    result.hidden = true;
    const type = $("#event-type").value;
    let body;
    try {
      body = { event_type: type, identifier: notifyIdentifier(form, type) };
      const p = valueOf("payload");
      if (p !== "") body.payload = jsonOf("payload", p);
    } catch (err) {
      showError(box, err);
      return;
    }
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    if (token()) headers.Authorization = "Bearer " + token();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    form.dataset.state = "sending";
    try {
      const resp = await fetch("/api/v1/notification", { method: "POST", headers, body: JSON.stringify(body) });
      let answer = {};
      try {
        answer = await resp.json();
      } catch {
        answer = { message: resp.status + " " + resp.statusText };
      }
      if (resp.ok) {
        result.hidden = false;
        result.textContent = "stored" + (answer.notification_id ? " as " + answer.notification_id : "") +
          " at " + answer.processed_at + " (request " + answer.request_id + ")";
        result.dataset.id = answer.notification_id || "";
        form.dataset.state = "done";
      } else {
        showError(box, { code: answer.code || String(resp.status), message: answer.message || resp.statusText });
        form.dataset.state = "error";
      }
    } catch (err) {
      showError(box, { code: "NETWORK", message: err.message });
      form.dataset.state = "error";
    } finally {
      button.disabled = false;
    }
  }

  function onToken(e) {
    e.preventDefault();
    const t = $("#token").value.trim();
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    else sessionStorage.removeItem(TOKEN_KEY);
    $("#token").value = "";
    $("#token").placeholder = t ? "a token is set for this tab" : "JWT, kept in this tab only";
    session.restart();
  }

  function onForget() {
    sessionStorage.removeItem(TOKEN_KEY);
    $("#token").value = "";
    $("#token").placeholder = "JWT, kept in this tab only";
    session.restart();
  }

  async function main() {
    // Anything the policy refuses is a fault of the console: say so.
    document.addEventListener("securitypolicyviolation", (e) => {
      document.body.dataset.policyViolations = String(Number(document.body.dataset.policyViolations || 0) + 1);
      console.error("Content-Security-Policy refused " + e.effectiveDirective + " " + (e.blockedURI || "(inline)"));
    });
    $("#watch-form").addEventListener("submit", onWatch);
    $("#notify-form").addEventListener("submit", onNotify);
    $("#token-form").addEventListener("submit", onToken);
    $("#token-forget").addEventListener("click", onForget);
    $("#messages").addEventListener("click", (e) => {
      e.target.hidden = true;
    });
    $("#messages").title = "click to dismiss";
    $("#event-type").addEventListener("change", (e) => buildForms(e.target.value));
    for (const r of document.querySelectorAll("#watch-form [name=kind]")) {
      r.addEventListener("change", () => {
        $("#watch-form").dataset.kind = $("#watch-form [name=kind]:checked").value;
      });
    }
    if (token()) $("#token").placeholder = "a token is set for this tab";
    try {
      await loadSchemas();
      refreshTypes();
    } catch (err) {
      message("cannot read the schemas: " + (err.message || err));
    }
    session.connect();
    setInterval(() => subs.tick(), 1000);
    document.body.dataset.ready = "";
  }

  main();
})();
