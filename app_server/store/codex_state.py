"""Keep Codex's own thread index, ``CODEX_HOME/state_5.sqlite`` (table ``threads``), in step with what pycodex
writes, so Codex lists pycodex's threads with their names, previews, times and archive flags.

Codex finds a rollout it has no row for by itself, but it takes a thread's name (and its other list fields)
from this table only: a rename written to ``session_index.jsonl`` alone does not show in Codex (checked
against 0.169, whose own index rebuild loses names the same way). pycodex does not create the database (see
``_connection``). Any failure is logged and ignored: the rollout is the truth and Codex repairs its index
from it.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Final

from pycodex.json_types import JsonObj

from .codex_db import CodexDatabase

log = logging.getLogger(__name__)

DB_FILE: Final = "state_5.sqlite"
#: The columns pycodex fills; the rest keep Codex's defaults.
_NEEDED: Final = frozenset({"id", "rollout_path", "created_at", "updated_at", "source", "model_provider", "cwd",
                            "title", "sandbox_policy", "approval_mode", "archived", "archived_at", "cli_version",
                            "first_user_message", "model", "reasoning_effort", "created_at_ms", "updated_at_ms",
                            "preview", "recency_at", "recency_at_ms", "history_mode", "name", "originator",
                            "tokens_used", "git_sha", "git_branch", "git_origin_url"})  # fmt: skip


def permission_profile(sandbox: object, cwd: str) -> JsonObj:
    """The permission profile Codex 0.169 stores in ``sandbox_policy`` for a sandbox mode (as recorded)."""
    if sandbox == "danger-full-access":
        return {"type": "disabled"}
    entries: list[JsonObj] = [{"path": {"type": "special", "value": {"kind": "root"}}, "access": "read"}]
    if sandbox != "read-only":  # workspace-write, Codex's default
        entries += [{"path": {"type": "path", "path": cwd}, "access": "write"},
                    {"path": {"type": "special", "value": {"kind": "slash_tmp"}}, "access": "write"},
                    {"path": {"type": "special", "value": {"kind": "tmpdir"}}, "access": "write"}]  # fmt: skip
        entries += [{"path": {"type": "path", "path": f"{cwd}/{name}"}, "access": "read",
                     "missing_path_behavior": "skip"} for name in (".git", ".agents", ".codex", ".aws")]  # fmt: skip
    return {"type": "managed", "file_system": {"type": "restricted", "entries": entries}, "network": "restricted"}


class CodexState:
    """Writes to Codex's ``threads`` rows, when Codex's database exists and has the expected columns."""

    def __init__(self, codex_home: Path) -> None:
        # Not made here (unlike the history projection): a state_5 Codex did not make gets Codex's backfill from
        # the rollouts on its first start, which sets every row anew, so rows written before would not survive.
        self._db = CodexDatabase(codex_home / DB_FILE, what="thread index", available=Path.exists,
                                 accepts=_has_columns)  # fmt: skip

    def close(self) -> None:
        """Close the connection, if one was opened."""
        self._db.close()

    def thread_created(self, meta: JsonObj, *, rollout_path: Path, created_at_ms: int) -> None:
        """Add the row of a thread pycodex just started (a row Codex already has is left as it is)."""
        settings = meta.get("settings") if isinstance(meta.get("settings"), dict) else {}
        assert isinstance(settings, dict)
        source = meta.get("source")
        values = {
            "id": meta["id"],
            "rollout_path": str(rollout_path),
            "created_at": created_at_ms // 1000,
            "updated_at": created_at_ms // 1000,
            "source": source if isinstance(source, str) else "vscode",
            "model_provider": meta.get("modelProvider") or "",
            "cwd": meta.get("cwd") or "",
            "title": "",
            "sandbox_policy": json.dumps(permission_profile(settings.get("sandbox"), str(meta.get("cwd") or ""))),
            "approval_mode": str(settings.get("approvalPolicy") or "on-request"),
            "cli_version": meta.get("cliVersion") or "",
            "first_user_message": "",
            "model": meta.get("model"),
            "reasoning_effort": meta.get("reasoningEffort"),
            "created_at_ms": created_at_ms,
            "updated_at_ms": created_at_ms,
            "preview": "",
            "recency_at": created_at_ms // 1000,
            "recency_at_ms": created_at_ms,
            "history_mode": meta.get("historyMode") or "paginated",
            "name": meta.get("name"),
            "originator": meta.get("originator"),
        }
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        self._run(f"INSERT OR IGNORE INTO threads ({columns}) VALUES ({marks})", tuple(values.values()))

    def first_user_message(self, thread_id: str, text: str) -> None:
        """The thread's first user message: Codex's title, preview and first_user_message (set once)."""
        self._run(
            "UPDATE threads SET title = ?, preview = ?, first_user_message = ? WHERE id = ? AND preview = ''",
            (text, text, text, thread_id),
        )

    def touched(self, thread_id: str, at_ms: int) -> None:
        """The thread changed at ``at_ms``: its updated and recency times move on."""
        self._run(
            "UPDATE threads SET updated_at = ?, updated_at_ms = ?, recency_at = ?, recency_at_ms = ? WHERE id = ?",
            (at_ms // 1000, at_ms, at_ms // 1000, at_ms, thread_id),
        )

    def named(self, thread_id: str, name: str | None) -> None:
        """The thread's name (None clears it)."""
        self._run("UPDATE threads SET name = ? WHERE id = ?", (name, thread_id))

    def fill_names(self, names: dict[str, str]) -> None:
        """Give Codex's rows without a name the name pycodex knows (threads renamed before Codex's index
        existed: Codex's own rebuild from the rollouts leaves them unnamed)."""
        self._db.run_many("UPDATE threads SET name = ? WHERE id = ? AND name IS NULL",
                          [(name, thread_id) for thread_id, name in names.items()])  # fmt: skip

    def git(self, thread_id: str, git: JsonObj) -> None:
        """The repository state a turn started in (Codex's git_sha, git_branch, git_origin_url)."""
        self._run(
            "UPDATE threads SET git_sha = ?, git_branch = ?, git_origin_url = ? WHERE id = ?",
            (git.get("sha"), git.get("branch"), git.get("originUrl"), thread_id),
        )

    def git_info(self, thread_id: str) -> JsonObj | None:
        """The gitInfo Codex recorded for a thread, or None (no row, no repository, no database)."""
        rows = self._db.query("SELECT git_sha, git_branch, git_origin_url FROM threads WHERE id = ?", (thread_id,))
        if not rows or all(value is None for value in rows[0]):
            return None
        return {"sha": rows[0][0], "branch": rows[0][1], "originUrl": rows[0][2]}

    def all_git_info(self) -> dict[str, JsonObj]:
        """Every thread Codex recorded a repository for -> its gitInfo."""
        rows = self._db.query(
            "SELECT id, git_sha, git_branch, git_origin_url FROM threads "
            "WHERE git_sha IS NOT NULL OR git_branch IS NOT NULL OR git_origin_url IS NOT NULL"
        )
        return {str(r[0]): {"sha": r[1], "branch": r[2], "originUrl": r[3]} for r in rows}

    def receipt(self, thread_id: str) -> tuple[str | None, str] | None:
        """Codex's read receipt of a thread: (first unread turn or None, revision), or None when it has none."""
        rows = self._db.query(
            "SELECT first_unread_turn, revision FROM thread_read_receipts WHERE thread_id = ?", (thread_id,)
        )
        if not rows:
            return None
        first = rows[0][0]
        return (first if isinstance(first, str) else None), str(rows[0][1])

    def put_receipt(self, thread_id: str, first_unread_turn: str | None, revision: str) -> None:
        """Record pycodex's read state as Codex's read receipt, so both show the same unread marker."""
        self._run(
            "INSERT INTO thread_read_receipts (thread_id, first_unread_turn, revision, last_published_turn) "
            "VALUES (?, ?, ?, ?) ON CONFLICT(thread_id) DO UPDATE SET first_unread_turn = excluded.first_unread_turn, "
            "revision = excluded.revision, last_published_turn = COALESCE(excluded.last_published_turn, "
            "thread_read_receipts.last_published_turn)",
            (thread_id, first_unread_turn, revision, first_unread_turn),
        )

    def tokens(self, thread_id: str, total: int) -> None:
        """The thread's total token count."""
        self._run("UPDATE threads SET tokens_used = ? WHERE id = ?", (total, thread_id))

    def moved(self, thread_id: str, rollout_path: Path, *, archived_at_ms: int | None) -> None:
        """The rollout was archived (``archived_at_ms`` set) or unarchived to ``rollout_path``."""
        archived_at = None if archived_at_ms is None else archived_at_ms // 1000
        self._run(
            "UPDATE threads SET rollout_path = ?, archived = ?, archived_at = ? WHERE id = ?",
            (str(rollout_path), int(archived_at_ms is not None), archived_at, thread_id),
        )

    def deleted(self, thread_id: str) -> None:
        """The thread is gone."""
        self._run("DELETE FROM threads WHERE id = ?", (thread_id,))

    def _run(self, sql: str, params: tuple[object, ...]) -> None:
        self._db.run(sql, params)


def _has_columns(conn: sqlite3.Connection) -> bool:
    return _NEEDED <= {row[1] for row in conn.execute("PRAGMA table_info(threads)")}
