"""ThreadStore: the durable thread store of the app-server (rollout files + SQLite index) behind one object.

Every method is synchronous, thread-safe and bounded by the size of one rollout (load/fork) or one index query
(list). Appends are small but may fsync; loads, forks, lists, archive moves and the startup index check touch
the disk, so asyncio callers should run them via asyncio.to_thread.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pycodex.json_types import JsonObj

from . import compression, indexing, intact, rollout_file, session_index
from . import records as r
from .codex_history import CodexHistory
from .codex_state import CodexState
from .errors import ThreadArchivedStateError, ThreadLockedError, ThreadNotFoundError
from .ids import new_uuid7, parse_thread_id
from .index import IndexRow, ListQuery, ThreadIndex
from .index_sync import IndexSync
from .layout import (
    INDEX_FILE,
    archived_rollout_path,
    find_rollout_file,
    fsync_dir,
    is_archived_path,
    live_rollout_path,
    rollout_file_name,
)
from .migrate import migrate_if_legacy
from .reconstruct import LoadedThread, reconstruct
from .thread_shape import build_thread, stored_meta
from .writer import RolloutWriter, now_ms
from .writer_lock import WriterLock

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ThreadPage:
    """One thread/list page: wire Thread dicts, their index rows and the cursors both ways."""

    threads: list[JsonObj]  # wire Thread dicts, status notLoaded, turns []
    rows: list[IndexRow]
    next_cursor: str | None
    backwards_cursor: str | None


class ThreadStore:
    """Owns CODEX_HOME/sessions, CODEX_HOME/archived_sessions and CODEX_HOME/state_pycodex.sqlite."""

    def __init__(self, codex_home: Path | str, *, fsync: bool = True, reconcile: bool = True) -> None:
        self.codex_home = Path(codex_home)
        self.fsync = fsync
        self.codex_home.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._writers: dict[str, RolloutWriter] = {}
        self._reconcile = reconcile
        self._index_lock = threading.Lock()
        self._opened_index: ThreadIndex | None = None
        self._sync = IndexSync(lambda: self._index, CodexState(self.codex_home))
        self._history = CodexHistory(self.codex_home)

    @property
    def _index(self) -> ThreadIndex:
        """The SQLite index, opened (and rebuilt or reconciled from the rollouts) on first use rather than at
        start-up: a server with a thousand stored threads answers ``initialize`` without listing them."""
        index = self._opened_index
        if index is None:
            with self._index_lock:
                index = self._opened_index
                if index is None:
                    index = ThreadIndex(self.codex_home / INDEX_FILE)
                    if index.needs_rebuild:
                        indexing.rebuild(index, self.codex_home)
                    elif self._reconcile:
                        indexing.reconcile(index, self.codex_home)
                    self._opened_index = index
                    self._sync.codex.fill_names(index.names())
                    self._sync.fill_git_info(index)
        return index

    # -- lifecycle ----------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close every open writer and the index."""
        with self._lock:
            writers, self._writers = list(self._writers.values()), {}
        for writer in writers:
            writer.close()
        if self._opened_index is not None:
            self._opened_index.close()
        self._sync.codex.close()
        self._history.close()

    def __enter__(self) -> ThreadStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rebuild_index(self) -> int:
        """Refill the index from the rollouts; returns how many threads it holds."""
        return indexing.rebuild(self._index, self.codex_home)

    # -- creating and writing -----------------------------------------------------------------------------

    def create_thread(self, meta: JsonObj) -> RolloutWriter:
        """Start a thread's rollout. `meta` is the thread dict in wire shape (id optional: a UUIDv7 is made;
        cwd, modelProvider, model, source, cliVersion, originator, forkedFromId, name, ephemeral, ...); extra
        keys (e.g. baseInstructions) are stored too and come back in LoadedThread.meta. An ephemeral thread gets
        a writer that stores nothing."""
        thread_id = parse_thread_id(meta["id"]) if meta.get("id") is not None else new_uuid7()
        if meta.get("ephemeral"):
            return RolloutWriter.ephemeral(thread_id)
        created = now_ms()
        stored = {**stored_meta(meta), "id": thread_id, "createdAtMs": created}
        stored.setdefault("sessionId", thread_id)
        path = live_rollout_path(self.codex_home, rollout_file_name(thread_id, created))
        lock = WriterLock.acquire(self.codex_home, thread_id)
        writer = RolloutWriter.create(
            thread_id, path, stored, fsync=self.fsync, hook=self._on_append, writer_lock=lock
        )
        self._sync.created(stored, path, created)
        with self._lock:
            self._writers[thread_id] = writer
        return writer

    def open_writer(self, thread_id: str) -> RolloutWriter:
        """The writer of a stored thread (resume). Returns the one this store already has open, if any;
        raises ThreadLockedError if another process holds it, ThreadNotFoundError if there is no rollout."""
        thread_id = parse_thread_id(thread_id)
        with self._lock:
            current = self._writers.get(thread_id)
            if current is not None and not current.closed:
                return current
        path = self._require_rollout(thread_id)
        intact.check_head(thread_id, path)  # never append to a rollout no reader could use
        migrate_if_legacy(self.codex_home, path)  # appends go in Codex's format, so the whole file must be
        lock = WriterLock.acquire(self.codex_home, thread_id)
        writer = RolloutWriter.reopen(thread_id, path, fsync=self.fsync, hook=self._on_append, writer_lock=lock)
        with self._lock:
            self._writers[thread_id] = writer
        return writer

    def close_writer(self, thread_id: str) -> None:
        """Unload: close this store's writer of the thread (no-op if none)."""
        with self._lock:
            writer = self._writers.pop(parse_thread_id(thread_id), None)
        if writer is not None:
            writer.close()

    def _on_append(
        self, thread_id: str, type_: str, payload: JsonObj, at_ms: int, line: tuple[int, int, int]
    ) -> None:
        self._sync.appended(thread_id, type_, payload, at_ms)
        self._history.appended(thread_id, type_, payload, line)

    # -- reading ------------------------------------------------------------------------------------------

    def find_rollout(self, thread_id: str) -> Path | None:
        """The rollout file of a thread (live or archived), or None. Falls back to scanning the layout, and
        repairs the index when the scan finds what the index did not."""
        thread_id = parse_thread_id(thread_id)
        row = self._get_row(thread_id)
        if row is not None and os.path.exists(row.rollout_path):
            return Path(row.rollout_path)
        path = find_rollout_file(self.codex_home, thread_id)
        if path is not None and compression.is_compressed(path):
            path = compression.restore(path)  # as Codex on resume: pycodex reads and appends plain files only
        if path is None:
            if row is not None:
                self._sync.safely(lambda index: index.delete(thread_id))
            return None
        fresh = indexing.row_from_file(self.codex_home, path, is_archived_path(self.codex_home, path))
        if fresh is not None:
            self._sync.safely(lambda index: index.upsert(fresh))
        return path

    def load_thread(self, thread_id: str) -> LoadedThread:
        """Rebuild a stored thread from its rollout. Raises ThreadNotFoundError ("no rollout found ...") and
        RolloutCorruptError (a rollout that cannot be read as a thread); neither touches the file."""
        thread_id = parse_thread_id(thread_id)
        path = self._require_rollout(thread_id)
        records = self._with_history_base(intact.read_intact(thread_id, path))
        loaded = intact.rebuild(thread_id, path, records, is_archived_path(self.codex_home, path))
        names = session_index.read_names(self.codex_home)
        if thread_id in names:  # Codex renames a thread there only; it is the latest word on the name
            loaded.name = names[thread_id]
        if "gitInfo" not in loaded.meta:  # a thread Codex wrote: its repository state is in Codex's index
            git = self._sync.codex.git_info(thread_id)
            if git is not None:
                loaded.meta = {**loaded.meta, "gitInfo": git}
        return loaded

    def read_thread(self, thread_id: str) -> JsonObj:
        """The Thread dict (no turns, status notLoaded) from the index, without reading the rollout."""
        thread_id = parse_thread_id(thread_id)
        row = self._get_row(thread_id)
        if row is None or not os.path.exists(row.rollout_path):
            self._require_rollout(thread_id)
            row = self._get_row(thread_id)
            if row is None:
                return self.load_thread(thread_id).thread()
        return thread_from_row(row)

    def list_threads(
        self,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        sort_key: str = "created_at",
        sort_direction: str = "desc",
        archived: bool = False,
        cwd: str | Sequence[str] | None = None,
        search_term: str | None = None,
        source_kinds: Sequence[str] | None = None,
        model_providers: Sequence[str] | None = None,
        excluded_ids: Sequence[str] | None = None,
        included_ids: Sequence[str] | None = None,
    ) -> ThreadPage:
        """One page of stored threads, newest first by default. The cursor is opaque and bound to the sort key
        and direction; InvalidCursorError for a foreign one, ValueError for a bad sort key or direction."""
        cwds = (cwd,) if isinstance(cwd, str) else tuple(cwd or ())
        query = ListQuery(
            cursor=cursor,
            limit=limit,
            sort_key=sort_key,
            sort_direction=sort_direction,
            archived=archived,
            cwds=cwds,
            search_term=search_term,
            source_kinds=tuple(source_kinds or ()),
            model_providers=tuple(model_providers or ()),
            excluded_ids=tuple(parse_thread_id(t) for t in excluded_ids or ()),
            included_ids=None if included_ids is None else tuple(parse_thread_id(t) for t in included_ids),
        )
        rows, next_cursor, backwards_cursor = self._index.list(query)
        return ThreadPage([thread_from_row(row) for row in rows], rows, next_cursor, backwards_cursor)

    # -- fork, name, archive ------------------------------------------------------------------------------

    def fork_thread(
        self, source_id: str, overrides: JsonObj | None = None, *, ephemeral: bool = False
    ) -> tuple[RolloutWriter, LoadedThread]:
        """Copy a stored thread's records (turns, items, history, token usage, name, settings) into a new
        thread with forkedFromId set. Returns the new thread's open writer and its reconstruction."""
        source_id = parse_thread_id(source_id)
        source_path = self._require_rollout(source_id)
        source_records = self._with_history_base(intact.read_intact(source_id, source_path))
        source = intact.rebuild(source_id, source_path, source_records, archived=False)
        keep = {k: v for k, v in source.meta.items() if k not in ("id", "sessionId", "createdAtMs")}
        meta = {
            **keep,
            **(overrides or {}),
            "forkedFromId": source_id,
            "name": source.name,
            "ephemeral": ephemeral,
        }
        meta.pop("id", None)
        writer = self.create_thread(meta)
        copied = source_records[1:]
        for rec in copied:
            writer.append(rec.type, rec.payload, durable=False)
        if writer.path is not None:
            writer.sync()  # one fsync covers the whole copy
            return writer, self.load_thread(writer.thread_id)
        head = r.Record(
            r.utc_timestamp(now_ms()), 0, r.SESSION_META, {**stored_meta(meta), "id": writer.thread_id}
        )
        return writer, reconstruct([head, *copied], path=None, archived=False)

    def set_name(self, thread_id: str, name: str | None) -> None:
        """Record a new name (None clears it); bumps updatedAt. Uses this store's open writer if there is one."""
        thread_id = parse_thread_id(thread_id)
        with self._lock:
            writer = self._writers.get(thread_id)
        if writer is not None and not writer.closed:
            writer.name_changed(name)
            session_index.append_name(self.codex_home, thread_id, name, now_ms())
            return
        path = self._require_rollout(thread_id)
        intact.check_head(thread_id, path)
        # Like Codex, a rename goes to session_index.jsonl even while another program writes the thread.
        session_index.append_name(self.codex_home, thread_id, name, now_ms())
        try:
            lock = WriterLock.acquire(self.codex_home, thread_id)
        except ThreadLockedError:
            self._sync.named(thread_id, name)
            return
        migrate_if_legacy(self.codex_home, path)
        with RolloutWriter.reopen(
            thread_id, path, fsync=self.fsync, hook=self._on_append, writer_lock=lock
        ) as temporary:
            temporary.name_changed(name)

    def archive(self, thread_id: str) -> Path:
        """Move the rollout to archived_sessions/ (same file name) and flag the index. Closes this store's
        writer of the thread (archiving unloads it). Returns the new path."""
        thread_id = parse_thread_id(thread_id)
        path = self._require_rollout(thread_id)
        if is_archived_path(self.codex_home, path):
            raise ThreadArchivedStateError(f"thread is already archived: {thread_id}")
        self.close_writer(thread_id)
        target = archived_rollout_path(self.codex_home, path.name)
        self._move(thread_id, path, target)
        self._sync.moved(thread_id, target, archived_at_ms=now_ms())
        return target

    def delete(self, thread_id: str) -> None:
        """Remove the thread for good: its rollout (live or archived) and its index row."""
        thread_id = parse_thread_id(thread_id)
        path = self._require_rollout(thread_id)
        self.close_writer(thread_id)
        lock = WriterLock.acquire(self.codex_home, thread_id)  # never delete what another program writes
        try:
            path.unlink(missing_ok=True)
            compression.compressed_path(path).unlink(missing_ok=True)  # a copy Codex's compression left
        finally:
            lock.release()
        self._sync.deleted(thread_id)

    def unarchive(self, thread_id: str) -> JsonObj:
        """Move an archived rollout back to sessions/YYYY/MM/DD and return the Thread dict."""
        thread_id = parse_thread_id(thread_id)
        path = self._require_rollout(thread_id)
        if not is_archived_path(self.codex_home, path):
            raise ThreadArchivedStateError(f"thread is not archived: {thread_id}")
        target = live_rollout_path(self.codex_home, path.name)
        self._move(thread_id, path, target)
        self._sync.moved(thread_id, target, archived_at_ms=None)
        return self.read_thread(thread_id)

    def _move(self, thread_id: str, source: Path, target: Path) -> None:
        if target.exists():
            raise ThreadArchivedStateError(f"cannot move rollout of {thread_id}: {target} already exists")
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = WriterLock.acquire(self.codex_home, thread_id)  # refuses a thread open in Codex, too
        try:
            self._move_unlocked(thread_id, source, target)
        finally:
            lock.release()

    def _move_unlocked(self, thread_id: str, source: Path, target: Path) -> None:
        fd = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
        try:
            try:  # a live writer elsewhere would keep appending to the moved file
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ThreadLockedError(thread_id) from None
            os.rename(source, target)
        finally:
            os.close(fd)
        if self.fsync:
            fsync_dir(target.parent)
            fsync_dir(source.parent)

    # -- helpers ------------------------------------------------------------------------------------------

    def _with_history_base(self, records: list[r.Record]) -> list[r.Record]:
        return rollout_file.with_history_base(records, self.find_rollout)

    def _get_row(self, thread_id: str) -> IndexRow | None:
        try:
            return self._index.get(thread_id)
        except sqlite3.Error as exc:
            log.warning("thread index read failed, scanning rollouts instead: %s", exc)
            return None

    def _require_rollout(self, thread_id: str) -> Path:
        path = self.find_rollout(thread_id)
        if path is None:
            raise ThreadNotFoundError(thread_id)
        return path


def thread_from_row(row: IndexRow) -> JsonObj:
    """The wire Thread dict (status notLoaded, no turns) of an index row."""
    return build_thread(
        {**row.meta, "cwd": row.cwd, "model": row.model, "modelProvider": row.model_provider},
        thread_id=row.id,
        path=row.rollout_path,
        preview=row.preview,
        name=row.name,
        created_at_ms=row.created_at_ms,
        updated_at_ms=row.updated_at_ms,
    )
