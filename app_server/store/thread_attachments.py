"""Thread attachments (a client's typed records tied to a thread, unique per type and identity key) on the
thread state database. Codex keeps the first payload for a key: adding it again answers ``existing``."""

from __future__ import annotations

import json
import sqlite3
import threading
import time

from pycodex.json_types import JsonObj

from .ids import new_uuid7


class AttachmentsMixin:
    """Thread attachments on the thread state database (mixed into ``ThreadStateDb``)."""

    _conn: sqlite3.Connection
    _lock: threading.Lock

    def attachments(self, thread_id: str) -> list[JsonObj]:
        """The thread's attachments in wire shape, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, attachment_type, identity_key, payload_json, created_at FROM attachments "
                "WHERE thread_id = ? ORDER BY created_at, id", (thread_id,))
            return [_wire(*row) for row in rows.fetchall()]

    def add_attachment(self, thread_id: str, kind: str, key: str, payload: object) -> tuple[JsonObj, bool]:
        """The attachment for (``kind``, ``key``) and whether this call created it."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id, attachment_type, identity_key, payload_json, created_at FROM attachments "
                "WHERE thread_id = ? AND attachment_type = ? AND identity_key = ?", (thread_id, kind, key)).fetchone()
            if row is not None:
                return _wire(*row), False
            new = (new_uuid7(), kind, key,
                   json.dumps(payload), int(time.time()))
            self._conn.execute(
                "INSERT INTO attachments (id, thread_id, attachment_type, identity_key, payload_json, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)", (new[0], thread_id, *new[1:]))
            return _wire(*new), True

    def remove_attachment(self, thread_id: str, kind: str, key: str) -> str | None:
        """The removed attachment's id, or None when there was none."""
        with self._lock:
            row = self._conn.execute(
                "DELETE FROM attachments WHERE thread_id = ? AND attachment_type = ? AND identity_key = ? "
                "RETURNING id", (thread_id, kind, key)).fetchone()
            return None if row is None else str(row[0])

    def attachment_owners(self, kind: str, key: str) -> list[str]:
        """The threads that hold an attachment of ``kind`` with identity ``key``, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT thread_id FROM attachments WHERE attachment_type = ? AND identity_key = ? "
                "ORDER BY created_at, thread_id", (kind, key))
            return [str(row[0]) for row in rows.fetchall()]


def _wire(attachment_id: str, kind: str, key: str, payload_json: str, created_at: int) -> JsonObj:
    return {"id": attachment_id, "attachmentType": kind, "identityKey": key, "payload": json.loads(payload_json),
            "createdAt": created_at}
