"""Rollout files line by line: `{timestamp, ordinal, type, payload}` JSONL in Codex's format, read into the
store's logical records (``records``) through ``codex_format``, with a reader that tolerates damage."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import zstandard

from pycodex.json_types import JsonObj

from . import codex_format as fmt
from . import compression
from . import records as r

log = logging.getLogger(__name__)

MAX_META_BYTES: Final = 1 << 20
_MAX_FORK_DEPTH: Final = 16  # a chain of Codex forks is followed this far back


def encode_line(ordinal: int, type_: str, payload: JsonObj, now_ms: int, *, thread_id: str) -> bytes:
    """One rollout line (ASCII JSON and the newline) for a logical record written at ``now_ms``."""
    if type_ == r.SESSION_META:
        line_type, line_payload = r.SESSION_META, fmt.encode_meta(payload, now_ms)
    else:
        line_type, line_payload = fmt.encode(type_, payload, thread_id=thread_id)
    line = {"timestamp": r.utc_timestamp(now_ms), "ordinal": ordinal, "type": line_type, "payload": line_payload}
    # ensure_ascii keeps every line pure ASCII, so a torn write can never split a multi-byte character
    return (json.dumps(line, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")


def parse_line(raw: bytes, number: int = 0) -> r.Record | None:
    """One intact line as it is on disk (Codex's type and payload), or None when it is damaged. A line without
    an ordinal (older writers) gets its position in the file."""
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    type_, payload, ordinal = obj.get("type"), obj.get("payload"), obj.get("ordinal", number)
    if not isinstance(type_, str) or not isinstance(payload, dict) or not isinstance(ordinal, int):
        return None
    timestamp = obj.get("timestamp")
    return r.Record(timestamp if isinstance(timestamp, str) else "", ordinal, type_, payload)


def _logical(line: r.Record) -> r.Record | None:
    decoded = fmt.decode(line.type, line.payload)
    if decoded is None:
        return None
    return r.Record(line.timestamp, line.ordinal, decoded[0], decoded[1])


def read_records(path: Path) -> list[r.Record]:
    """All intact logical records of a rollout, in file order.

    An unterminated last line is a write cut off by a crash (or one still in progress in another process) and
    is dropped silently. A damaged line in the middle is skipped with a warning: the rest is still the truth.
    """
    return list(iter_records(compression.read_bytes(path), path))


def iter_lines(data: bytes, origin: Path | str = "<bytes>") -> Iterator[r.Record]:
    """The intact lines in rollout bytes ``data`` as they are on disk; damaged lines and a torn last line are
    skipped."""
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the data ends with a newline, else the torn last line
    if tail:
        log.info("ignoring unterminated last line (%d bytes) in %s", len(tail), origin)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        line = parse_line(raw, number - 1)
        if line is None:
            log.warning("skipping damaged rollout line %d in %s", number, origin)
            continue
        yield line


def iter_records(data: bytes, origin: Path | str = "<bytes>") -> Iterator[r.Record]:
    """The intact logical records in rollout bytes ``data`` (lines the store keeps nothing of are left out)."""
    for line in iter_lines(data, origin):
        record = _logical(line)
        if record is not None:
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
        json.loads(first.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return 1, f"not valid UTF-8 (byte {exc.start})"
    except ValueError as exc:
        return 1, f"not valid JSON ({exc})"
    line = parse_line(first)
    if line is None:
        return 1, "not a rollout record (needs `type`, `ordinal` and an object `payload`)"
    if line.type != r.SESSION_META:
        return 1, f"a `{line.type}` record where the session_meta record belongs"
    if not isinstance(line.payload.get("id"), str):
        return 1, "the session_meta record has no thread id"
    return None


def read_session_meta(path: Path, max_bytes: int = MAX_META_BYTES) -> JsonObj | None:
    """The session_meta (store shape) from the first line, without reading the whole file (a compressed one
    is read whole)."""
    if compression.is_compressed(path):
        return read_session_meta_bytes(compression.read_bytes(path))
    with path.open("rb") as f:
        first = f.readline(max_bytes)
    return read_session_meta_bytes(first)


def read_session_meta_bytes(data: bytes) -> JsonObj | None:
    """The session_meta (store shape) of the first line of `data`, if that line is intact."""
    first, newline, _rest = data.partition(b"\n")
    if not newline:
        return None
    line = parse_line(first)
    if line is None or line.type != r.SESSION_META:
        return None
    return fmt.decode_meta(line.payload)


def with_history_base(
    records: list[r.Record], find: Callable[[str], Path | None], depth: int = 0
) -> list[r.Record]:
    """A Codex fork's rollout starts where its parent's left off (``history_base``): the parent's records
    before ``end_ordinal_exclusive`` (found with ``find``, followed up a chain of forks) go in front of its own,
    as if they had been copied. A parent that is gone or unreadable leaves the fork with its own records."""
    base = records[0].payload.get("historyBase") if records else None
    if not isinstance(base, dict) or depth >= _MAX_FORK_DEPTH:
        return records
    parent_id, end = base.get("thread_id"), base.get("end_ordinal_exclusive")
    if not isinstance(parent_id, str) or not isinstance(end, int):
        return records
    try:
        parent_path = find(parent_id)
        data = compression.read_bytes(parent_path) if parent_path is not None else b""
        if parent_path is None or head_problem(data) is not None:
            raise OSError(f"no readable rollout of thread {parent_id}")
        parent = with_history_base(list(iter_records(data, parent_path)), find, depth + 1)
    except (OSError, ValueError, zstandard.ZstdError) as exc:
        log.warning("fork %s: its parent's history cannot be read: %s", records[0].payload.get("id"), exc)
        return records
    inherited = [rec for rec in parent[1:] if rec.ordinal < end]
    return [records[0], *inherited, *records[1:]]
