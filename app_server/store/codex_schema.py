"""Create a database of Codex's exactly as Codex 0.169 does, when pycodex writes threads in a CODEX_HOME where
Codex has not made it yet: ``thread_history_1.sqlite``, the history projection.

Codex reads the turns of a thread it has not loaded from it only (no rows: a thread with no turns), and does
not fill it from the rollouts until it loads the thread. The recording ``codex_schema_0169.json``
(scripts/capture_codex_schema.py, from the binary) holds every schema object in creation order and the
``_sqlx_migrations`` rows with Codex's checksums, so Codex takes the database for one it migrated itself.
The new file is built under a temporary name and linked into place, so a Codex starting at the same moment
either finds none (and makes its own) or finds a whole one.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from functools import cache
from pathlib import Path
from typing import Final

from pycodex.json_types import JsonObj

log = logging.getLogger(__name__)

RECORDING: Final = Path(__file__).with_name("codex_schema_0169.json")


@cache
def _recording() -> JsonObj:
    data: JsonObj = json.loads(RECORDING.read_text())
    return data


def ensure_database(codex_home: Path, name: str) -> bool:
    """Make ``codex_home/name`` as Codex would when it is missing; True when the database exists afterwards."""
    target = codex_home / name
    if target.exists():
        return True
    spec = _recording()["databases"].get(name)
    if spec is None:
        return False
    temporary = codex_home / f".{name}.{os.getpid()}.creating"
    try:
        temporary.unlink(missing_ok=True)
        conn = sqlite3.connect(temporary, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")  # as Codex's: kept in the file header
            conn.execute("BEGIN")
            for obj in spec["objects"]:
                conn.execute(obj["sql"])
            conn.executemany(
                "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) "
                "VALUES (?, ?, 1, ?, 0)",
                [(m["version"], m["description"], bytes.fromhex(m["checksum"])) for m in spec["migrations"]],
            )
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        try:
            os.link(temporary, target)  # fails if Codex (or another pycodex) made it meanwhile: theirs wins
        except FileExistsError:
            pass
    except (OSError, sqlite3.Error) as exc:
        log.warning("cannot create Codex's %s: %s", target, exc)
    finally:
        for leftover in (temporary, Path(f"{temporary}-wal"), Path(f"{temporary}-shm")):
            leftover.unlink(missing_ok=True)
    return target.exists()
