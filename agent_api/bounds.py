"""Size bounds applied to every event and completion before a caller sees it (agent_wrapper.md §4)."""

from __future__ import annotations

import dataclasses
import json

from agent_api.values import Completion, Event, EventKind
from pycodex.json_types import JsonValue

__all__ = ["bound_completion", "bound_event", "truncate_utf8"]

MAX_CHANNEL_BYTES = 128
MAX_MESSAGE_BYTES = 4096
MAX_TEXT_BYTES = 65536
MAX_DATA_BYTES = 65536
TRUNCATED_SUFFIX = "…(truncated)"
OVERSIZE_DATA = {"dropped": {"reason": "oversize"}}


def _cut(raw: bytes, limit: int) -> str:
    """The longest prefix of ``raw`` of at most ``limit`` bytes that ends on a UTF-8 boundary."""
    return raw[:limit].decode("utf-8", "ignore")


def truncate_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes on a character boundary, marked as truncated if cut."""
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    return _cut(raw, limit - len(TRUNCATED_SUFFIX.encode())) + TRUNCATED_SUFFIX


def _bound_data(data: JsonValue) -> JsonValue:
    if data is None:
        return None
    try:
        size = len(json.dumps(data, ensure_ascii=False).encode())
    except (TypeError, ValueError):
        return OVERSIZE_DATA
    return OVERSIZE_DATA if size > MAX_DATA_BYTES else data


def _split_text(text: str) -> list[str]:
    raw = text.encode("utf-8")
    parts: list[str] = []
    while raw:
        piece = _cut(raw, MAX_TEXT_BYTES)
        if not piece:  # cannot happen for valid UTF-8; guards against an infinite loop
            break
        parts.append(piece)
        raw = raw[len(piece.encode()) :]
    return parts


def bound_event(event: Event) -> list[Event]:
    """One event in, one or more out (long TextOutput is split, order kept)."""
    channel = event.channel
    if channel is not None and len(channel.encode()) > MAX_CHANNEL_BYTES:
        channel = None
    message = truncate_utf8(event.message, MAX_MESSAGE_BYTES) if event.message is not None else None
    bounded = dataclasses.replace(event, channel=channel, message=message, data=_bound_data(event.data))
    if event.kind is EventKind.TEXT_OUTPUT and event.text and len(event.text.encode()) > MAX_TEXT_BYTES:
        return [dataclasses.replace(bounded, text=part) for part in _split_text(event.text)]
    return [bounded]


def bound_completion(completion: Completion) -> Completion:
    """The completion with its final text and data held to the same bounds as events."""
    final_text = completion.final_text
    if final_text is not None:
        final_text = truncate_utf8(final_text, MAX_TEXT_BYTES)
    return dataclasses.replace(completion, final_text=final_text, data=_bound_data(completion.data))
