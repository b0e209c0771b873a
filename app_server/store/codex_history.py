"""Keep Codex's history projection, ``CODEX_HOME/thread_history_1.sqlite``, in step with pycodex's appends.

Codex serves thread/read, thread/turns/list and thread/items/list of a thread it has not loaded from this
projection, and catches it up from the rollout only when it loads (resumes) the thread: a turn pycodex
appended would stay invisible to an editor reading through Codex until then (checked against 0.169). So
pycodex projects what it appends, as Codex does, row for row (recorded from the binary):

* ``thread_turns``: one row per turn, keyed by the ordinal of its start line, with the byte offset where
  that line starts; the end line's ordinal and the byte offset where it ends; status, times, error and the
  ids of the first user and the final agent item;
* ``thread_items``: one row per completed item (ordinal of its item_completed line, its v2 JSON without the
  times, which have their own columns);
* ``thread_history_projection_state``: the byte offset and ordinal the projection has reached.

It projects a thread only while the projection is exactly where pycodex's append starts (a thread pycodex
created, or one Codex projected to the end): anything else is left for Codex to catch up itself. As with
``codex_state``, a missing database is made as Codex would (``codex_schema``); a failure is logged, never
raised.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Final

from pycodex.json_types import JsonObj

from . import records as r
from .codex_db import CodexDatabase
from .codex_schema import ensure_database

log = logging.getLogger(__name__)

DB_FILE: Final = "thread_history_1.sqlite"
_TABLES: Final = ("thread_turns", "thread_items", "thread_history_projection_state")


class CodexHistory:
    """Projects appended records into Codex's history database, when Codex has made it."""

    def __init__(self, codex_home: Path) -> None:
        self._db = CodexDatabase(codex_home / DB_FILE, what="history projection",
                                 available=lambda path: ensure_database(path.parent, path.name),
                                 accepts=_has_tables)  # fmt: skip

    def close(self) -> None:
        """Close the connection, if one was opened."""
        self._db.close()

    def appended(self, thread_id: str, type_: str, payload: JsonObj, line: tuple[int, int, int]) -> None:
        """Project one appended record; ``line`` is (ordinal, byte offset where it starts, where it ends)."""
        with self._db.lock:
            conn = self._db.connection()
            if conn is None:
                return
            try:
                with conn:  # one transaction per record, as Codex's projector commits
                    self._project(conn, thread_id, type_, payload, line)
            except sqlite3.Error as exc:
                self._db.warn_not_updated(exc)

    def _project(
        self, conn: sqlite3.Connection, thread_id: str, type_: str, payload: JsonObj, line: tuple[int, int, int]
    ) -> None:
        ordinal, start, end = line
        state = conn.execute(
            "SELECT next_rollout_byte_offset FROM thread_history_projection_state WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        in_step = (state is None and start == 0 and type_ == r.SESSION_META) or (state is not None and state[0] == start)
        if not in_step:
            return
        if type_ == r.TURN_STARTED:
            conn.execute(
                "INSERT OR REPLACE INTO thread_turns (thread_id, turn_id, rollout_ordinal, status, started_at, "
                "rollout_byte_offset, root_turn_id) VALUES (?, ?, ?, 'inProgress', ?, ?, ?)",
                (thread_id, payload.get("turnId"), ordinal, payload.get("startedAt"), start,
                 payload.get("rootTurnId") or payload.get("turnId")),
            )  # fmt: skip
        elif type_ == r.ITEM_COMPLETED:
            self._item(conn, thread_id, payload, ordinal)
        elif type_ == r.TURNS_REVERTED:  # the reverted turns leave Codex's history as they left pycodex's
            first = conn.execute(
                "SELECT rollout_ordinal FROM thread_turns WHERE thread_id = ? AND turn_id = ?",
                (thread_id, payload.get("beforeTurnId")),
            ).fetchone()
            if first is not None:
                conn.execute("DELETE FROM thread_items WHERE thread_id = ? AND rollout_ordinal >= ?", (thread_id, first[0]))
                conn.execute("DELETE FROM thread_turns WHERE thread_id = ? AND rollout_ordinal >= ?", (thread_id, first[0]))
        elif type_ == r.TURN_ENDED:
            error = payload.get("error")
            conn.execute(
                "UPDATE thread_turns SET status = ?, error_json = ?, completed_at = ?, duration_ms = ?, "
                "rollout_end_ordinal = ?, rollout_end_byte_offset = ? WHERE thread_id = ? AND turn_id = ?",
                (payload.get("status"), None if error is None else json.dumps(error), payload.get("completedAt"),
                 payload.get("durationMs"), ordinal, end, thread_id, payload.get("turnId")),
            )  # fmt: skip
        conn.execute("DELETE FROM thread_history_projection_state WHERE thread_id = ?", (thread_id,))
        conn.execute(
            "INSERT INTO thread_history_projection_state (thread_id, next_rollout_byte_offset, next_rollout_ordinal) "
            "VALUES (?, ?, ?)",
            (thread_id, end, ordinal + 1),
        )

    def _item(self, conn: sqlite3.Connection, thread_id: str, payload: JsonObj, ordinal: int) -> None:
        item = payload.get("item")
        turn_id = payload.get("turnId")
        if not isinstance(item, dict):
            return
        bare = {k: v for k, v in item.items() if k not in ("startedAtMs", "completedAtMs")}
        started, completed = item.get("startedAtMs"), item.get("completedAtMs")
        values = (json.dumps(bare, separators=(",", ":")), ordinal, started, completed)
        updated = conn.execute(
            "UPDATE thread_items SET item_json = ?, updated_at_ordinal = ?, started_at_ms = COALESCE(?, started_at_ms), "
            "completed_at_ms = ? WHERE thread_id = ? AND turn_id = ? AND item_id = ?",
            (*values, thread_id, turn_id, item.get("id")),
        ).rowcount
        if not updated:  # a re-completed item (same id) keeps its place, as in thread/read
            conn.execute(
                "INSERT INTO thread_items (thread_id, turn_id, item_id, rollout_ordinal, created_at_ms, item_json, "
                "item_type, updated_at_ordinal, started_at_ms, completed_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (thread_id, turn_id, item.get("id"), ordinal, started if isinstance(started, int) else 0, values[0],
                 item.get("type"), ordinal, started, completed),
            )  # fmt: skip
        column = {"userMessage": "first_user_item_id", "agentMessage": "final_agent_item_id"}.get(str(item.get("type")))
        if column == "first_user_item_id":
            conn.execute(
                "UPDATE thread_turns SET first_user_item_id = ? WHERE thread_id = ? AND turn_id = ? "
                "AND first_user_item_id IS NULL",
                (item.get("id"), thread_id, turn_id),
            )
        elif column == "final_agent_item_id":
            conn.execute(
                "UPDATE thread_turns SET final_agent_item_id = ? WHERE thread_id = ? AND turn_id = ?",
                (item.get("id"), thread_id, turn_id),
            )


def _has_tables(conn: sqlite3.Connection) -> bool:
    return set(_TABLES) <= {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
