"""Rewrite a rollout of a pycodex build before the Codex format into Codex's format, keeping the original.

pycodex reads such a file as it is (its record types are the store's logical ones), but Codex cannot, so the
store rewrites it the first time it opens it: every intact record is re-encoded with its ordinal and time,
the new file replaces the old one atomically (write, fsync, rename), and the original bytes are kept under
``CODEX_HOME/pycodex_migrated/`` with the same relative path. A file another writer holds is left alone
(and still read); a file with any damaged or incomplete line is never touched.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Final

from . import codex_format as fmt
from . import records as r
from .errors import ThreadLockedError
from .layout import fsync_dir, thread_id_of
from .rollout_file import encode_line, iter_records, parse_line
from .writer_lock import WriterLock

log = logging.getLogger(__name__)

BACKUP_DIR: Final = "pycodex_migrated"


def is_legacy_file(path: Path) -> bool:
    """Whether the rollout's first line is an intact session_meta in the pre-Codex pycodex shape."""
    try:
        with path.open("rb") as f:
            first = f.readline(1 << 20)
    except OSError:
        return False
    line = parse_line(first) if first.endswith(b"\n") else None
    return line is not None and line.type == r.SESSION_META and fmt.is_legacy_meta(line.payload)


def migrate_if_legacy(codex_home: Path, path: Path) -> Path | None:
    """Migrate ``path`` when it is a legacy rollout; returns where the original was kept, or None when
    nothing was done (already Codex's format, unreadable head, or another writer holds the thread)."""
    thread_id = thread_id_of(path)
    if thread_id is None or not is_legacy_file(path):
        return None
    try:
        lock = WriterLock.acquire(codex_home, thread_id)
    except ThreadLockedError:
        log.info("not migrating %s now: another writer holds thread %s", path, thread_id)
        return None
    try:
        return _rewrite(codex_home, path, thread_id)
    finally:
        lock.release()


def _damage(data: bytes) -> str | None:
    """Why the bytes cannot be migrated without losing some of them, or None when every line is intact."""
    if not data.endswith(b"\n"):
        return "its last line is incomplete"
    for number, raw in enumerate(data.split(b"\n")[:-1], start=1):
        if raw.strip() and parse_line(raw) is None:
            return f"line {number} is damaged"
    return None


def _rewrite(codex_home: Path, path: Path, thread_id: str) -> Path | None:
    data = path.read_bytes()
    damage = _damage(data)
    if damage is not None:  # never rewrite what cannot be read whole: pycodex still reads it as it is
        log.warning("not migrating %s to the Codex format: %s; the file is left as it is", path, damage)
        return None
    lines = []
    for rec in iter_records(data, path):
        at_ms = r.parse_timestamp_ms(rec.timestamp) or 0
        lines.append(encode_line(rec.ordinal, rec.type, rec.payload, at_ms, thread_id=thread_id))
    backup = codex_home / BACKUP_DIR / path.relative_to(codex_home)
    backup.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, backup)
    temporary = path.with_name(f".{path.name}.migrating")
    with temporary.open("wb") as out:
        out.write(b"".join(lines))
        out.flush()
        os.fsync(out.fileno())
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
    fsync_dir(path.parent)
    log.info("migrated rollout %s to the Codex format (original kept at %s)", path, backup)
    return backup
