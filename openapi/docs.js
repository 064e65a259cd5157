// The "try it" forms of the docs page. Everything else on the page is
// rendered by the server; without this script the forms stay hidden.
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
  function show(form, status, headers, body) {
    var out = form.querySelector(".try-result");
    out.querySelector(".try-status").textContent = status;
    out.querySelector(".try-headers").textContent = headers;
    out.querySelector(".try-response").textContent = body;
    out.hidden = false;
    form.setAttribute("data-state", "done");
  }
  function send(form) {
    var init = { method: form.getAttribute("data-method"), headers: {} };
    var auth = form.querySelector("input[data-in=header]");
    if (auth && auth.value !== "") init.headers[auth.name] = auth.value;
    var body = form.elements.body;
    if (body && body.value.trim() !== "") {
      init.body = body.value;
      init.headers["Content-Type"] = "application/json";
    }
    form.setAttribute("data-state", "sending");
    fetch(target(form), init).then(function (r) {
      return r.text().then(function (text) {
        var lines = [];
        r.headers.forEach(function (v, k) { lines.push(k + ": " + v); });
        lines.sort();
        if (/^application\/json/.test(r.headers.get("Content-Type") || "")) {
          try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* shown as sent */ }
        }
        show(form, r.status + " " + r.statusText, lines.join("\n"), text);
      });
    })["catch"](function (e) {
      show(form, "request failed", "", String(e && e.message || e));
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("form.try"), function (form) {
    form.hidden = false;
    var pick = form.querySelector("select.try-example");
    if (pick) {
      pick.addEventListener("change", function () {
        form.elements.body.value = pick.options[pick.selectedIndex].getAttribute("data-body");
      });
    }
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      send(form);
    });
  });
})();
