// lemmings serve: live updates of a run page through the browser's
// EventSource. No framework: new events are added to the timeline, and the
// board, status and workflow graph are fetched again after each checkpoint.
(function () {
  "use strict";
  var run = document.getElementById("run");
  var source = document.getElementById("source");
  if (source && source.form) {
    source.addEventListener("change", function () { source.form.submit(); });
  }
  // The runs list refreshes itself while some run is being worked on.
  var runs = document.getElementById("runs-wrap");
  if (runs && runs.dataset.refresh === "true") {
    var poll = setInterval(function () {
      fetch("/", { credentials: "same-origin", cache: "no-store" })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (html === null) { return; }
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("runs-wrap");
          if (!fresh) { return; }
          runs.replaceChildren.apply(runs, Array.from(fresh.childNodes));
          if (fresh.dataset.refresh !== "true") { clearInterval(poll); }
        })
        .catch(function () {});
    }, 3000);
  }
  if (!run || run.dataset.live !== "true" || !window.EventSource) {
    return;
  }
  var id = run.dataset.run;
  var body = document.getElementById("events-body");
  var count = document.getElementById("events-count");
  var state = document.getElementById("stream-state");
  var timer = null;

  function refresh() {
    timer = null;
    fetch("/runs/" + encodeURIComponent(id) + "/live", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html !== null) { document.getElementById("live").innerHTML = html; }
      })
      .catch(function () {});
  }
  function later() {
    if (!timer) { timer = setTimeout(refresh, 300); }
  }
  function cell(row, text) {
    var td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  var es = new EventSource("/runs/" + encodeURIComponent(id) + "/events?from=" + encodeURIComponent(run.dataset.from || "0"));
  es.onopen = function () { if (state) { state.textContent = "live"; } };
  es.onerror = function () { if (state) { state.textContent = "reconnecting"; } };
  // The server ends the stream of a run that stopped with "end" (and
  // answers a reconnection with 204, which stops the browser retrying).
  es.addEventListener("end", function () {
    es.close();
    if (state) { state.textContent = "ended"; }
  });
  var now = document.getElementById("now");
  var stream = document.getElementById("stream");
  // The "now" line follows the model call in flight: its tokens and rate
  // once a second, and the text it streams.
  function working(ev) {
    if (!now) { return; }
    if (ev.kind === "llm_start") {
      now.textContent = ev.clock + " " + ev.text + " …";
      if (stream) { stream.textContent = ""; stream.hidden = true; }
    } else if (ev.kind === "llm_progress") {
      now.textContent = ev.clock + " " + ev.text;
      if (stream && ev.stream) {
        stream.hidden = false;
        stream.textContent = (stream.textContent + ev.stream).slice(-4000);
        stream.scrollTop = stream.scrollHeight;
      }
    } else if (ev.kind === "llm_call" || ev.kind === "model_error" || ev.kind === "llm_retry") {
      now.textContent = ev.clock + " " + ev.text;
    } else if (ev.kind === "action" || ev.kind === "check" || ev.kind === "implementor_gate" || ev.kind === "gate") {
      now.textContent = ev.clock + " " + ev.text;
    }
  }
  es.onmessage = function (m) {
    var ev;
    try { ev = JSON.parse(m.data); } catch (e) { return; }
    working(ev);
    if (ev.row === false) { return; }
    var tr = document.createElement("tr");
    tr.className = (ev["class"] || "") + " fresh";
    tr.dataset.kind = ev.kind;
    cell(tr, ev.clock);
    cell(tr, String(ev.step)).className = "num";
    cell(tr, ev.node || "");
    cell(tr, ev.kind);
    cell(tr, ev.text || "");
    body.insertBefore(tr, body.firstChild);
    var n = parseInt(count.dataset.count || "0", 10) + 1;
    count.dataset.count = String(n);
    count.textContent = String(n);
    if (ev.kind === "checkpoint" || ev.kind === "progress" || ev.kind === "interrupt" || ev.kind === "node_start") {
      later();
    }
    if (ev.run_end) {
      // The run stopped (done, failed, stopped, paused, interrupted): show the whole page again.
      es.close();
      if (state) { state.textContent = "ended"; }
      setTimeout(function () { location.reload(); }, 700);
    }
  };
})();
