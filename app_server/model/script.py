"""The model script format of the offline `scripted` provider: parsing, validation, expansion to events.

A script is JSON: a list of responses, or `{"responses": [...]}`. Each model request consumes the next
response. A response is a list of output items, or `{"output": [...], "usage": {...}, "delay_ms": N}`
(`delay_ms` is slept before each event). Items:

    "plain text"                                           an assistant message (shorthand)
    {"type": "message", "text": "...", "deltas": [...], "phase": null}
                                                           deltas default to one delta with the whole text
    {"type": "reasoning", "summary": ["..."]}              reasoning with summary parts
    {"type": "function_call", "name": "exec_command", "arguments": {...} | "json", "call_id": "...",
     "namespace": "..."}                                   namespace optional (a namespace tool's function)
    {"type": "custom_tool_call", "name": "apply_patch", "input": "...", "call_id": "..."}
    {"type": "web_search_call", "action": {"type": "search", "query": "..."}, "status": "completed"}
                                                           a hosted web search (added without its action)
Faults (each ends the response; items before it are still streamed):
    {"type": "failed", "code": "server_error", "message": "..."}     as `response.failed`
    {"type": "http_error", "status": 500, "body": "..." | {...}}      as that HTTP answer (only first)
    {"type": "truncate"}                                   the stream closes before response.completed
    {"type": "stall", "seconds": 30}                       hold the stream open (an interrupt ends it)

One expansion serves both users: ``expand_wire`` writes the Responses stream events as the API sends
them (JSON objects), which app_server/model/mock_server.py (`pycodex mock-model`) serves over HTTP, and ``expand`` types the
same events with the product's own event parser for the in-process provider.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app_server.model.events import ResponseEvent, Usage, event_from_json, parse_usage
from app_server.model.provider import ScriptError as ScriptError  # re-exported: the parser raises it
from pycodex.json_types import JsonObj

ITEM_TYPES = ("message", "reasoning", "function_call", "custom_tool_call", "web_search_call")
FAULT_TYPES = ("failed", "http_error", "truncate", "stall")
DEFAULT_USAGE = Usage(input_tokens=10, output_tokens=5, total_tokens=15)


@dataclass(frozen=True)
class Fault:
    """A scripted fault that ends a response (``failed``, ``http_error``, ``truncate`` or ``stall``)."""

    kind: str  # one of FAULT_TYPES
    spec: JsonObj


@dataclass(frozen=True)
class ScriptedResponse:
    """One scripted response: its items, the fault ending it, its usage and the delay before each event."""

    items: tuple[JsonObj, ...]
    fault: Fault | None
    usage: Usage
    delay_ms: int = 0


@dataclass(frozen=True)
class ModelScript:
    """A parsed model script: the responses, in the order requests consume them."""

    source: str  # where it came from, for messages
    responses: tuple[ScriptedResponse, ...]


def _parse_item(raw: object, where: str) -> JsonObj:
    if isinstance(raw, str):
        return {"type": "message", "text": raw}
    if not isinstance(raw, dict):
        raise ScriptError(f"{where}: an item must be a string or an object, got {type(raw).__name__}")
    kind = raw.get("type")
    if kind not in ITEM_TYPES + FAULT_TYPES:
        allowed = ", ".join(ITEM_TYPES + FAULT_TYPES)
        raise ScriptError(f"{where}: unknown item type {kind!r} (expected one of {allowed})")
    if kind in ("function_call", "custom_tool_call") and not isinstance(raw.get("name"), str):
        raise ScriptError(f"{where}: {kind} needs a string `name`")
    if kind == "message" and not isinstance(raw.get("text", ""), str):
        raise ScriptError(f"{where}: message `text` must be a string")
    if kind == "http_error" and not isinstance(raw.get("status"), int):
        raise ScriptError(f"{where}: http_error needs an integer `status`")
    return raw


def parse_response(raw: object, where: str) -> ScriptedResponse:
    """One response of a script (a list of items, or an object with ``output``); raises ScriptError."""
    spec: Mapping[str, object]
    if isinstance(raw, list):
        spec = {"output": raw}
    elif isinstance(raw, dict):
        spec = raw
    else:
        raise ScriptError(f"{where}: a response must be a list of items or an object with `output`")
    output = spec.get("output", [])
    if not isinstance(output, list):
        raise ScriptError(f"{where}: `output` must be a list")
    items: list[JsonObj] = []
    fault: Fault | None = None
    for index, raw_item in enumerate(output):
        item = _parse_item(raw_item, f"{where} item {index}")
        if fault is not None:
            raise ScriptError(f"{where} item {index}: nothing may follow a `{fault.kind}` fault")
        if item["type"] in FAULT_TYPES:
            if item["type"] == "http_error" and items:
                raise ScriptError(f"{where} item {index}: http_error must be the only item")
            fault = Fault(item["type"], item)
        else:
            items.append(item)
    usage = parse_usage(spec["usage"]) if "usage" in spec else DEFAULT_USAGE
    delay = spec.get("delay_ms", 0)
    if not isinstance(delay, int) or delay < 0:
        raise ScriptError(f"{where}: `delay_ms` must be a non-negative integer")
    return ScriptedResponse(tuple(items), fault, usage or DEFAULT_USAGE, delay)


def parse_script(data: object, source: str = "<script>") -> ModelScript:
    """A whole script (a list of responses, or ``{"responses": [...]}``); raises ScriptError."""
    responses = data.get("responses") if isinstance(data, dict) else data
    if not isinstance(responses, list) or not responses:
        raise ScriptError(f"model script {source}: expected a non-empty list of responses")
    return ModelScript(
        source=source,
        responses=tuple(
            parse_response(r, f"model script {source}: response {i}") for i, r in enumerate(responses)
        ),
    )


def load_script(path: Path) -> ModelScript:
    """Read and parse the script file at ``path``; raises ScriptError saying what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read model script {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ScriptError(f"model script {path}: not valid UTF-8 (byte {exc.start})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScriptError(f"model script {path}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    return parse_script(data, str(path))


def usage_json(usage: Usage) -> JsonObj:
    """``usage`` as the Responses API writes it in ``response.completed``."""
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_input_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_output_tokens},
        "total_tokens": usage.total_tokens,
    }


def _item_events(spec: JsonObj, index: int, item_id: str, call_id: str) -> list[JsonObj]:
    """``output_item.added``, the deltas and ``output_item.done`` of one scripted item."""
    kind = spec["type"]
    added: JsonObj
    deltas: list[JsonObj] = []
    if kind == "message":
        text = spec.get("text", "")
        done: JsonObj = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        if spec.get("phase") is not None:
            done["phase"] = spec["phase"]
        added = {**done, "status": "in_progress", "content": []}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        deltas = [
            {"type": "response.output_text.delta", **where, "delta": delta}
            for delta in spec.get("deltas", [text] if text else [])
        ]
    elif kind == "reasoning":
        summary = [str(s) for s in spec.get("summary", [])]
        done = {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": s} for s in summary],
        }
        added = {**done, "summary": []}
        for s_index, text in enumerate(summary):
            where = {"item_id": item_id, "output_index": index, "summary_index": s_index}
            part = {"type": "summary_text", "text": ""}
            deltas.append({"type": "response.reasoning_summary_part.added", **where, "part": part})
            deltas.append({"type": "response.reasoning_summary_text.delta", **where, "delta": text})
    elif kind == "function_call":
        arguments = spec.get("arguments", {})
        done = added = {
            "type": "function_call",
            "id": item_id,
            "call_id": spec.get("call_id") or call_id,
            "name": spec["name"],
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            "status": "completed",
        }
        if isinstance(spec.get("namespace"), str):  # a namespace tool's function (skills, mcp__<server>)
            done["namespace"] = spec["namespace"]
    elif kind == "web_search_call":  # the API announces the search before it knows the action
        done = {"type": "web_search_call", "id": item_id, "status": str(spec.get("status", "completed"))}
        if isinstance(spec.get("action"), dict):
            done["action"] = spec["action"]
        added = {"type": "web_search_call", "id": item_id, "status": "in_progress"}
    else:  # custom_tool_call
        done = added = {
            "type": "custom_tool_call",
            "id": item_id,
            "call_id": spec.get("call_id") or call_id,
            "name": spec["name"],
            "input": str(spec.get("input", "")),
            "status": "completed",
        }
    return [
        {"type": "response.output_item.added", "output_index": index, "item": added},
        *deltas,
        {"type": "response.output_item.done", "output_index": index, "item": done},
    ]


def expand_wire(
    response: ScriptedResponse, response_id: str, *, item_prefix: str = "item", call_prefix: str = "call"
) -> list[JsonObj]:
    """The Responses stream events of one scripted response, as JSON objects, up to (not including) its
    fault, else through ``response.completed``. Unnamed items get ids ``{item_prefix}_{index}`` and call
    ids ``{call_prefix}_{index}``."""
    events: list[JsonObj] = [{"type": "response.created", "response": {"id": response_id}}]
    for index, spec in enumerate(response.items):
        item_id = spec.get("id") or f"{item_prefix}_{index}"
        events += _item_events(spec, index, item_id, f"{call_prefix}_{index}")
    if response.fault is None:
        completed = {"id": response_id, "usage": usage_json(response.usage)}
        events.append({"type": "response.completed", "response": completed})
    return events


def failed_event(response: ScriptedResponse, response_id: str) -> JsonObj | None:
    """The ``response.failed`` event a ``failed`` fault ends the stream with (None for other endings)."""
    if response.fault is None or response.fault.kind != "failed":
        return None
    error = {key: response.fault.spec[key] for key in ("code", "message") if key in response.fault.spec}
    return {"type": "response.failed", "response": {"id": response_id, "error": error}}


def expand(response: ScriptedResponse, response_id: str, id_prefix: str) -> list[ResponseEvent]:
    """The typed events of one scripted response, up to (not including) its fault or completion."""
    wire = expand_wire(response, response_id, item_prefix=id_prefix, call_prefix=f"call_{id_prefix}")
    return [event_from_json(event) for event in wire]
