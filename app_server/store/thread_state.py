"""Per-thread state that is not in the rollouts: read state and goals (SQLite, CODEX_HOME/thread_state.sqlite).

Unlike the thread index this is primary data (a user's "mark read" cannot be rebuilt from rollouts), so the
schema moves forward by numbered migrations rather than being dropped and rebuilt. A database that cannot
be opened is replaced by an in-memory one with a warning: read marks and goals then last for this process
only, but the server keeps serving. One connection guarded by a lock, shared with worker threads.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from pycodex.json_types import JsonObj

from .codex_state import CodexState
from .thread_attachments import AttachmentsMixin
from .thread_sections import SectionsMixin

log = logging.getLogger(__name__)

STATE_FILE = "thread_state.sqlite"
#: Codex's built-in section (the TUI asks for its threads at startup); same id, so clients agree.
PINNED_SECTION_ID = "01984de2-8f74-7c91-a3b2-5c5e937cf318"

#: Each entry moves the schema from version i to i + 1; never edit an applied one, append a new one.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE read_state (
        thread_id TEXT PRIMARY KEY,
        first_unread_kind TEXT,          -- NULL: read; 'threadStart' or 'turn'
        first_unread_turn TEXT,
        revision TEXT NOT NULL
    );
    CREATE TABLE goals (
        thread_id TEXT PRIMARY KEY,
        objective TEXT NOT NULL,
        status TEXT NOT NULL,
        token_budget INTEGER,
        tokens_used INTEGER NOT NULL DEFAULT 0,
        time_used_seconds INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    """,
    f"""
    CREATE TABLE sections (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        appearance_json TEXT,
        position INTEGER NOT NULL
    );
    CREATE TABLE section_members (
        thread_id TEXT PRIMARY KEY,
        section_id TEXT NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
        position REAL NOT NULL,
        entered_at INTEGER NOT NULL
    );
    CREATE INDEX section_members_by_section ON section_members (section_id, position);
    CREATE TABLE thread_metadata (
        thread_id TEXT PRIMARY KEY,
        git_json TEXT,
        daybreak_enabled INTEGER,
        memory_mode TEXT
    );
    INSERT INTO sections VALUES ('{PINNED_SECTION_ID}', 'Pinned', NULL, 0);
    """,
    """
    CREATE TABLE attachments (
        id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        attachment_type TEXT NOT NULL,
        identity_key TEXT NOT NULL,
        payload_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (thread_id, attachment_type, identity_key)
    );
    CREATE INDEX attachments_by_identity ON attachments (attachment_type, identity_key);
    """,
)


class ReadStateConflict(Exception):
    """The caller's revision is stale; ``current`` is the read state it should have seen."""

    def __init__(self, current: JsonObj) -> None:
        super().__init__("read state changed")
        self.current = current


@dataclass(slots=True)
class Goal:
    """A thread's goal (thread/goal/*): its objective, status, token budget and what it used so far."""

    thread_id: str
    objective: str
    status: str
    token_budget: int | None
    tokens_used: int
    time_used_seconds: int
    created_at: int
    updated_at: int

    def wire(self) -> JsonObj:
        """The v2 ThreadGoal dict."""
        return {"threadId": self.thread_id, "objective": self.objective, "status": self.status,
                "tokenBudget": self.token_budget, "tokensUsed": self.tokens_used,
                "timeUsedSeconds": self.time_used_seconds, "createdAt": self.created_at,
                "updatedAt": self.updated_at}


def _open(path: Path) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=5.0)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _migrate(conn)
        return conn
    except sqlite3.Error as exc:
        log.warning("thread state database %s is unusable (%s); read marks and goals are kept in memory", path, exc)
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA foreign_keys=ON")
        _migrate(conn)
        return conn


def _migrate(conn: sqlite3.Connection) -> None:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > len(MIGRATIONS):
        raise sqlite3.DatabaseError(f"schema version {version} is newer than this server ({len(MIGRATIONS)})")
    if version < len(MIGRATIONS):  # every pending step in one transaction: one commit (one sync) for a new file
        steps = "\n".join(MIGRATIONS[version:])
        conn.executescript(f"BEGIN;\n{steps}\nPRAGMA user_version = {len(MIGRATIONS)};\nCOMMIT;")


class ThreadStateDb(SectionsMixin, AttachmentsMixin):
    """thread_state.sqlite: read states, goals, sections, metadata and attachments of threads."""

    def __init__(self, codex_home: Path) -> None:
        super().__init__(_open(codex_home / STATE_FILE), threading.Lock())
        self._codex = CodexState(codex_home)  # Codex's read receipts: both programs show one unread marker

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()
        self._codex.close()

    # -- read state --------------------------------------------------------------------------------------
    def read_state(self, thread_id: str, *, default_turn: str | None = None) -> JsonObj:
        """The thread's read state. A thread never seen here is unread from its first turn (or its start),
        and that state is stored so the revision handed out stays valid."""
        with self._lock:
            return _state_wire(*self._row_or_default(thread_id, default_turn))

    def read_states(self, first_turns: dict[str, str | None]) -> dict[str, JsonObj]:
        """The read state of each thread, given its first turn id (the default for a thread never seen)."""
        return {tid: self.read_state(tid, default_turn=turn) for tid, turn in first_turns.items()}

    def mark_read(self, thread_id: str) -> JsonObj:
        """Store the thread as read with a fresh revision (a fork starts so in Codex, whatever its source had)."""
        with self._lock:
            return self._write(thread_id, None, None)

    def turn_completed(self, thread_id: str, turn_id: str) -> JsonObj:
        """A finished turn is unread unless an earlier unread position exists; the revision always moves."""
        with self._lock:
            row = self._row(thread_id)
            kind, turn = ("turn", turn_id) if row is None or row[0] is None else (row[0], row[1])
            return self._write(thread_id, kind, turn)

    def update(self, thread_id: str, operation: str, expected_revision: str) -> JsonObj:
        """Mark the thread read or unread if ``expected_revision`` is current; else ReadStateConflict."""
        with self._lock:
            row = self._row_or_default(thread_id, None)  # stored, so a conflict's revision is usable
            if row[2] != expected_revision:
                raise ReadStateConflict(_state_wire(*row))
            if operation == "read":
                return self._write(thread_id, None, None)
            return self._write(thread_id, "threadStart", None)  # Codex: "unread" marks the whole thread

    def forget(self, thread_id: str) -> None:
        """Drop everything stored about the thread (it was deleted)."""
        with self._lock:
            self._conn.execute("DELETE FROM read_state WHERE thread_id = ?", (thread_id,))
            self._conn.execute("DELETE FROM goals WHERE thread_id = ?", (thread_id,))
            self._conn.execute("DELETE FROM section_members WHERE thread_id = ?", (thread_id,))
            self._conn.execute("DELETE FROM thread_metadata WHERE thread_id = ?", (thread_id,))

    def _row(self, thread_id: str) -> tuple[str | None, str | None, str] | None:
        row = self._conn.execute(
            "SELECT first_unread_kind, first_unread_turn, revision FROM read_state WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def _row_or_default(self, thread_id: str, default_turn: str | None) -> tuple[str | None, str | None, str]:
        """The stored row, or the default (unread from `default_turn`, else from the start) stored now."""
        row = self._row(thread_id)
        if row is None:
            receipt = self._codex.receipt(thread_id)  # a thread Codex has shown: its marker, not a new one
            if receipt is not None:
                row = ("turn" if receipt[0] else None, receipt[0], receipt[1])
            else:
                row = ("turn" if default_turn else "threadStart", default_turn, str(uuid.uuid4()))
                self._codex.put_receipt(thread_id, default_turn, row[2])
            self._conn.execute("INSERT INTO read_state VALUES (?, ?, ?, ?)", (thread_id, *row))
        return row

    def _write(self, thread_id: str, kind: str | None, turn: str | None) -> JsonObj:
        revision = str(uuid.uuid4())
        self._conn.execute(
            "INSERT INTO read_state VALUES (?, ?, ?, ?) ON CONFLICT(thread_id) DO UPDATE SET "
            "first_unread_kind = excluded.first_unread_kind, first_unread_turn = excluded.first_unread_turn, "
            "revision = excluded.revision",
            (thread_id, kind, turn, revision),
        )
        self._codex.put_receipt(thread_id, turn, revision)
        return _state_wire(kind, turn, revision)

    # -- goals -------------------------------------------------------------------------------------------
    def goal(self, thread_id: str) -> Goal | None:
        """The thread's goal, or None."""
        with self._lock:
            row = self._conn.execute("SELECT * FROM goals WHERE thread_id = ?", (thread_id,)).fetchone()
        return None if row is None else Goal(*row)

    def set_goal(self, thread_id: str, *, objective: str | None, status: str | None,
                 token_budget: int | None, budget_given: bool) -> Goal:
        """Create or change the goal. A new objective starts a fresh goal (active, counters at zero)."""
        now = int(time.time())
        with self._lock:
            row = self._conn.execute("SELECT * FROM goals WHERE thread_id = ?", (thread_id,)).fetchone()
            old = None if row is None else Goal(*row)
            if old is None or (objective is not None and objective != old.objective):
                if objective is None:
                    raise LookupError("no goal exists")
                goal = Goal(thread_id, objective, status or "active", token_budget, 0, 0, now, now)
            else:
                goal = Goal(thread_id, old.objective, status or old.status,
                            token_budget if budget_given else old.token_budget, old.tokens_used,
                            old.time_used_seconds, old.created_at, now)
            if goal.status == "active" and goal.token_budget is not None and goal.tokens_used >= goal.token_budget:
                goal.status = "budgetLimited"  # as Codex: an active goal never sits at or over its budget
            self._write_goal(goal)
        return goal

    def account_goal(self, thread_id: str, *, tokens: int, seconds: int, statuses: tuple[str, ...]) -> Goal | None:
        """Add usage to the goal if its status is one of ``statuses``; an active goal whose tokens reach its
        budget becomes ``budgetLimited``. None when there is no such goal or nothing to add."""
        if tokens <= 0 and seconds <= 0:
            return None
        with self._lock:
            row = self._conn.execute("SELECT * FROM goals WHERE thread_id = ?", (thread_id,)).fetchone()
            goal = None if row is None else Goal(*row)
            if goal is None or goal.status not in statuses:
                return None
            goal.tokens_used += max(tokens, 0)
            goal.time_used_seconds += max(seconds, 0)
            goal.updated_at = int(time.time())
            if goal.status == "active" and goal.token_budget is not None and goal.tokens_used >= goal.token_budget:
                goal.status = "budgetLimited"
            self._write_goal(goal)
        return goal

    def stop_goal(self, thread_id: str, status: str, *, only_from: tuple[str, ...]) -> Goal | None:
        """Move the goal to ``status`` if its status is one of ``only_from`` (a turn error blocks an active
        goal); None when there is no such goal."""
        with self._lock:
            row = self._conn.execute("SELECT * FROM goals WHERE thread_id = ?", (thread_id,)).fetchone()
            goal = None if row is None else Goal(*row)
            if goal is None or goal.status not in only_from:
                return None
            goal.status, goal.updated_at = status, int(time.time())
            self._write_goal(goal)
        return goal

    def _write_goal(self, goal: Goal) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO goals VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (goal.thread_id, goal.objective, goal.status, goal.token_budget, goal.tokens_used,
             goal.time_used_seconds, goal.created_at, goal.updated_at),
        )

    def clear_goal(self, thread_id: str) -> bool:
        """Remove the thread's goal; False when it had none."""
        with self._lock:
            cursor = self._conn.execute("DELETE FROM goals WHERE thread_id = ?", (thread_id,))
        return cursor.rowcount > 0


def _state_wire(kind: str | None, turn: str | None, revision: str) -> JsonObj:
    if kind is None:
        first: JsonObj | None = None
    elif kind == "turn" and turn:
        first = {"type": "turn", "turnId": turn}
    else:
        first = {"type": "threadStart"}
    return {"firstUnread": first, "revision": revision}
