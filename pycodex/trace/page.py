"""The page template of ``pycodex trace html``: inline CSS and JS only (no network), the timeline as data.

The script renders every turn from the embedded JSON; any script error is shown on the page itself and
marked on ``<body data-render>`` so a headless browser test sees it in the DOM."""

from __future__ import annotations

__all__ = ["PAGE"]

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>pycodex trace: __TITLE__</title>
<link rel="icon" href="data:,">
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fafafa; }
h1 { font-size: 18px; } h2 { font-size: 15px; margin: 0 0 .4em; }
.turn { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .8em 1em; margin: 1em 0; }
.status-completed { color: #1a7f37; } .status-failed, .status-interrupted { color: #cf222e; }
.lane { display: flex; align-items: center; margin: 3px 0; }
.lane-name { width: 90px; flex: none; color: #666; }
.track { position: relative; flex: 1; height: 18px; background: #f3f3f3; border-radius: 3px; }
.bar { position: absolute; top: 2px; height: 14px; border-radius: 3px; min-width: 3px; }
.bar.model { background: #8250df; } .bar.tool { background: #0969da; } .bar.item { background: #8c959f; }
.bar.approval { background: repeating-linear-gradient(45deg, #d4a72c, #d4a72c 4px, #f2cc60 4px, #f2cc60 8px); }
.bar.exec { background: #1f883d; } .bar.error { background: #cf222e; }
table { border-collapse: collapse; } td, th { padding: 2px 10px; text-align: left; border-bottom: 1px solid #eee; }
.err { color: #cf222e; font-weight: 600; } .muted { color: #888; }
details { margin-top: .5em; } .legend span { display: inline-block; margin-right: 1em; }
.legend i { display: inline-block; width: 12px; height: 10px; margin-right: 4px; vertical-align: middle; }
</style>
</head>
<body data-render="pending">
<h1>pycodex trace: __TITLE__</h1>
<p id="summary" class="muted"></p>
<p class="legend"><span><i class="bar model" style="position:static"></i>model streaming</span>
<span><i class="bar tool" style="position:static"></i>tool call</span>
<span><i class="bar approval" style="position:static"></i>waiting on the user</span>
<span><i class="bar exec" style="position:static"></i>exec-server call</span>
<span><i class="bar item" style="position:static"></i>message / reasoning</span></p>
<div id="turns"></div>
<h2>Requests</h2>
<table id="requests"><thead><tr><th>at</th><th>from</th><th>method</th><th>latency</th><th>result</th></tr></thead>
<tbody></tbody></table>
<h2>Errors</h2>
<ul id="errors"></ul>
<script type="application/json" id="trace-data">__DATA__</script>
<script>
"use strict";
(function () {
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }
  function ms(s) { return s === null || s === undefined ? "-" : (s * 1000).toFixed(1) + " ms"; }
  function lane(name, bars, start, span) {
    var row = el("div", {"class": "lane"});
    row.appendChild(el("div", {"class": "lane-name"}, name));
    var track = el("div", {"class": "track"});
    bars.forEach(function (b) {
      var left = Math.max(0, (b.start - start) / span * 100);
      var end = b.end === null || b.end === undefined ? start + span : b.end;
      var width = Math.max(0.4, (end - b.start) / span * 100);
      var bar = el("div", {"class": "bar " + b.kind, "title": b.title});
      bar.style.left = left.toFixed(3) + "%";
      bar.style.width = Math.min(width, 100 - left).toFixed(3) + "%";
      track.appendChild(bar);
    });
    row.appendChild(track);
    return row;
  }
  function renderTurn(turn, index) {
    var end = turn.end === null ? turn.start : turn.end;
    turn.model.concat(turn.items).forEach(function (x) { if (x.end !== null && x.end > end) { end = x.end; } });
    var span = Math.max(end - turn.start, 0.001);
    var box = el("section", {"class": "turn", "data-turn-id": String(turn.id)});
    var head = el("h2");
    head.appendChild(document.createTextNode("Turn " + (index + 1) + " "));
    head.appendChild(el("code", {}, String(turn.id)));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(el("span", {"class": "status-" + turn.status}, String(turn.status)));
    head.appendChild(document.createTextNode(" " + ms(turn.end === null ? null : turn.end - turn.start)));
    box.appendChild(head);
    box.appendChild(lane("model", turn.model.map(function (m) {
      return {start: m.start, end: m.end, kind: m.status === "completed" || m.status === "open" ? "model" : "error",
              title: "model " + ms(m.end === null ? null : m.end - m.start) + ", first event " + ms(m.first_event)
                     + ", " + m.events + " events -> " + m.output.join(", ")};
    }), turn.start, span));
    box.appendChild(lane("tools", turn.items.filter(function (i) { return i.tool; }).map(function (i) {
      return {start: i.start, end: i.end, kind: i.status === "failed" ? "error" : "tool",
              title: i.type + " " + ms(i.end === null ? null : i.end - i.start) + ": " + i.label};
    }), turn.start, span));
    box.appendChild(lane("approvals", turn.approvals.map(function (a) {
      return {start: a.t, end: a.end, kind: "approval",
              title: "waiting on the user " + ms(a.waited) + " -> " + (a.decision || "unanswered")};
    }), turn.start, span));
    box.appendChild(lane("exec", turn.exec.map(function (c) {
      return {start: c.t, end: c.latency === null ? null : c.t + c.latency, kind: c.error ? "error" : "exec",
              title: c.method + " " + ms(c.latency)};
    }), turn.start, span));
    box.appendChild(lane("messages", turn.items.filter(function (i) { return !i.tool; }).map(function (i) {
      return {start: i.start, end: i.end, kind: "item", title: i.type + ": " + i.label};
    }), turn.start, span));
    var details = el("details");
    details.appendChild(el("summary", {}, turn.items.length + " items, " + turn.model.length + " model round trips, "
                                          + turn.approvals.length + " approvals"));
    var list = el("ul");
    turn.items.forEach(function (i) {
      list.appendChild(el("li", {}, i.type + " (" + ms(i.end === null ? null : i.end - i.start) + "): " + i.label));
    });
    details.appendChild(list);
    box.appendChild(details);
    turn.errors.forEach(function (e) { box.appendChild(el("p", {"class": "err"}, e.what)); });
    return box;
  }
  try {
    var data = JSON.parse(document.getElementById("trace-data").textContent);
    document.getElementById("summary").textContent = data.events + " events over " + data.duration.toFixed(3)
      + " s; " + data.turns.length + " turns; " + data.errors.length + " errors";
    var turns = document.getElementById("turns");
    data.turns.forEach(function (turn, i) { turns.appendChild(renderTurn(turn, i)); });
    if (!data.turns.length) { turns.appendChild(el("p", {"class": "muted"}, "no turns in this trace")); }
    var body = document.querySelector("#requests tbody");
    data.requests.forEach(function (r) {
      var row = el("tr", r.error ? {"class": "err"} : {});
      [r.t.toFixed(3) + " s", r.from, r.method, ms(r.latency), r.error || (r.latency === null ? "no answer" : "ok")]
        .forEach(function (cell) { row.appendChild(el("td", {}, cell)); });
      body.appendChild(row);
    });
    var errors = document.getElementById("errors");
    data.errors.forEach(function (e) { errors.appendChild(el("li", {"class": "err"}, e.t.toFixed(3) + " s " + e.what)); });
    if (!data.errors.length) { errors.appendChild(el("li", {"class": "muted"}, "none")); }
    document.body.setAttribute("data-render", "ok");
    document.body.setAttribute("data-turns", String(data.turns.length));
  } catch (err) {
    document.body.setAttribute("data-render", "error");
    document.body.insertBefore(el("pre", {"class": "err"}, "could not render the trace: " + err), document.body.firstChild);
    throw err;
  }
})();
</script>
</body>
</html>
"""
