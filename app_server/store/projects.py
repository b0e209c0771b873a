"""Projects, where Codex 0.169 keeps them: its state database ``CODEX_HOME/state_5.sqlite`` (tables
``projects``, ``project_roots``, ``project_idempotency_keys`` and the ``threads.project_id`` column).

One home for both programs: a project pycodex creates is Codex's, and the other way round, because both read
and write the same rows with Codex's semantics (positions renumbered 0.. on a move, idempotency keys kept
after a delete, recency from the newest non-archived member thread). Unlike the thread index this is primary
data, so failures are raised, not logged. pycodex never creates the database (see ``codex_state``): without
it (or with a schema lacking the project tables) every call raises :class:`ProjectsUnavailable`, which the
handlers answer as Codex does when its thread store has no sqlite state.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, Literal

from pycodex.json_types import JsonObj

from .codex_state import DB_FILE
from .ids import new_uuid7

__all__ = ["ProjectError", "ProjectStore", "ProjectsUnavailable"]

SortKey = Literal["position", "recencyAt"]
Direction = Literal["asc", "desc"]

_BUSY_TIMEOUT_S: Final = 5.0  # Codex holds its write transactions for milliseconds
_TABLES: Final = frozenset({"projects", "project_roots", "project_idempotency_keys"})
_COLUMNS: Final = "id, name, metadata, position, created_at_ms, updated_at_ms"
#: Codex's projection: each project with the newest recency of its non-archived member threads. Codex
#: has a thread's row only from its first user message on; pycodex writes it at thread/start, so a row
#: without a preview yet (no message) is left out, as Codex would not have it.
_SELECT: Final = (f"SELECT {_COLUMNS}, (SELECT MAX(recency_at_ms) FROM threads WHERE project_id = projects.id "
                  "AND archived = 0 AND preview != '') AS recency_at_ms FROM projects")  # fmt: skip
_BAD_CURSOR: Final = "invalid project cursor: malformed or mismatched sort anchor"


class ProjectsUnavailable(RuntimeError):
    """Codex's state database is missing, or has no project tables."""


class ProjectError(ValueError):
    """A request the store refuses (unknown project or thread, bad cursor, ...); the text is Codex's."""


class ProjectStore:
    """Reads and writes projects in Codex's state database; every method is blocking (run it off the loop)."""

    def __init__(self, codex_home: Path) -> None:
        self.path = codex_home / DB_FILE

    @contextmanager
    def _tx(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        if not self.path.exists():
            raise ProjectsUnavailable(str(self.path))
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            columns = {r[1] for r in conn.execute("PRAGMA table_info(threads)")}
            if not _TABLES <= tables or "project_id" not in columns:
                raise ProjectsUnavailable(str(self.path))
            conn.execute("PRAGMA foreign_keys = ON")  # as sqlx opens it: project_roots cascade on delete
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    # -- reads -----------------------------------------------------------------------------------------------
    def page(self, cursor: str | None, limit: int, sort_key: SortKey,
             direction: Direction) -> tuple[list[JsonObj], str | None]:
        """One page of projects in ``sort_key`` order and the cursor of the next page (None: the last)."""
        column = "position" if sort_key == "position" else "recency_at_ms"
        op, order = (">", "ASC") if direction == "asc" else ("<", "DESC")
        where, binds = "", []
        if cursor is not None:
            value, anchor_id = _parse_cursor(cursor, sort_key, direction)
            if value is not None:
                where = f" WHERE ({column} {op} ? OR ({column} = ? AND id {op} ?)"
                where += " OR recency_at_ms IS NULL)" if sort_key == "recencyAt" else ")"
                binds = [value, value, anchor_id]
            else:  # past the last dated project: only the undated ones after the anchor's id are left
                where, binds = f" WHERE recency_at_ms IS NULL AND id {op} ?", [anchor_id]
        keys = "position" if sort_key == "position" else "recency_at_ms IS NULL ASC, recency_at_ms"
        sql = f"SELECT * FROM ({_SELECT}){where} ORDER BY {keys} {order}, id {order} LIMIT ?"
        with self._tx() as conn:
            rows = conn.execute(sql, (*binds, limit + 1)).fetchall()
            projects = [_project(conn, row) for row in rows[:limit]]
        more = len(rows) > limit
        return projects, (_cursor(rows[limit - 1], sort_key, direction) if more else None)

    def read(self, project_id: str) -> JsonObj | None:
        """The project, or None when there is none with that id."""
        with self._tx() as conn:
            return _read(conn, project_id)

    # -- writes ----------------------------------------------------------------------------------------------
    def create(self, name: str, roots: list[str], metadata: dict[str, str], thread_ids: list[str],
               idempotency_key: str) -> tuple[JsonObj, bool]:
        """Create a project (last in position order) holding ``thread_ids``; with a known idempotency key,
        answer the project it made instead. Returns (project, whether it was created now)."""
        with self._tx(write=True) as conn:
            known = conn.execute("SELECT project_id FROM project_idempotency_keys WHERE key = ?",
                                 (idempotency_key,)).fetchone()  # fmt: skip
            if known is not None:
                existing = _read(conn, known[0])
                if existing is None:
                    raise ProjectError(f"idempotency key refers to deleted project: {idempotency_key}")
                return existing, False
            for thread_id in thread_ids:
                if conn.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone() is None:
                    raise ProjectError(f"thread not found: {thread_id}")
            now = int(time.time() * 1000)
            project_id = new_uuid7(now)
            last = conn.execute("SELECT MAX(position) FROM projects").fetchone()[0]
            conn.execute(f"INSERT INTO projects ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                         (project_id, name, _dump(metadata), 0 if last is None else int(last) + 1, now, now))
            _replace_roots(conn, project_id, roots)
            conn.executemany("UPDATE threads SET project_id = ? WHERE id = ?",
                             [(project_id, thread_id) for thread_id in thread_ids])
            conn.execute("INSERT INTO project_idempotency_keys (key, project_id, created_at_ms) VALUES (?, ?, ?)",
                         (idempotency_key, project_id, now))
            created = _read(conn, project_id)
            assert created is not None
            return created, True

    def update(self, project_id: str, name: str | None, roots: list[str] | None,
               metadata: dict[str, str] | None) -> tuple[JsonObj, bool] | None:
        """Replace the given fields; (project, whether anything changed), or None for an unknown project."""
        with self._tx(write=True) as conn:
            current = _read(conn, project_id)
            if current is None:
                return None
            now_roots = [root["path"] for root in current["roots"]]
            next_name = current["name"] if name is None else name
            next_roots = now_roots if roots is None else roots
            next_metadata = current["metadata"] if metadata is None else metadata
            if (next_name, next_roots, next_metadata) == (current["name"], now_roots, current["metadata"]):
                return current, False
            conn.execute("UPDATE projects SET name = ?, metadata = ?, updated_at_ms = ? WHERE id = ?",
                         (next_name, _dump(next_metadata), int(time.time() * 1000), project_id))
            if next_roots != now_roots:
                _replace_roots(conn, project_id, next_roots)
            updated = _read(conn, project_id)
            assert updated is not None
            return updated, True

    def move(self, project_id: str, before_project_id: str | None) -> bool | None:
        """Put the project before another (or last) and renumber positions 0..; whether the order changed,
        None for an unknown project."""
        with self._tx(write=True) as conn:
            order = [r[0] for r in conn.execute("SELECT id FROM projects ORDER BY position ASC, id ASC")]
            if project_id not in order:
                return None
            if before_project_id == project_id:
                raise ProjectError(f"project {project_id} cannot be moved before itself")
            moved = [other for other in order if other != project_id]
            if before_project_id is None:
                moved.append(project_id)
            elif before_project_id in moved:
                moved.insert(moved.index(before_project_id), project_id)
            else:
                raise ProjectError(f"before project not found: {before_project_id}")
            if moved == order:
                return False
            conn.executemany("UPDATE projects SET position = ? WHERE id = ?", list(enumerate(moved)))
            conn.execute("UPDATE projects SET updated_at_ms = ? WHERE id = ?",
                         (int(time.time() * 1000), project_id))
            return True

    def delete(self, project_id: str) -> list[str] | None:
        """Delete the project (its threads stay, in no project); returns its non-archived threads, or None
        for an unknown project."""
        with self._tx(write=True) as conn:
            if conn.execute("SELECT 1 FROM projects WHERE id = ?", (project_id,)).fetchone() is None:
                return None
            active = [r[0] for r in conn.execute(
                "SELECT id FROM threads WHERE project_id = ? AND archived = 0 ORDER BY id ASC", (project_id,))]
            conn.execute("UPDATE threads SET project_id = NULL WHERE project_id = ?", (project_id,))
            conn.execute("DELETE FROM project_roots WHERE project_id = ?", (project_id,))
            conn.execute("DELETE FROM projects WHERE id = ?", (project_id,))
            return active

    # -- thread membership -----------------------------------------------------------------------------------
    def thread_project(self, thread_id: str) -> str | None:
        """The project the thread is in (None: none, or no row for it)."""
        with self._tx() as conn:
            row = conn.execute("SELECT project_id FROM threads WHERE id = ?", (thread_id,)).fetchone()
            return None if row is None or row[0] is None else str(row[0])

    def projects_of(self, thread_ids: list[str]) -> dict[str, str]:
        """thread id -> its project, for those of ``thread_ids`` that are in one."""
        with self._tx() as conn:
            found: dict[str, str] = {}
            for start in range(0, len(thread_ids), 500):  # under SQLite's bound-variable limit
                chunk = thread_ids[start:start + 500]
                marks = ", ".join("?" for _ in chunk)
                found.update(conn.execute(f"SELECT id, project_id FROM threads WHERE project_id IS NOT NULL "
                                          f"AND id IN ({marks})", chunk).fetchall())
            return found

    def assigned(self, project_id: str | None) -> list[str]:
        """The threads in ``project_id``, or (None) every thread in any project."""
        with self._tx() as conn:
            if project_id is None:
                rows = conn.execute("SELECT id FROM threads WHERE project_id IS NOT NULL")
            else:
                rows = conn.execute("SELECT id FROM threads WHERE project_id = ?", (project_id,))
            return [str(r[0]) for r in rows.fetchall()]

    def set_thread_project(self, thread_id: str, project_id: str | None) -> str | None:
        """Put the thread into ``project_id`` (None: into no project); returns the project it was in.

        Raises ProjectError for an unknown project, and for a thread Codex's index has no row for.
        """
        with self._tx(write=True) as conn:
            if project_id is not None and _read(conn, project_id) is None:
                raise ProjectError(f"project not found: {project_id}")
            row = conn.execute("SELECT project_id FROM threads WHERE id = ?", (thread_id,)).fetchone()
            if row is None:
                raise ProjectError(f"thread not found: {thread_id}")
            if row[0] != project_id:
                conn.execute("UPDATE threads SET project_id = ? WHERE id = ?", (project_id, thread_id))
            return None if row[0] is None else str(row[0])


def _read(conn: sqlite3.Connection, project_id: str) -> JsonObj | None:
    row = conn.execute(f"{_SELECT} WHERE id = ?", (project_id,)).fetchone()
    return None if row is None else _project(conn, row)


def _project(conn: sqlite3.Connection, row: tuple[object, ...]) -> JsonObj:
    """A projects row (with its computed recency) in wire shape: Codex's ``Project``, times in seconds."""
    project_id, name, metadata, position, created_ms, updated_ms, recency_ms = row
    roots = conn.execute("SELECT path FROM project_roots WHERE project_id = ? ORDER BY position ASC",
                         (project_id,)).fetchall()  # fmt: skip
    return {
        "id": project_id, "name": name, "roots": [{"path": r[0]} for r in roots],
        "metadata": json.loads(str(metadata)), "position": position,
        "createdAt": int(str(created_ms)) // 1000, "updatedAt": int(str(updated_ms)) // 1000,
        "recencyAt": None if recency_ms is None else int(str(recency_ms)) // 1000,
    }


def _replace_roots(conn: sqlite3.Connection, project_id: str, roots: list[str]) -> None:
    conn.execute("DELETE FROM project_roots WHERE project_id = ?", (project_id,))
    conn.executemany("INSERT INTO project_roots (project_id, position, path) VALUES (?, ?, ?)",
                     [(project_id, i, path) for i, path in enumerate(roots)])  # fmt: skip


def _dump(metadata: dict[str, str]) -> str:
    # serde_json of a BTreeMap: keys sorted, no spaces
    return json.dumps(dict(sorted(metadata.items())), separators=(",", ":"), ensure_ascii=False)


def _cursor(row: tuple[object, ...], sort_key: SortKey, direction: Direction) -> str:
    """Codex's cursor after ``row``: ``position|id`` for the default order, else ``v1|key|dir|value|id``."""
    project_id, position, recency_ms = row[0], row[3], row[6]
    if sort_key == "position" and direction == "asc":
        return f"{position}|{project_id}"
    value = position if sort_key == "position" else ("null" if recency_ms is None else recency_ms)
    return f"v1|{sort_key}|{direction}|{value}|{project_id}"


def _parse_cursor(cursor: str, sort_key: SortKey, direction: Direction) -> tuple[int | None, str]:
    parts = cursor.split("|")
    if len(cursor) > 128:
        raise ProjectError(_BAD_CURSOR)
    if len(parts) == 2 and sort_key == "position" and direction == "asc":
        raw, anchor = parts
    elif len(parts) == 5 and parts[:3] == ["v1", sort_key, direction]:
        raw, anchor = parts[3], parts[4]
    else:
        raise ProjectError(_BAD_CURSOR)
    value: int | None = None
    if not (raw == "null" and sort_key == "recencyAt"):
        try:
            value = int(raw)
        except ValueError:
            raise ProjectError(_BAD_CURSOR) from None
        if str(value) != raw or (sort_key == "position" and value < 0):
            raise ProjectError(_BAD_CURSOR)
    try:
        canonical = str(uuid.UUID(anchor))
    except ValueError:
        raise ProjectError(_BAD_CURSOR) from None
    if canonical != anchor:
        raise ProjectError(_BAD_CURSOR)
    return value, anchor

