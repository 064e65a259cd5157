// The "try it" forms of the docs page. Everything else on the page is
// rendered by the server; without this script the forms stay hidden. It
// is served beside the page (never inline), under the page's
// Content-Security-Policy.
//
// A form of a JSON operation shows the answer's status, headers and
// body. A form of a streaming operation (watch, replay: data-stream)
// reads the answer as it arrives and lists each Server-Sent Event, its
// name and its data; Stop ends the stream.
(function () {
  "use strict";
  if (!window.fetch) return;
  // target builds the request URL from the form's path and query inputs.
  function target(form) {
    var path = form.getAttribute("data-path"), query = [];
    Array.prototype.forEach.call(form.querySelectorAll("input[data-in]"), function (input) {
      var v = input.value;
      switch (input.getAttribute("data-in")) {
        case "path":
          path = path.split("{" + input.name + "}").join(encodeURIComponent(v));
          break;
        case "query":
          if (v !== "") query.push(encodeURIComponent(input.name) + "=" + encodeURIComponent(v));
          break;
      }
    });
    return path + (query.length ? "?" + query.join("&") : "");
  }
  function headerLines(r) {
    var lines = [];
    r.headers.forEach(function (v, k) { lines.push(k + ": " + v); });
    lines.sort();
    return lines.join("\n");
  }
  function pretty(r, text) {
    if (/^application\/json/.test(r.headers.get("Content-Type") || "")) {
      try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* shown as sent */ }
    }
    return text;
  }
  function show(form, status, headers, body) {
    var out = form.querySelector(".try-result");
    out.querySelector(".try-status").textContent = status;
    out.querySelector(".try-headers").textContent = headers;
    var response = out.querySelector(".try-response");
    response.textContent = body;
    response.hidden = form.hasAttribute("data-stream") && body === "";
    out.hidden = false;
  }
  function request(form, signal) {
    var init = { method: form.getAttribute("data-method"), headers: {}, signal: signal };
    var auth = form.querySelector("input[data-in=header]");
    if (auth && auth.value !== "") init.headers[auth.name] = auth.value;
    var body = form.elements.body;
    if (body && body.value.trim() !== "") {
      init.body = body.value;
      init.headers["Content-Type"] = "application/json";
    }
    return fetch(target(form), init);
  }
  function send(form) {
    form.setAttribute("data-state", "sending");
    request(form).then(function (r) {
      return r.text().then(function (text) {
        show(form, r.status + " " + r.statusText, headerLines(r), pretty(r, text));
        form.setAttribute("data-state", "done");
      });
    })["catch"](function (e) {
      show(form, "request failed", "", String(e && e.message || e));
      form.setAttribute("data-state", "done");
    });
  }

  // ---- streams ---------------------------------------------------------

  // addEvent lists one Server-Sent Event: its name and its data.
  function addEvent(form, name, data) {
    var list = form.querySelector(".try-events");
    var li = document.createElement("li");
    li.setAttribute("data-event", name);
    var n = document.createElement("code");
    n.className = "try-event-name";
    n.textContent = name;
    var d = document.createElement("pre");
    d.className = "try-event-data";
    d.textContent = data;
    li.appendChild(n);
    li.appendChild(d);
    list.appendChild(li);
    form.setAttribute("data-events", String(list.children.length));
  }
  // sseParser returns a function fed with text as it arrives; it calls
  // onEvent(name, data) for each complete event (a blank line ends one;
  // several data lines are joined with newlines; comments are skipped).
  function sseParser(onEvent) {
    var buf = "", name = "", data = [];
    return function (text) {
      buf += text;
      var i;
      while ((i = buf.search(/\r\n|\r|\n/)) >= 0) {
        var line = buf.slice(0, i);
        buf = buf.slice(i + (buf.substr(i, 2) === "\r\n" ? 2 : 1));
        if (line === "") {
          if (data.length || name) onEvent(name || "message", data.join("\n"));
          name = "";
          data = [];
          continue;
        }
        if (line.charAt(0) === ":") continue;
        var colon = line.indexOf(":");
        var field = colon < 0 ? line : line.slice(0, colon);
        var value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") name = value;
        else if (field === "data") data.push(value);
      }
    };
  }
  function streamState(form, state, text) {
    form.setAttribute("data-state", state);
    form.querySelector(".try-stream-state").textContent = text;
    var stop = form.querySelector(".try-stop");
    stop.disabled = state !== "streaming" && state !== "sending";
    form.querySelector("button[type=submit]").disabled = !stop.disabled;
  }
  function sendStream(form) {
    var ctl = window.AbortController ? new AbortController() : null;
    form.tryStop = function () { if (ctl) ctl.abort(); };
    form.querySelector(".try-events").textContent = "";
    form.removeAttribute("data-events");
    show(form, "", "", "");
    streamState(form, "sending", "sending…");
    request(form, ctl ? ctl.signal : undefined).then(function (r) {
      show(form, r.status + " " + r.statusText, headerLines(r), "");
      if (!r.ok || !r.body || !/^text\/event-stream/.test(r.headers.get("Content-Type") || "")) {
        // Refused: the answer is an error body, shown whole.
        return r.text().then(function (text) {
          show(form, r.status + " " + r.statusText, headerLines(r), pretty(r, text));
          streamState(form, "done", "");
        });
      }
      streamState(form, "streaming", "receiving events…");
      var reader = r.body.getReader();
      var decoder = new TextDecoder();
      var feed = sseParser(function (name, data) { addEvent(form, name, data); });
      function pump() {
        return reader.read().then(function (chunk) {
          if (chunk.done) {
            feed(decoder.decode());
            streamState(form, "ended", "the server ended the stream");
            return;
          }
          feed(decoder.decode(chunk.value, { stream: true }));
          return pump();
        });
      }
      return pump();
    })["catch"](function (e) {
      if (e && e.name === "AbortError") {
        streamState(form, "stopped", "stopped");
        return;
      }
      show(form, form.querySelector(".try-status").textContent || "request failed", form.querySelector(".try-headers").textContent, String(e && e.message || e));
      streamState(form, "done", "");
    });
  }

  // Anything the policy refuses is counted and reported as an error.
  document.addEventListener("securitypolicyviolation", function (e) {
    document.body.setAttribute("data-policy-violations", String(Number(document.body.getAttribute("data-policy-violations") || 0) + 1));
    console.error("Content-Security-Policy refused " + e.effectiveDirective + " " + (e.blockedURI || "(inline)"));
  });
  Array.prototype.forEach.call(document.querySelectorAll("form.try"), function (form) {
    form.hidden = false;
    var pick = form.querySelector("select.try-example");
    if (pick) {
      pick.addEventListener("change", function () {
        form.elements.body.value = pick.options[pick.selectedIndex].getAttribute("data-body");
      });
    }
    var stream = form.hasAttribute("data-stream");
    if (stream) {
      form.querySelector(".try-stop").addEventListener("click", function () {
        if (form.tryStop) form.tryStop();
      });
    }
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      if (stream) sendStream(form);
      else send(form);
    });
  });
  document.body.setAttribute("data-ready", "");
})();
