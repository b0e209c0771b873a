"""Typed Responses stream events, parsed from `SseEvent`s by a pure function.

Only what the turn runner needs is typed; every event and item keeps its raw JSON (`raw`) so history
can be sent back to the model verbatim. Unknown events become `UnknownEvent` and never raise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from app_server.model.sse import SseEvent
from pycodex.json_types import JsonObj


class EventParseError(ValueError):
    """An SSE event whose data is not a JSON object, or a known event missing a required field."""


# ---- output items ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MessageItem:
    """A ``message`` output item; ``text`` is all its text parts joined."""

    id: str | None
    role: str
    text: str  # all output_text parts joined
    raw: JsonObj = field(repr=False, compare=False)
    phase: str | None = None


@dataclass(frozen=True)
class FunctionCallItem:
    """A ``function_call`` output item (a tool call with JSON arguments)."""

    id: str | None
    call_id: str
    name: str
    arguments: str  # a JSON string, exactly as the model sent it
    raw: JsonObj = field(repr=False, compare=False)
    namespace: str | None = None


@dataclass(frozen=True)
class CustomToolCallItem:
    """A ``custom_tool_call`` output item (a freeform tool call, e.g. apply_patch)."""

    id: str | None
    call_id: str
    name: str
    input: str
    raw: JsonObj = field(repr=False, compare=False)


@dataclass(frozen=True)
class ReasoningItem:
    """A ``reasoning`` output item: its summary and content texts, and the encrypted content to send back."""

    id: str | None
    summary: tuple[str, ...]
    content: tuple[str, ...]
    encrypted_content: str | None
    raw: JsonObj = field(repr=False, compare=False)


@dataclass(frozen=True)
class OtherItem:
    """An output item type we do not model (web_search_call, ...)."""

    type: str
    id: str | None
    raw: JsonObj = field(repr=False, compare=False)


OutputItem = MessageItem | FunctionCallItem | CustomToolCallItem | ReasoningItem | OtherItem


@dataclass(frozen=True)
class Usage:
    """A response's token usage."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    reasoning_output_tokens: int = 0
    total_tokens: int = 0


# ---- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResponseCreated:
    """``response.created``: the response has an id."""

    response_id: str | None


@dataclass(frozen=True)
class OutputItemAdded:
    """``response.output_item.added``: an output item started."""

    output_index: int | None
    item: OutputItem


@dataclass(frozen=True)
class OutputItemDone:
    """``response.output_item.done``: an output item is complete."""

    output_index: int | None
    item: OutputItem


@dataclass(frozen=True)
class OutputTextDelta:
    """``response.output_text.delta``: more text of a message."""

    item_id: str | None
    delta: str
    output_index: int | None = None
    content_index: int | None = None


@dataclass(frozen=True)
class ReasoningSummaryPartAdded:
    """``response.reasoning_summary_part.added``: a new reasoning-summary part started."""

    item_id: str | None
    summary_index: int


@dataclass(frozen=True)
class ReasoningSummaryTextDelta:
    """``response.reasoning_summary_text.delta``: more text of a reasoning-summary part."""

    item_id: str | None
    summary_index: int
    delta: str


@dataclass(frozen=True)
class ReasoningTextDelta:
    """``response.reasoning_text.delta``: more raw reasoning text."""

    item_id: str | None
    content_index: int
    delta: str


@dataclass(frozen=True)
class ResponseCompleted:
    """``response.completed``: the response ended well, with its usage when the provider sent it."""

    response_id: str | None
    usage: Usage | None


@dataclass(frozen=True)
class ResponseFailed:
    """``response.failed`` (or ``response.incomplete`` / ``error``): the response ended with an error."""

    response_id: str | None
    code: str | None
    message: str
    raw: JsonObj = field(repr=False, compare=False)


@dataclass(frozen=True)
class ResponseRestarted:
    """Emitted by the clients (never parsed): a retry follows output that was already yielded, so the
    consumer must drop its partial state for this request."""

    attempt: int


@dataclass(frozen=True)
class UnknownEvent:
    """An event type this client does not interpret (kept, and ignored by the runner)."""

    type: str
    data: JsonObj = field(repr=False)


ResponseEvent = (
    ResponseCreated
    | OutputItemAdded
    | OutputItemDone
    | OutputTextDelta
    | ReasoningSummaryPartAdded
    | ReasoningSummaryTextDelta
    | ReasoningTextDelta
    | ResponseCompleted
    | ResponseFailed
    | ResponseRestarted
    | UnknownEvent
)


# ---- parsing ------------------------------------------------------------------------------------


def _str(obj: Mapping[str, object], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _int(obj: Mapping[str, object], key: str) -> int | None:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _texts(parts: object, wanted: tuple[str, ...]) -> list[str]:
    if not isinstance(parts, list):
        return []
    return [
        p["text"]
        for p in parts
        if isinstance(p, dict) and p.get("type") in wanted and isinstance(p.get("text"), str)
    ]


def parse_item(raw: JsonObj) -> OutputItem:
    """Type one Responses output item (as found in `output_item.added/done`)."""
    kind = _str(raw, "type") or ""
    item_id = _str(raw, "id")
    if kind == "message":
        return MessageItem(
            id=item_id,
            role=_str(raw, "role") or "assistant",
            text="".join(_texts(raw.get("content"), ("output_text", "input_text"))),
            raw=raw,
            phase=_str(raw, "phase"),
        )
    if kind == "function_call":
        arguments = raw.get("arguments", "")
        return FunctionCallItem(
            id=item_id,
            call_id=_str(raw, "call_id") or item_id or "",
            name=_str(raw, "name") or "",
            arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
            raw=raw,
            namespace=_str(raw, "namespace"),
        )
    if kind == "custom_tool_call":
        return CustomToolCallItem(
            id=item_id,
            call_id=_str(raw, "call_id") or item_id or "",
            name=_str(raw, "name") or "",
            input=_str(raw, "input") or "",
            raw=raw,
        )
    if kind == "reasoning":
        return ReasoningItem(
            id=item_id,
            summary=tuple(_texts(raw.get("summary"), ("summary_text",))),
            content=tuple(_texts(raw.get("content"), ("reasoning_text", "text"))),
            encrypted_content=_str(raw, "encrypted_content"),
            raw=raw,
        )
    return OtherItem(type=kind, id=item_id, raw=raw)


def parse_usage(raw: object) -> Usage | None:
    """The usage object of a response as ``Usage``; None when it is not an object."""
    if not isinstance(raw, dict):
        return None
    in_details = raw.get("input_tokens_details")
    out_details = raw.get("output_tokens_details")
    input_tokens = _int(raw, "input_tokens") or 0
    output_tokens = _int(raw, "output_tokens") or 0
    return Usage(
        input_tokens=input_tokens,
        cached_input_tokens=(_int(in_details, "cached_tokens") or 0) if isinstance(in_details, dict) else 0,
        output_tokens=output_tokens,
        reasoning_output_tokens=(
            (_int(out_details, "reasoning_tokens") or 0) if isinstance(out_details, dict) else 0
        ),
        total_tokens=_int(raw, "total_tokens") or input_tokens + output_tokens,
    )


def _item_of(data: JsonObj, type_: str) -> OutputItem:
    item = data.get("item")
    if not isinstance(item, dict):
        raise EventParseError(f"{type_} without an `item` object")
    return parse_item(item)


def parse_event(sse: SseEvent) -> ResponseEvent:
    """Type one SSE event. The JSON `type` field wins over the SSE `event:` name."""
    try:
        data = json.loads(sse.data)
    except ValueError as exc:
        raise EventParseError(f"SSE data is not JSON: {sse.data[:200]!r}") from exc
    if not isinstance(data, dict):
        raise EventParseError(f"SSE data is not a JSON object: {sse.data[:200]!r}")
    return event_from_json(data, sse.event)


def event_from_json(data: JsonObj, event_name: str = "message") -> ResponseEvent:
    """Type one decoded Responses event; ``event_name`` (the SSE ``event:``) stands in for a missing type."""
    type_ = _str(data, "type") or event_name
    found = data.get("response")
    response: JsonObj = found if isinstance(found, dict) else {}
    if type_ == "response.created":
        return ResponseCreated(response_id=_str(response, "id"))
    if type_ == "response.output_item.added":
        return OutputItemAdded(output_index=_int(data, "output_index"), item=_item_of(data, type_))
    if type_ == "response.output_item.done":
        return OutputItemDone(output_index=_int(data, "output_index"), item=_item_of(data, type_))
    if type_ == "response.output_text.delta":
        return OutputTextDelta(
            item_id=_str(data, "item_id"),
            delta=_str(data, "delta") or "",
            output_index=_int(data, "output_index"),
            content_index=_int(data, "content_index"),
        )
    if type_ == "response.reasoning_summary_part.added":
        return ReasoningSummaryPartAdded(
            item_id=_str(data, "item_id"), summary_index=_int(data, "summary_index") or 0
        )
    if type_ == "response.reasoning_summary_text.delta":
        return ReasoningSummaryTextDelta(
            item_id=_str(data, "item_id"),
            summary_index=_int(data, "summary_index") or 0,
            delta=_str(data, "delta") or "",
        )
    if type_ == "response.reasoning_text.delta":
        return ReasoningTextDelta(
            item_id=_str(data, "item_id"),
            content_index=_int(data, "content_index") or 0,
            delta=_str(data, "delta") or "",
        )
    if type_ == "response.completed":
        return ResponseCompleted(response_id=_str(response, "id"), usage=parse_usage(response.get("usage")))
    if type_ in ("response.failed", "response.incomplete", "error"):
        # `error` events carry code/message at the top level; response.failed nests them.
        error = response.get("error") if type_ != "error" else data
        if type_ == "response.incomplete" and not isinstance(error, dict):
            details = response.get("incomplete_details")
            reason = _str(details, "reason") if isinstance(details, dict) else None
            error = {"code": "incomplete", "message": f"Incomplete response returned, reason: {reason}"}
        error = error if isinstance(error, dict) else {}
        return ResponseFailed(
            response_id=_str(response, "id"),
            code=_str(error, "code") or _str(error, "type"),
            message=_str(error, "message") or "",
            raw=data,
        )
    return UnknownEvent(type=type_, data=data)
