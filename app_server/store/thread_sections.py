"""Thread sections (user-named groups of threads, ordered within) and per-thread metadata overrides, on the
thread state database. Kept apart from read state and goals so each file stays one concept."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid

from pycodex.json_types import JsonObj


class SectionNotFound(LookupError):
    """No section has the given id."""


class SectionsMixin:
    """Sections and per-thread metadata on the thread state database (mixed into ``ThreadStateDb``)."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock) -> None:
        self._conn = conn
        self._lock = lock

    # -- sections --------------------------------------------------------------------------------------------
    def sections(self) -> list[JsonObj]:
        """Every section in wire shape, in position order."""
        with self._lock:
            rows = self._conn.execute("SELECT id, name, appearance_json FROM sections ORDER BY position, id")
            return [_section(*row) for row in rows.fetchall()]

    def section(self, section_id: str) -> JsonObj:
        """The section ``section_id`` in wire shape; raises SectionNotFound."""
        with self._lock:
            return self._section(section_id)

    def create_section(self, name: str, appearance: JsonObj | None) -> JsonObj:
        """Create a section after the last one; returns it in wire shape."""
        section_id = str(uuid.uuid7()) if hasattr(uuid, "uuid7") else str(uuid.uuid4())
        with self._lock:
            last = self._conn.execute("SELECT COALESCE(MAX(position), -1) FROM sections").fetchone()[0]
            self._conn.execute("INSERT INTO sections VALUES (?, ?, ?, ?)",
                               (section_id, name, _dump(appearance), int(last) + 1))
            return self._section(section_id)

    def update_section(self, section_id: str, name: str, appearance: JsonObj | None, *, appearance_given: bool) -> JsonObj:
        """Rename a section (and set its appearance when ``appearance_given``); raises SectionNotFound."""
        with self._lock:
            self._section(section_id)
            if appearance_given:
                self._conn.execute("UPDATE sections SET name = ?, appearance_json = ? WHERE id = ?",
                                   (name, _dump(appearance), section_id))
            else:
                self._conn.execute("UPDATE sections SET name = ? WHERE id = ?", (name, section_id))
            return self._section(section_id)

    def delete_section(self, section_id: str) -> list[str]:
        """Delete the section; returns the threads that were in it (now in no section)."""
        with self._lock:
            self._section(section_id)
            members = [r[0] for r in self._conn.execute(
                "SELECT thread_id FROM section_members WHERE section_id = ?", (section_id,)).fetchall()]
            self._conn.execute("DELETE FROM sections WHERE id = ?", (section_id,))
            return members

    def move(self, thread_id: str, section_id: str | None, before_thread_id: str | None) -> None:
        """Put the thread into ``section_id`` (before ``before_thread_id``, else at the end), or out of any."""
        with self._lock:
            if section_id is None:
                self._conn.execute("DELETE FROM section_members WHERE thread_id = ?", (thread_id,))
                return
            self._section(section_id)
            order = [r for r in self._conn.execute(
                "SELECT thread_id, position FROM section_members WHERE section_id = ? AND thread_id != ? "
                "ORDER BY position", (section_id, thread_id)).fetchall()]
            positions = [float(r[1]) for r in order]
            ids = [r[0] for r in order]
            if before_thread_id is not None and before_thread_id in ids:
                index = ids.index(before_thread_id)
                prev = positions[index - 1] if index > 0 else positions[index] - 2.0
                position = (prev + positions[index]) / 2
            else:
                position = (positions[-1] + 1.0) if positions else 0.0
            current = self._conn.execute("SELECT section_id, entered_at FROM section_members WHERE thread_id = ?",
                                         (thread_id,)).fetchone()
            entered = int(current[1]) if current and current[0] == section_id else int(time.time())
            self._conn.execute("INSERT OR REPLACE INTO section_members VALUES (?, ?, ?, ?)",
                               (thread_id, section_id, position, entered))

    def section_threads(self, section_id: str) -> list[str]:
        """The ids of the section's threads, in their order."""
        with self._lock:
            return [r[0] for r in self._conn.execute(
                "SELECT thread_id FROM section_members WHERE section_id = ? ORDER BY position", (section_id,))]

    def membership(self, thread_id: str) -> tuple[JsonObj, int] | None:
        """(section, enteredAt) of a thread in a section."""
        with self._lock:
            row = self._conn.execute(
                "SELECT s.id, s.name, s.appearance_json, m.entered_at FROM section_members m "
                "JOIN sections s ON s.id = m.section_id WHERE m.thread_id = ?", (thread_id,)).fetchone()
        return None if row is None else (_section(row[0], row[1], row[2]), int(row[3]))

    def _section(self, section_id: str) -> JsonObj:
        row = self._conn.execute("SELECT id, name, appearance_json FROM sections WHERE id = ?",
                                 (section_id,)).fetchone()
        if row is None:
            raise SectionNotFound(f"thread section not found: {section_id}")
        return _section(*row)

    # -- metadata --------------------------------------------------------------------------------------------
    def metadata(self, thread_id: str) -> JsonObj:
        """Stored overrides: {"gitInfo": {...}} and/or {"daybreakEnabled": bool}, only what was set."""
        with self._lock:
            row = self._conn.execute("SELECT git_json, daybreak_enabled FROM thread_metadata WHERE thread_id = ?",
                                     (thread_id,)).fetchone()
        out: JsonObj = {}
        if row is not None and row[0] is not None:
            out["gitInfo"] = json.loads(row[0])
        if row is not None and row[1] is not None:
            out["daybreakEnabled"] = bool(row[1])
        return out

    def update_metadata(self, thread_id: str, git_patch: JsonObj | None, daybreak: bool | None,
                        base_git: JsonObj | None) -> JsonObj:
        """Apply a gitInfo patch (keys present replace, null clears) over the stored or ``base_git`` value."""
        current = self.metadata(thread_id)
        git = current.get("gitInfo", base_git)
        if git_patch is not None:
            git = {**(git or {"sha": None, "branch": None, "originUrl": None}), **git_patch}
        with self._lock:
            self._conn.execute(
                "INSERT INTO thread_metadata (thread_id, git_json, daybreak_enabled) VALUES (?, ?, ?) "
                "ON CONFLICT(thread_id) DO UPDATE SET git_json = excluded.git_json, "
                "daybreak_enabled = COALESCE(excluded.daybreak_enabled, thread_metadata.daybreak_enabled)",
                (thread_id, _dump(git), None if daybreak is None else int(daybreak)),
            )
        return self.metadata(thread_id)

    def set_memory_mode(self, thread_id: str, mode: str) -> None:
        """Store the thread's memory mode (``enabled`` or ``disabled``)."""
        with self._lock:
            self._conn.execute(
                "INSERT INTO thread_metadata (thread_id, memory_mode) VALUES (?, ?) "
                "ON CONFLICT(thread_id) DO UPDATE SET memory_mode = excluded.memory_mode", (thread_id, mode))

    def memory_mode(self, thread_id: str) -> str:
        """"enabled" unless the thread's memory use was switched off."""
        with self._lock:
            row = self._conn.execute("SELECT memory_mode FROM thread_metadata WHERE thread_id = ?",
                                     (thread_id,)).fetchone()
        return str(row[0]) if row and row[0] else "enabled"


def _section(section_id: str, name: str, appearance_json: str | None) -> JsonObj:
    appearance = json.loads(appearance_json) if appearance_json else None
    return {"id": section_id, "name": name, "appearance": appearance}


def _dump(value: JsonObj | None) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))
