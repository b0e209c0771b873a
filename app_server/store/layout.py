"""Where rollouts live under CODEX_HOME, and how their file names encode creation time and thread id."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

SESSIONS_DIR = "sessions"
ARCHIVED_DIR = "archived_sessions"
INDEX_FILE = "state_pycodex.sqlite"

_NAME_RE = re.compile(
    r"^rollout-(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})T\d{2}-\d{2}-\d{2}-"
    r"(?P<id>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl(?:\.zst)?$"  # .zst: compressed (store.compression)
)


def rollout_file_name(thread_id: str, created_at_ms: int) -> str:
    # Local time, like the reference (it falls back to UTC only when the offset is unknown).
    """``rollout-<local time>-<thread id>.jsonl``, the reference's file name for a new rollout."""
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.localtime(created_at_ms / 1000))
    return f"rollout-{stamp}-{thread_id}.jsonl"


def live_rollout_path(codex_home: Path, file_name: str) -> Path:
    """`sessions/YYYY/MM/DD/<file_name>`, the day taken from the file name's timestamp."""
    match = _NAME_RE.match(file_name)
    if match is None:
        raise ValueError(f"not a rollout file name: {file_name!r}")
    return codex_home / SESSIONS_DIR / match["y"] / match["m"] / match["d"] / file_name


def archived_rollout_path(codex_home: Path, file_name: str) -> Path:
    """Where an archived rollout named ``file_name`` lives."""
    return codex_home / ARCHIVED_DIR / file_name


def thread_id_of(path: Path) -> str | None:
    """The thread id in a rollout file name (lower case), or None when the name is not a rollout's."""
    match = _NAME_RE.match(path.name)
    return match["id"].lower() if match else None


def is_archived_path(codex_home: Path, path: Path) -> bool:
    """Whether ``path`` is in the archived-sessions folder."""
    return path.parent == codex_home / ARCHIVED_DIR


def iter_rollout_files(codex_home: Path) -> Iterator[tuple[Path, bool]]:
    """Every rollout file as (path, archived). Bounded by the directory depth of the layout."""
    sessions = codex_home / SESSIONS_DIR
    for year in _subdirs(sessions):
        for month in _subdirs(year):
            for day in _subdirs(month):
                for path in _files(day):
                    yield path, False
    for path in _files(codex_home / ARCHIVED_DIR):
        yield path, True


def find_rollout_file(codex_home: Path, thread_id: str) -> Path | None:
    """Scan the layout for a thread's rollout (the slow path when the index does not know it)."""
    for path, _archived in iter_rollout_files(codex_home):
        if thread_id_of(path) == thread_id:
            return path
    return None


def fsync_dir(path: Path) -> None:
    """Make a created/renamed directory entry durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _subdirs(path: Path) -> list[Path]:
    try:
        return sorted(Path(e.path) for e in os.scandir(path) if e.is_dir(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError):
        return []


def _files(path: Path) -> list[Path]:
    try:
        entries = list(os.scandir(path))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(Path(e.path) for e in entries if e.is_file() and _NAME_RE.match(e.name))
