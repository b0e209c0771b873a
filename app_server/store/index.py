"""SQLite index of threads, for thread/list and fast metadata reads. Derived data: the rollouts are the truth.

One connection per index object (stdlib sqlite3, WAL, busy timeout), guarded by a lock so worker threads
(asyncio.to_thread) may share it. A missing, corrupt or older-schema database is replaced by an empty one and
`needs_rebuild` is set so the owner refills it from the rollouts.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from pycodex.json_types import JsonObj

from .errors import InvalidCursorError

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2  # 2: rollouts in Codex's format; an older index is rebuilt, which migrates them
DEFAULT_LIMIT = 25
MAX_LIMIT = 500
# Like the reference: with no sourceKinds filter only interactive sessions are listed (not `exec` ones).
INTERACTIVE_SOURCE_KINDS = ("cli", "vscode")
SORT_COLUMNS = {"created_at": "created_at_ms", "updated_at": "updated_at_ms", "recency_at": "updated_at_ms"}

#: What a value bound to (or read from) an SQL parameter may be.
SqlValue: TypeAlias = str | int | float | bytes | None

_COLUMNS = (
    "id", "rollout_path", "created_at_ms", "updated_at_ms", "cwd", "preview", "name", "model_provider", "model",
    "source", "source_kind", "archived", "archived_at_ms", "forked_from_id", "cli_version", "meta_json",
)  # fmt: skip

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    rollout_path TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    cwd TEXT NOT NULL DEFAULT '',
    preview TEXT NOT NULL DEFAULT '',
    name TEXT,
    model_provider TEXT NOT NULL DEFAULT '',
    model TEXT,
    source TEXT NOT NULL DEFAULT '',
    source_kind TEXT NOT NULL DEFAULT 'unknown',
    archived INTEGER NOT NULL DEFAULT 0,
    archived_at_ms INTEGER,
    forked_from_id TEXT,
    cli_version TEXT NOT NULL DEFAULT '',
    meta_json TEXT NOT NULL DEFAULT '{{}}'
);
CREATE INDEX IF NOT EXISTS threads_by_created ON threads (archived, created_at_ms, id);
CREATE INDEX IF NOT EXISTS threads_by_updated ON threads (archived, updated_at_ms, id);
PRAGMA user_version = {SCHEMA_VERSION};
"""


@dataclass(slots=True)
class IndexRow:
    """One thread's index row: what thread/list filters, sorts and shows without opening the rollout."""

    id: str
    rollout_path: str
    created_at_ms: int
    updated_at_ms: int
    cwd: str = ""
    preview: str = ""
    name: str | None = None
    model_provider: str = ""
    model: str | None = None
    source: str = ""
    source_kind: str = "unknown"
    archived: bool = False
    archived_at_ms: int | None = None
    forked_from_id: str | None = None
    cli_version: str = ""
    meta: JsonObj = field(default_factory=dict)

    def values(self) -> tuple[SqlValue, ...]:
        """The row's column values in ``_COLUMNS`` order, as SQLite stores them."""
        return (
            self.id, self.rollout_path, self.created_at_ms, self.updated_at_ms, self.cwd, self.preview, self.name,
            self.model_provider, self.model, self.source, self.source_kind, int(self.archived), self.archived_at_ms,
            self.forked_from_id, self.cli_version, json.dumps(self.meta, ensure_ascii=False),
        )  # fmt: skip

    @classmethod
    def from_sql(cls, row: Sequence[Any]) -> IndexRow:
        """The row read back from SQLite (an unreadable ``meta_json`` becomes ``{}``).

        ``row`` is what sqlite3 fetched (sqlite3 leaves rows untyped): its columns are in ``_COLUMNS`` order.
        """
        values = dict(zip(_COLUMNS, row, strict=True))
        meta_json = values.pop("meta_json")
        try:
            meta = json.loads(meta_json)
        except ValueError:
            meta = {}
        values["archived"] = bool(values["archived"])
        return cls(**values, meta=meta if isinstance(meta, dict) else {})


@dataclass(frozen=True, slots=True)
class ListQuery:
    """One thread/list page request: cursor, page size, sort and the filters."""

    cursor: str | None = None
    limit: int | None = None
    sort_key: str = "created_at"
    sort_direction: str = "desc"
    archived: bool = False
    cwds: tuple[str, ...] = ()
    search_term: str | None = None
    source_kinds: tuple[str, ...] = ()
    model_providers: tuple[str, ...] = ()
    excluded_ids: tuple[str, ...] = ()
    #: None: no restriction; a tuple (possibly empty, which matches nothing): only these ids.
    included_ids: tuple[str, ...] | None = None


def source_kind(source: object) -> str:
    """Map a stored session source (string or sub-agent object) to a ThreadSourceKind."""
    if isinstance(source, str):
        if source in ("cli", "vscode", "exec"):
            return source
        return "appServer" if source in ("appServer", "app_server", "mcp") else "unknown"
    if isinstance(source, dict):
        sub = source.get("subagent", source.get("subAgent"))
        if sub == "review":
            return "subAgentReview"
        if sub == "compact":
            return "subAgentCompact"
        if isinstance(sub, dict) and ("thread_spawn" in sub or "threadSpawn" in sub):
            return "subAgentThreadSpawn"
        return "subAgentOther" if sub is not None else "unknown"
    return "unknown"


class ThreadIndex:
    """The threads' SQLite index (one connection, shared by worker threads under a lock)."""

    def __init__(self, db_path: Path, *, busy_timeout_s: float = 5.0) -> None:
        self.db_path = db_path
        self._busy_timeout_s = busy_timeout_s
        self._lock = threading.Lock()
        self.needs_rebuild = not db_path.exists()
        try:
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc:
            log.warning("thread index %s is unusable (%s); recreating it from the rollouts", db_path, exc)
            self._discard_files()
            self._conn = self._connect()
            self.needs_rebuild = True

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.db_path, timeout=self._busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable enough for derived data
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                conn.execute("DROP TABLE IF EXISTS threads")
                self.needs_rebuild = True
            conn.executescript(_SCHEMA)
            check = conn.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {check}")
            conn.execute("SELECT count(*) FROM threads").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    def _discard_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.db_path}{suffix}").unlink(missing_ok=True)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    # -- writes -------------------------------------------------------------------------------------------

    def upsert(self, row: IndexRow) -> None:
        """Insert the row, or replace the one with its id."""
        marks = ",".join("?" * len(_COLUMNS))
        with self._lock:
            self._conn.execute(
                f"INSERT OR REPLACE INTO threads ({','.join(_COLUMNS)}) VALUES ({marks})", row.values()
            )

    def replace_all(self, rows: Iterable[IndexRow]) -> None:
        """Replace every row with ``rows`` in one transaction (a rebuild from the rollouts)."""
        marks = ",".join("?" * len(_COLUMNS))
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("DELETE FROM threads")
                self._conn.executemany(
                    f"INSERT OR REPLACE INTO threads ({','.join(_COLUMNS)}) VALUES ({marks})",
                    (row.values() for row in rows),
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        self.needs_rebuild = False

    def update(self, thread_id: str, **fields: SqlValue) -> None:
        """Set some columns of one row; raises ValueError for a name that is not a column."""
        unknown = set(fields) - set(_COLUMNS)
        if unknown:
            raise ValueError(f"unknown index columns: {sorted(unknown)}")
        assignments = ",".join(f"{name} = ?" for name in fields)
        values = [int(v) if isinstance(v, bool) else v for v in fields.values()]
        with self._lock:
            self._conn.execute(f"UPDATE threads SET {assignments} WHERE id = ?", [*values, thread_id])

    def update_meta(self, thread_id: str, key: str, value: object) -> None:
        """Set one key of a row's stored Thread fields (``meta_json``) in place."""
        with self._lock:
            self._conn.execute(
                "UPDATE threads SET meta_json = json_set(meta_json, ?, json(?)) WHERE id = ?",
                (f"$.{key}", json.dumps(value), thread_id),
            )

    def touch(self, thread_id: str, at_ms: int) -> None:
        """Move the row's ``updated_at_ms`` forward to ``at_ms`` (never back)."""
        with self._lock:
            self._conn.execute(
                "UPDATE threads SET updated_at_ms = max(updated_at_ms, ?) WHERE id = ?", (at_ms, thread_id)
            )

    def set_preview_if_empty(self, thread_id: str, preview: str) -> None:
        """Set the preview unless the row has one already (the first user message wins)."""
        with self._lock:
            self._conn.execute(
                "UPDATE threads SET preview = ? WHERE id = ? AND preview = ''", (preview, thread_id)
            )

    def delete(self, thread_id: str) -> None:
        """Remove the row of ``thread_id`` (absent is fine)."""
        with self._lock:
            self._conn.execute("DELETE FROM threads WHERE id = ?", (thread_id,))

    # -- reads --------------------------------------------------------------------------------------------

    def get(self, thread_id: str) -> IndexRow | None:
        """The row of ``thread_id``, or None when it is not indexed."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {','.join(_COLUMNS)} FROM threads WHERE id = ?", (thread_id,)
            ).fetchone()
        return IndexRow.from_sql(row) if row else None

    def paths(self) -> dict[str, str]:
        """Every indexed thread id -> its rollout path."""
        with self._lock:
            return dict(self._conn.execute("SELECT id, rollout_path FROM threads").fetchall())

    def without_meta(self, key: str) -> list[str]:
        """The ids of the rows whose stored Thread fields have no ``key``."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id FROM threads WHERE json_type(meta_json, ?) IS NULL", (f"$.{key}",)
            ).fetchall()
        return [str(row[0]) for row in rows]

    def names(self) -> dict[str, str]:
        """Every named thread id -> its name."""
        with self._lock:
            return dict(self._conn.execute("SELECT id, name FROM threads WHERE name IS NOT NULL").fetchall())

    def list(self, query: ListQuery) -> tuple[list[IndexRow], str | None, str | None]:
        """One page: its rows, the cursor after its last row, and the backwards cursor: its first row as the
        anchor for the opposite direction, so paging back yields the rows before this page (as Codex's does)."""
        column = SORT_COLUMNS.get(query.sort_key)
        if column is None:
            raise ValueError(
                f"unsupported sort key {query.sort_key!r}; expected one of {sorted(SORT_COLUMNS)}"
            )
        if query.sort_direction not in ("asc", "desc"):
            raise ValueError(f"invalid sort direction {query.sort_direction!r}; expected 'asc' or 'desc'")
        limit = DEFAULT_LIMIT if not query.limit else max(1, min(int(query.limit), MAX_LIMIT))
        where: list[str] = ["archived = ?"]
        args: list[SqlValue] = [int(query.archived)]
        _add_in(where, args, "cwd", query.cwds)
        _add_in(where, args, "model_provider", query.model_providers)
        _add_in(where, args, "source_kind", query.source_kinds or INTERACTIVE_SOURCE_KINDS)
        if query.excluded_ids:
            where.append(f"id NOT IN ({','.join('?' * len(query.excluded_ids))})")
            args.extend(query.excluded_ids)
        if query.included_ids is not None:
            where.append(f"id IN ({','.join('?' * len(query.included_ids))})" if query.included_ids else "0")
            args.extend(query.included_ids)
        if query.search_term:
            where.append(
                "(instr(lower(preview), lower(?)) > 0 OR instr(lower(coalesce(name, '')), lower(?)) > 0)"
            )
            args.extend([query.search_term, query.search_term])
        op, order = (">", "ASC") if query.sort_direction == "asc" else ("<", "DESC")
        if query.cursor is not None:
            value, last_id = _decode_cursor(query.cursor, column, query.sort_direction)
            where.append(f"({column} {op} ? OR ({column} = ? AND id {op} ?))")
            args.extend([value, value, last_id])
        sql = (
            f"SELECT {','.join(_COLUMNS)} FROM threads WHERE {' AND '.join(where)} "
            f"ORDER BY {column} {order}, id {order} LIMIT ?"
        )
        with self._lock:
            fetched = self._conn.execute(sql, [*args, limit + 1]).fetchall()
        rows = [IndexRow.from_sql(row) for row in fetched[:limit]]
        next_cursor = backwards_cursor = None
        if len(fetched) > limit:
            next_cursor = _encode_cursor(column, query.sort_direction, _sort_value(rows[-1], column), rows[-1].id)
        if rows:
            opposite = "asc" if query.sort_direction == "desc" else "desc"
            backwards_cursor = _encode_cursor(column, opposite, _sort_value(rows[0], column), rows[0].id)
        return rows, next_cursor, backwards_cursor


def _sort_value(row: IndexRow, column: str) -> int:
    return row.created_at_ms if column == "created_at_ms" else row.updated_at_ms


def _add_in(where: list[str], args: list[SqlValue], column: str, values: Sequence[str]) -> None:
    if values:
        where.append(f"{column} IN ({','.join('?' * len(values))})")
        args.extend(values)


def _encode_cursor(column: str, direction: str, value: int, last_id: str) -> str:
    raw = json.dumps({"k": column, "d": direction, "v": value, "id": last_id}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str, column: str, direction: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        obj = json.loads(raw)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidCursorError(f"invalid cursor: {cursor!r}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("v"), int) or not isinstance(obj.get("id"), str):
        raise InvalidCursorError(f"invalid cursor: {cursor!r}")
    if obj.get("k") != column or obj.get("d") != direction:
        raise InvalidCursorError("invalid cursor: it was made for a different sort key or direction")
    return obj["v"], obj["id"]
