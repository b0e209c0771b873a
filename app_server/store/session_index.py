"""``CODEX_HOME/session_index.jsonl``: where Codex keeps thread names, one appended line per rename.

Each line is ``{"id": <thread id>, "thread_name": <name>, "updated_at": <ISO-8601 UTC>}`` and the last line of
an id wins (as recorded from Codex 0.169). Codex takes ``flock`` on ``session_index.jsonl.lock`` around its
appends; so does this module. pycodex also records the name in the rollout (a ``thread_name_updated`` event),
so either file alone is enough for pycodex, and Codex finds the name where it looks.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from pathlib import Path
from typing import Final

from . import records as r

log = logging.getLogger(__name__)

INDEX_FILE: Final = "session_index.jsonl"
LOCK_FILE: Final = "session_index.jsonl.lock"


def append_name(codex_home: Path, thread_id: str, name: str | None, now_ms: int) -> None:
    """Record ``name`` (None clears it, written as "") as the thread's current name."""
    line = {"id": thread_id, "thread_name": name or "", "updated_at": r.utc_timestamp(now_ms)}
    data = (json.dumps(line, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")
    lock_fd = os.open(codex_home / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)  # held by Codex only for one append
        fd = os.open(codex_home / INDEX_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, data)  # one short O_APPEND write: never interleaved with another writer's line
        finally:
            os.close(fd)
    finally:
        os.close(lock_fd)


def read_names(codex_home: Path) -> dict[str, str | None]:
    """Every thread's latest name in the index (None where it was cleared); {} when there is no index.
    Damaged lines are skipped: the index is Codex's, and a bad line must not hide the others."""
    try:
        data = (codex_home / INDEX_FILE).read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        log.warning("cannot read %s: %s", codex_home / INDEX_FILE, exc)
        return {}
    names: dict[str, str | None] = {}
    for raw in data.splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            name = entry.get("thread_name")
            names[entry["id"].lower()] = name if isinstance(name, str) and name else None
    return names
