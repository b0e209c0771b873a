"""One connection to a database of Codex's (state_5, thread_history_1) that pycodex keeps in step: opened on
first use, checked for the schema it expects, and given up on (logged once) when it is unusable.

Everything written there is derived from the rollouts, so the connection runs with ``synchronous=NORMAL``
(WAL keeps the file whole without an fsync per update) and every failure is logged, never raised.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

_BUSY_TIMEOUT_S: Final = 2.0  # Codex holds its write transactions for milliseconds

#: (path) -> whether the database exists (or could be made) now.
Available = Callable[[Path], bool]
#: (connection) -> whether its schema is the one this side writes.
Accepts = Callable[[sqlite3.Connection], bool]


class CodexDatabase:
    """A lazily opened, lock-guarded connection to one of Codex's databases."""

    def __init__(self, path: Path, *, what: str, available: Available, accepts: Accepts) -> None:
        self.path = path
        self._what = what  # for the log lines: "thread index", "history projection"
        self._available = available
        self._accepts = accepts
        self.lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._unusable = False

    def close(self) -> None:
        """Close the connection, if one was opened."""
        with self.lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def run(self, sql: str, params: tuple[object, ...]) -> None:
        """One statement, committed; skipped when the database is absent or unusable."""
        self.run_many(sql, [params])

    def run_many(self, sql: str, rows: list[tuple[object, ...]]) -> None:
        """One statement for each of ``rows``, in one transaction; skipped like ``run``."""
        if not rows:
            return
        with self.lock:
            conn = self.connection()
            if conn is None:
                return
            try:
                with conn:
                    conn.executemany(sql, rows)
            except sqlite3.Error as exc:
                self.warn_not_updated(exc)

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """The rows of one query; [] when the database is absent, unusable or the query fails."""
        with self.lock:
            conn = self.connection()
            if conn is None:
                return []
            try:
                return list(conn.execute(sql, params).fetchall())
            except sqlite3.Error:
                return []

    def warn_not_updated(self, exc: sqlite3.Error) -> None:
        """Log a failed update (Codex repairs its databases from the rollouts)."""
        log.warning("Codex's %s %s not updated (Codex repairs it from the rollouts): %s", self._what, self.path, exc)

    def connection(self) -> sqlite3.Connection | None:
        """The open connection (call with ``lock`` held), or None while the database is not there."""
        if self._conn is not None or self._unusable:
            return self._conn
        if not self._available(self.path):
            return None
        try:
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, check_same_thread=False)
            conn.execute("PRAGMA synchronous=NORMAL")
            accepted = self._accepts(conn)
        except sqlite3.Error as exc:
            log.warning("Codex's %s %s is unusable: %s", self._what, self.path, exc)
            self._unusable = True
            return None
        if not accepted:
            log.info("Codex's %s %s has another schema; leaving it to Codex", self._what, self.path)
            conn.close()
            self._unusable = True
            return None
        self._conn = conn
        return conn
