"""Fill and repair the SQLite index from the rollouts (the source of truth)."""

from __future__ import annotations

import logging
from pathlib import Path

import zstandard

from pycodex.json_types import JsonObj

from . import compression, session_index
from .errors import StoreError
from .index import IndexRow, ThreadIndex, source_kind
from .layout import find_rollout_file, iter_rollout_files, thread_id_of
from .migrate import migrate_if_legacy
from .reconstruct import LoadedThread, reconstruct
from .rollout_file import read_records, with_history_base
from .thread_shape import THREAD_KEYS

log = logging.getLogger(__name__)


def row_from_meta(
    meta: JsonObj, *, path: Path, created_at_ms: int, archived: bool = False
) -> IndexRow:
    """An index row from a session_meta payload (the columns a new thread has)."""
    source = meta.get("source")
    return IndexRow(
        id=str(meta["id"]),
        rollout_path=str(path),
        created_at_ms=created_at_ms,
        updated_at_ms=created_at_ms,
        cwd=_str(meta.get("cwd")),
        name=meta.get("name") if isinstance(meta.get("name"), str) else None,
        model_provider=_str(meta.get("modelProvider")),
        model=meta.get("model") if isinstance(meta.get("model"), str) else None,
        source=source if isinstance(source, str) else "",
        source_kind=source_kind(source),
        archived=archived,
        forked_from_id=meta.get("forkedFromId") if isinstance(meta.get("forkedFromId"), str) else None,
        cli_version=_str(meta.get("cliVersion")),
        meta={k: v for k, v in meta.items() if k in THREAD_KEYS},  # not e.g. 17 kB of base instructions
    )


def row_from_loaded(loaded: LoadedThread) -> IndexRow:
    """An index row from a rebuilt thread: its metadata plus its updated time and preview."""
    assert loaded.rollout_path is not None
    row = row_from_meta(
        loaded.meta, path=loaded.rollout_path, created_at_ms=loaded.created_at_ms, archived=loaded.archived
    )
    row.updated_at_ms = loaded.updated_at_ms
    row.preview = loaded.preview
    row.name = loaded.name
    for key, column in (("cwd", "cwd"), ("model", "model"), ("modelProvider", "model_provider")):
        value = loaded.settings.get(key)
        if isinstance(value, str):
            setattr(row, column, value)
    if "effort" in loaded.settings:
        row.meta["reasoningEffort"] = loaded.settings["effort"]
    if loaded.archived:
        row.archived_at_ms = loaded.updated_at_ms
    return row


def row_from_file(codex_home: Path, path: Path, archived: bool) -> IndexRow | None:
    """The index row of one rollout file, or None (logged) when it cannot be read or names another thread.
    A Codex fork's row is that of its whole history (its preview is its parent's first message)."""
    try:
        records = with_history_base(read_records(path), lambda tid: find_rollout_file(codex_home, tid))
        # A compressed rollout is listed under its plain path, as Codex lists it (find_rollout restores it).
        loaded = reconstruct(records, path=compression.plain_path(path), archived=archived)
    except (OSError, StoreError, zstandard.ZstdError) as exc:
        log.warning("not indexing rollout %s: %s", path, exc)
        return None
    if thread_id_of(path) != loaded.thread_id:
        log.warning("not indexing rollout %s: its session_meta names thread %s", path, loaded.thread_id)
        return None
    return row_from_loaded(loaded)


def rebuild(index: ThreadIndex, codex_home: Path) -> int:
    """Replace the whole index with what the rollouts say. Returns the number of threads indexed.

    A rollout of a pycodex build before the Codex format is rewritten in it on the way (``migrate``): an
    index that predates the format is rebuilt, so every old rollout is migrated on the first start."""
    rows: dict[str, IndexRow] = {}
    names = session_index.read_names(codex_home)
    for path, archived in iter_rollout_files(codex_home):
        migrate_if_legacy(codex_home, path)
        row = _named(row_from_file(codex_home, path, archived), names)
        if row is not None and row.id not in rows:
            rows[row.id] = row
    index.replace_all(rows.values())
    log.info("rebuilt thread index %s from %d rollouts", index.db_path, len(rows))
    return len(rows)


def reconcile(index: ThreadIndex, codex_home: Path) -> None:
    """Cheap repair at startup: index rollouts the index does not know (e.g. the process died between creating
    the file and inserting the row, or the file was moved in by hand) and drop rows whose file is gone."""
    known = index.paths()
    seen: set[str] = set()
    names: dict[str, str | None] | None = None  # read once, and only when a rollout is new to the index
    for path, archived in iter_rollout_files(codex_home):
        thread_id = thread_id_of(path)
        if thread_id is None or thread_id in seen:
            continue
        seen.add(thread_id)
        if known.get(thread_id) == str(compression.plain_path(path)):  # a compressed one is indexed so
            continue
        migrate_if_legacy(codex_home, path)
        if names is None:
            names = session_index.read_names(codex_home)
        row = _named(row_from_file(codex_home, path, archived), names)
        if row is not None:
            index.upsert(row)
    for thread_id in known.keys() - seen:
        index.delete(thread_id)


def _named(row: IndexRow | None, names: dict[str, str | None]) -> IndexRow | None:
    if row is not None and row.id in names:  # Codex renames a thread in session_index.jsonl only
        row.name = names[row.id]
    return row


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""
