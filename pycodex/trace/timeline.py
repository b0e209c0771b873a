"""Reading a trace and turning it into a timeline: requests with latencies, turns with their items, model
round trips, tool calls, approvals and exec-server calls, and the errors. ``show``, ``--json`` and ``html``
all render this one structure (plain JSON values, so ``--json`` is just its dump)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pycodex.item_views import ITEM_VIEWS
from pycodex.json_types import JsonObj, JsonValue

__all__ = ["TraceReadError", "build_timeline", "read_trace"]

_LABEL_LIMIT = 80


class TraceReadError(ValueError):
    """A file that is not a trace; the message names the line."""


def read_trace(path: Path) -> list[JsonObj]:
    """The events of a trace file, one JSON line each; `TraceReadError` names the first bad line."""
    events: list[JsonObj] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TraceReadError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        bad_line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise TraceReadError(f"{path}:{bad_line}: not UTF-8 text, so not a trace") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            raise TraceReadError(f"{path}:{number}: not a JSON line") from None
        if not isinstance(event, dict) or not {"t", "dir", "channel"} <= event.keys():
            raise TraceReadError(f"{path}:{number}: not a trace event (needs t, dir, channel)")
        events.append(event)
    if not events:
        raise TraceReadError(f"{path}: empty trace")
    return events


def _label(value: object) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= _LABEL_LIMIT else text[: _LABEL_LIMIT - 1] + "…"


def _error_text(error: object) -> str:
    if isinstance(error, dict):
        return _label(f"{error.get('code', '')} {error.get('message', '')}".strip())
    return _label(error)


def _item_label(item: JsonObj) -> str:
    return _label(ITEM_VIEWS.view_of(item.get("type")).trace_label(item))


@dataclass
class _Builder:
    requests: list[JsonObj] = field(default_factory=list)
    turns: list[JsonObj] = field(default_factory=list)
    model: list[JsonObj] = field(default_factory=list)
    exec_calls: list[JsonObj] = field(default_factory=list)
    approvals: list[JsonObj] = field(default_factory=list)
    errors: list[JsonObj] = field(default_factory=list)
    _open: dict[tuple[str, JsonValue, JsonValue], JsonObj] = field(default_factory=dict)
    _turns: dict[JsonValue, JsonObj] = field(default_factory=dict)
    _items: dict[JsonValue, JsonObj] = field(default_factory=dict)
    _model: dict[JsonValue, JsonObj] = field(default_factory=dict)

    def add(self, event: JsonObj) -> None:
        t, channel, direction = float(event["t"]), event["channel"], event["dir"]
        msg = event.get("msg")
        if channel == "approval":
            self._approval(t, direction, event.get("summary") or {})
        elif not isinstance(msg, dict):
            return
        elif channel == "client":
            self._rpc(t, direction, "client", event.get("conn"), msg)
            if direction == "out" and "method" in msg and "id" not in msg:
                self._notification(t, msg["method"], msg.get("params") or {})
        elif channel == "exec":
            self._rpc(t, "in" if direction == "out" else "out", "exec", event.get("conn"), msg)
        elif channel == "model":
            self._model_event(t, direction, event.get("conn"), msg)

    def _rpc(self, t: float, direction: str, channel: str, conn: JsonValue, msg: JsonObj) -> None:
        """``direction`` as seen by the side that answers requests: ``in`` is a request to it."""
        if "method" in msg and "id" in msg:
            call = {"channel": channel, "conn": conn, "id": msg["id"], "method": msg["method"], "t": t,
                    "latency": None, "error": None, "from": "client" if direction == "in" else "server"}
            self._open[(channel, conn, (direction, msg["id"]))] = call
            (self.exec_calls if channel == "exec" else self.requests).append(call)
        elif "id" in msg:
            other = "out" if direction == "in" else "in"
            answered = self._open.pop((channel, conn, (other, msg["id"])), None)
            if answered is None:
                return
            answered["latency"] = round(t - answered["t"], 6)
            if "error" in msg:
                answered["error"] = _error_text(msg["error"])
                self.errors.append({"t": t, "what": f"{channel} {answered['method']}: {answered['error']}"})

    def _notification(self, t: float, method: str, params: JsonObj) -> None:
        turn = params.get("turn") if isinstance(params.get("turn"), dict) else None
        owner = self._turns.get(params.get("turnId") or (turn.get("id") if turn else None))
        if owner is not None:
            owner["notifications"][method] = owner["notifications"].get(method, 0) + 1
        if method == "turn/started" and turn:
            record = {"id": turn.get("id"), "threadId": params.get("threadId"), "start": t, "end": None,
                      "status": turn.get("status"), "items": [], "model": [], "approvals": [], "exec": [],
                      "errors": [], "notifications": {method: 1}}
            self._turns[turn.get("id")] = record
            self.turns.append(record)
        elif method == "turn/completed" and turn:
            finished = self._turns.get(turn.get("id"))
            if finished is not None:
                finished["end"], finished["status"] = t, turn.get("status")
            if turn.get("error"):
                self.errors.append({"t": t, "what": f"turn {turn.get('id')}: {_error_text(turn['error'])}"})
        elif method in ("item/started", "item/completed") and isinstance(params.get("item"), dict):
            self._item(t, method, params)
        elif method.endswith("/delta") or method.endswith("Delta"):
            item = self._items.get(params.get("itemId"))
            if item is not None:
                item["deltas"] += 1
        elif method == "error":
            self.errors.append({"t": t, "what": f"error notification: {_error_text(params.get('error'))}"})
        item_id = params.get("itemId") or (params["item"].get("id") if isinstance(params.get("item"), dict) else None)
        if item_id in self._items:
            self._items[item_id]["notifications"] += 1

    def _item(self, t: float, method: str, params: JsonObj) -> None:
        item = params["item"]
        record = self._items.get(item.get("id"))
        if record is None:
            record = {"id": item.get("id"), "type": item.get("type"), "start": t, "end": None,
                      "label": _item_label(item), "deltas": 0, "notifications": 0, "status": item.get("status"),
                      "tool": not ITEM_VIEWS.view_of(item.get("type")).conversation}
            self._items[item.get("id")] = record
            turn = self._turns.get(params.get("turnId"))
            if turn is not None:
                turn["items"].append(record)
        if method == "item/completed":
            record["end"], record["status"] = t, item.get("status")
            record["label"] = _item_label(item) or record["label"]
            if item.get("status") == "failed":
                self.errors.append({"t": t, "what": f"{item.get('type')} {item.get('id')} failed"})

    def _model_event(self, t: float, direction: str, conn: JsonValue, msg: JsonObj) -> None:
        if direction == "out":
            body = msg["body"] if isinstance(msg.get("body"), dict) else {}
            started = {"conn": conn, "start": t, "first_event": None, "end": None, "events": 0,
                       "status": "open", "model": body.get("model"), "output": []}
            self._model[conn] = started
            self.model.append(started)
            return
        record = self._model.get(conn)
        if record is None:
            return
        record["events"] += 1
        if record["first_event"] is None:
            record["first_event"] = round(t - record["start"], 6)
        kind = str(msg.get("type", ""))
        if kind == "response.output_item.done" and isinstance(msg.get("item"), dict):
            record["output"].append(msg["item"].get("type"))
        if kind in ("response.completed", "response.failed", "response.incomplete", "error"):
            record["end"], record["status"] = t, kind.rpartition(".")[2]
            if kind != "response.completed":
                self.errors.append({"t": t, "what": f"model response {kind}"})

    def _approval(self, t: float, direction: str, summary: JsonObj) -> None:
        if direction == "out":
            self.approvals.append({**summary, "t": t, "end": None, "decision": None, "waited": None})
            return
        for approval in reversed(self.approvals):
            if approval.get("id") == summary.get("id") and approval["end"] is None:
                approval.update(end=t, decision=summary.get("decision"), waited=summary.get("waited"))
                return

    def assign(self) -> None:
        """Attach model round trips, exec calls and approvals to the turn whose span holds them."""
        for turn in self.turns:
            end = turn["end"] if turn["end"] is not None else float("inf")
            turn["model"] = [m for m in self.model if turn["start"] <= m["start"] <= end]
            turn["exec"] = [c for c in self.exec_calls if turn["start"] <= c["t"] <= end]
            turn["approvals"] = [a for a in self.approvals
                                 if a.get("turnId") == turn["id"] or (a.get("turnId") is None
                                                                      and turn["start"] <= a["t"] <= end)]
            turn["errors"] = [e for e in self.errors if turn["start"] <= e["t"] <= end]


def build_timeline(events: list[JsonObj]) -> JsonObj:
    """The timeline of a trace's events (plain JSON values: ``--json`` prints it as it is)."""
    builder = _Builder()
    for event in events:
        builder.add(event)
    builder.assign()
    header = next((e.get("summary") for e in events if e.get("dir") == "meta"), None) or {}
    duration = max(float(e["t"]) for e in events)
    return {
        "format": header.get("format"),
        "server": header.get("pycodex"),
        "duration": round(duration, 6),
        "events": len(events),
        "requests": builder.requests,
        "turns": builder.turns,
        "model": builder.model,
        "exec": builder.exec_calls,
        "approvals": builder.approvals,
        "errors": builder.errors,
    }
