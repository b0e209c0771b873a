"""Rollout line format: `{timestamp, ordinal, type, payload}` JSONL records, and a reader that tolerates damage.

Line types are our own, modelled on the reference rollouts (which use session_meta/event_msg/response_item/...).
Payloads are plain JSON-able dicts; thread items, turns and token usage are stored in v2 wire shape (camelCase),
response items in Responses API shape, so nothing needs converting on the way back out.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from app_server.truncation import truncate_middle_with_marker
from pycodex.json_types import JsonObj

log = logging.getLogger(__name__)

SESSION_META: Final = "session_meta"  # first line: the thread metadata dict
TURN_STARTED: Final = "turn_started"  # {turnId, rootTurnId, startedAt}
TURN_ENDED: Final = "turn_ended"  # {turnId, status, error, completedAt, durationMs}
ITEM_COMPLETED: Final = "item_completed"  # {turnId, item: ThreadItem}
RESPONSE_ITEM: Final = "response_item"  # one Responses input item of the model history
COMPACTED: Final = "compacted"  # {replacementHistory: [...]}: the model history is replaced
TOKEN_USAGE: Final = "token_usage"  # {turnId, tokenUsage: {total, last, modelContextWindow}}
THREAD_SETTINGS: Final = "thread_settings"  # {settings: {...}}: merged over earlier settings
THREAD_NAME: Final = "thread_name"  # {name}
TURNS_REVERTED: Final = "turns_reverted"  # {beforeTurnId}: that turn and every later one are dropped

# Appends of these types are fsync'd when the store runs with fsync on: the caller emits a client-visible
# completion right after them, so they must survive a power loss, not just a process kill.
DURABLE_TYPES: Final = frozenset({SESSION_META, ITEM_COMPLETED, TURN_ENDED, THREAD_NAME, COMPACTED, TURNS_REVERTED})

TURN_END_STATUSES: Final = frozenset({"completed", "interrupted", "failed"})

# Codex persists a command item's aggregatedOutput cut to 64 KiB (marker included), and thread/read serves
# that persisted form even while the thread is loaded; item/completed still carries the whole (1 MiB) text.
PERSISTED_COMMAND_OUTPUT_MAX_BYTES: Final = 64 * 1024
PERSISTED_COMMAND_OUTPUT_MARKER: Final = "\n... command output truncated for persistence ...\n"


def persisted_item(item: JsonObj) -> JsonObj:
    """The form of a completed ThreadItem that is stored (``item`` itself when nothing needs cutting)."""
    output = item.get("aggregatedOutput")
    if item.get("type") != "commandExecution" or not isinstance(output, str):
        return item
    if len(output) <= PERSISTED_COMMAND_OUTPUT_MAX_BYTES // 4 or len(output.encode("utf-8", "surrogatepass")) <= (
        PERSISTED_COMMAND_OUTPUT_MAX_BYTES
    ):
        return item
    cut = truncate_middle_with_marker(output, PERSISTED_COMMAND_OUTPUT_MAX_BYTES, PERSISTED_COMMAND_OUTPUT_MARKER)
    return dict(item, aggregatedOutput=cut)


@dataclass(frozen=True, slots=True)
class Record:
    """One intact rollout line: when it was written, its ordinal, its line type and its payload."""

    timestamp: str
    ordinal: int
    type: str
    payload: JsonObj


def utc_timestamp(ms: int) -> str:
    """ISO-8601 UTC with milliseconds, as the reference writes (`2026-11-30T05:54:11.231Z`)."""
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def parse_timestamp_ms(value: str) -> int | None:
    """Milliseconds since the epoch of a record's ISO-8601 timestamp; None when it does not parse."""
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int(dt.timestamp() * 1000)


def encode_record(ordinal: int, type_: str, payload: JsonObj, now_ms: int) -> bytes:
    """One rollout line (ASCII JSON and the newline) for a record written at ``now_ms``."""
    line = {"timestamp": utc_timestamp(now_ms), "ordinal": ordinal, "type": type_, "payload": payload}
    # ensure_ascii keeps every line pure ASCII, so a torn write can never split a multi-byte character
    return (json.dumps(line, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")


def _decode(raw: bytes) -> Record | None:
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    type_, payload, ordinal = obj.get("type"), obj.get("payload"), obj.get("ordinal")
    if not isinstance(type_, str) or not isinstance(payload, dict) or not isinstance(ordinal, int):
        return None
    timestamp = obj.get("timestamp")
    return Record(timestamp if isinstance(timestamp, str) else "", ordinal, type_, payload)


def read_records(path: Path) -> list[Record]:
    """All intact records of a rollout, in file order.

    An unterminated last line is a write cut off by a crash (or one still in progress in another process) and
    is dropped silently. A damaged line in the middle is skipped with a warning: the rest is still the truth.
    """
    with path.open("rb") as f:
        data = f.read()
    return list(iter_records(data, path))


def iter_records(data: bytes, origin: Path | str = "<bytes>") -> Iterator[Record]:
    """The intact records in rollout bytes ``data``; damaged lines and a torn last line are skipped."""
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the data ends with a newline, else the torn last line
    if tail:
        log.info("ignoring unterminated last line (%d bytes) in %s", len(tail), origin)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        record = _decode(raw)
        if record is None:
            log.warning("skipping damaged rollout line %d in %s", number, origin)
            continue
        yield record


def head_problem(data: bytes) -> tuple[int | None, str] | None:
    """Why a rollout's bytes cannot start a thread, as (line number or None, cause); None when line 1 is an
    intact session_meta record. Damage further down is tolerated (see `iter_records`), not reported here."""
    if not data.strip():
        return None, "the file is empty"
    first, newline, _rest = data.partition(b"\n")
    if not newline:
        return 1, "the session_meta record is incomplete (no line end): the write was cut off"
    try:
        obj = json.loads(first.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return 1, f"not valid UTF-8 (byte {exc.start})"
    except ValueError as exc:
        return 1, f"not valid JSON ({exc})"
    record = _decode(first)
    if record is None:
        return 1, "not a rollout record (needs `type`, `ordinal` and an object `payload`)"
    if record.type != SESSION_META:
        return 1, f"a `{record.type}` record where the session_meta record belongs"
    if not isinstance(obj["payload"].get("id"), str):
        return 1, "the session_meta record has no thread id"
    return None


MAX_META_BYTES: Final = 1 << 20


def read_session_meta(path: Path, max_bytes: int = MAX_META_BYTES) -> JsonObj | None:
    """The session_meta payload from the first line, without reading the whole file."""
    with path.open("rb") as f:
        first = f.readline(max_bytes)
    return read_session_meta_bytes(first)


def read_session_meta_bytes(data: bytes) -> JsonObj | None:
    """The session_meta payload of the first line of `data`, if that line is intact."""
    first, newline, _rest = data.partition(b"\n")
    if not newline:
        return None
    record = _decode(first)
    if record is None or record.type != SESSION_META:
        return None
    return record.payload
