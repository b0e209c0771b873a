"""The store's logical records: their types, payload shapes and the `Record` they are read into.

The store writes and reads these logical records; on disk each is a line in Codex's rollout format
(`codex_format` translates, `rollout_file` reads and encodes lines). Payloads are plain JSON-able dicts: thread
items, turns and token usage in v2 wire shape (camelCase), response items in Responses API shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from app_server.truncation import truncate_middle_with_marker
from pycodex.json_types import JsonObj

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
