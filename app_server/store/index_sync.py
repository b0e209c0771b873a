"""Keep both thread indexes in step with the rollouts: pycodex's (``index.ThreadIndex``) and Codex's own
(``codex_state.CodexState``). Every update is derived data, so a failed one is logged and repaired from the
rollouts later, never raised to the writer whose record is already durable."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

from pycodex.json_types import JsonObj

from . import indexing
from . import records as r
from .codex_state import CodexState
from .index import ThreadIndex
from .thread_shape import preview_of

log = logging.getLogger(__name__)


class IndexSync:
    """Applies one store event to both indexes. ``index`` opens pycodex's index lazily (see ThreadStore)."""

    def __init__(self, index: Callable[[], ThreadIndex], codex: CodexState) -> None:
        self._index = index
        self.codex = codex

    def safely(self, update: Callable[[ThreadIndex], object]) -> None:
        """Run ``update`` on pycodex's index; a failure is logged (the rollout is intact)."""
        try:
            update(self._index())
        except sqlite3.Error as exc:
            log.warning("thread index update failed (the rollout is intact): %s", exc)

    def fill_git_info(self, index: ThreadIndex) -> None:
        """Rows of threads Codex wrote get the gitInfo Codex recorded for them (their rollouts have none)."""
        missing = index.without_meta("gitInfo")
        if not missing:
            return
        known = self.codex.all_git_info()
        updates = [(thread_id, known[thread_id]) for thread_id in missing if thread_id in known]

        def fill(target: ThreadIndex) -> None:
            for thread_id, git in updates:
                target.update_meta(thread_id, "gitInfo", git)

        if updates:
            self.safely(fill)

    def created(self, stored: JsonObj, path: Path, created_at_ms: int) -> None:
        """A thread's rollout was created with metadata ``stored``."""
        row = indexing.row_from_meta(stored, path=path, created_at_ms=created_at_ms)
        self.safely(lambda index: index.upsert(row))
        self.codex.thread_created(stored, rollout_path=path, created_at_ms=created_at_ms)

    def named(self, thread_id: str, name: str | None) -> None:
        """The thread was renamed (also when another program writes its rollout)."""
        self.safely(lambda index: index.update(thread_id, name=name))
        self.codex.named(thread_id, name)

    def moved(self, thread_id: str, path: Path, *, archived_at_ms: int | None) -> None:
        """The rollout moved to ``path``: archived when ``archived_at_ms`` is set, else unarchived."""
        archived = archived_at_ms is not None
        self.safely(
            lambda index: index.update(
                thread_id, rollout_path=str(path), archived=archived, archived_at_ms=archived_at_ms
            )
        )
        self.codex.moved(thread_id, path, archived_at_ms=archived_at_ms)

    def deleted(self, thread_id: str) -> None:
        """The thread's rollout is gone."""
        self.safely(lambda index: index.delete(thread_id))
        self.codex.deleted(thread_id)

    def appended(self, thread_id: str, type_: str, payload: JsonObj, at_ms: int) -> None:
        """A record was appended to the thread's rollout at ``at_ms`` (the writer's hook)."""
        if type_ == r.ITEM_COMPLETED:
            item = payload.get("item")
            preview = preview_of(item) if isinstance(item, dict) else None
            if preview:
                self.safely(lambda index: index.set_preview_if_empty(thread_id, preview))
                self.codex.first_user_message(thread_id, preview)
            self._touched(thread_id, at_ms)
        elif type_ in (r.TURN_STARTED, r.TURN_ENDED):
            git = payload.get("gitInfo")
            if isinstance(git, dict):
                self.safely(lambda index: index.update_meta(thread_id, "gitInfo", git))
                self.codex.git(thread_id, git)
            self._touched(thread_id, at_ms)
        elif type_ == r.THREAD_NAME:
            name = payload.get("name")
            self.named(thread_id, name if isinstance(name, str) else None)
            self._touched(thread_id, at_ms)
        elif type_ == r.TOKEN_USAGE:
            usage = payload.get("tokenUsage")
            total = usage.get("total") if isinstance(usage, dict) else None
            tokens = total.get("totalTokens") if isinstance(total, dict) else None
            if isinstance(tokens, int):
                self.codex.tokens(thread_id, tokens)
        elif type_ == r.THREAD_SETTINGS:
            self._settings(thread_id, payload.get("settings") or {})

    def _touched(self, thread_id: str, at_ms: int) -> None:
        self.safely(lambda index: index.touch(thread_id, at_ms))
        self.codex.touched(thread_id, at_ms)

    def _settings(self, thread_id: str, settings: JsonObj) -> None:
        fields = {
            column: settings[key]
            for key, column in (("cwd", "cwd"), ("model", "model"), ("modelProvider", "model_provider"))
            if isinstance(settings.get(key), str)
        }
        if fields:
            self.safely(lambda index: index.update(thread_id, **fields))
        if "effort" in settings:  # the Thread's reasoningEffort follows the thread's settings too
            effort = settings["effort"]
            self.safely(lambda index: index.update_meta(thread_id, "reasoningEffort", effort))
