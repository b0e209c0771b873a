"""Make a recorded CODEX_HOME stable: ids, times, temp paths and long prose replaced by placeholders.

Used by scripts/capture_codex_storage.py when it writes tests/data/storage/, and by the codex-marked test
that re-runs a scenario and compares it with the recording. Everything here is a pure function of its inputs;
the id numbering lives in an :class:`Normalizer` made per scenario.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
ISO_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?")
DAY_DIR_RE = re.compile(r"sessions/\d{4}/\d{2}/\d{2}/")
DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
# Exec output carries a per-run chunk id and a wall time (unified exec's header lines).
VOLATILE_TEXT = (
    (re.compile(r"Chunk ID: \w+"), "Chunk ID: <CHUNK>"),
    (re.compile(r"Wall time: [\d.]+ seconds"), "Wall time: <N> seconds"),
    (re.compile(r"<timezone>[^<]*</timezone>"), "<timezone><TZ></timezone>"),
)
# Numbers under keys like these are clocks or durations (or process ids): they differ on every run.
VOLATILE_KEY_RE = re.compile(r"(?i)(time|_at$|at$|_ms$|ms$|duration|elapsed|^pid$|process_?id|secs|nanos|byte_offset)")
#: Strings longer than this are prose (Codex's instructions, developer messages): only their presence is kept.
LONG_TEXT = 240
#: sqlx's bookkeeping table in Codex's databases: one row per applied migration.
MIGRATIONS = "_sqlx_migrations"


class Normalizer:
    """Replaces the run's ids and paths with placeholders, numbering ids in order of first sight."""

    def __init__(self, paths: dict[str, str], *, whole: frozenset[str] = frozenset()) -> None:
        # Strings under the keys in ``whole`` are never cut to a length marker (error messages).
        self._whole = whole
        # Longest first, so a path inside another is not half replaced.
        self._paths = sorted(paths.items(), key=lambda kv: -len(kv[0]))
        self._ids: dict[str, str] = {}

    def text(self, value: str) -> str:
        """One string with paths, ids, times and volatile output lines replaced."""
        for path, label in self._paths:
            value = value.replace(path, label)
        value = DAY_DIR_RE.sub("sessions/YYYY/MM/DD/", value)
        value = UUID_RE.sub(lambda m: self._id(m.group(0)), value)
        value = ISO_RE.sub("<TS>", value)
        value = DATE_RE.sub("<DATE>", value)
        for pattern, replacement in VOLATILE_TEXT:
            value = pattern.sub(replacement, value)
        return value

    def _id(self, raw: str) -> str:
        key = raw.lower()
        if key not in self._ids:
            self._ids[key] = f"<ID{len(self._ids) + 1}>"
        return self._ids[key]

    def value(self, value: Any, key: str = "") -> Any:
        """A JSON value normalized throughout (keys are kept as they are: they are the facts recorded)."""
        if isinstance(value, dict):
            return {k: self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, (int, float)):
            return "<NUM>" if VOLATILE_KEY_RE.search(key) else value
        if isinstance(value, str):
            if value.isdigit() and VOLATILE_KEY_RE.search(key):
                return "<NUM>"  # a process id written as a string
            text = self.text(value)
            if len(text) > LONG_TEXT and key not in self._whole:
                return f"<TEXT {len(text) // 100 * 100}+ chars>"
            return text
        return value


def sqlite_files(home: Path) -> list[Path]:
    """The SQLite databases under ``home`` (not their -wal/-shm companions), by relative path."""
    found = [p for p in home.rglob("*") if p.is_file() and p.suffix in (".sqlite", ".db", ".sqlite3")]
    return sorted(found, key=lambda p: p.relative_to(home).as_posix())


def sqlite_schema(path: Path) -> dict[str, Any]:
    """A database's user_version, schema objects (sqlite_master) and each table's columns."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        objects = conn.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
        ).fetchall()
        tables: dict[str, Any] = {}
        migrations: list[dict[str, Any]] = []
        for kind, name, _tbl, _sql in objects:
            if kind == "table":
                columns = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
                if name == MIGRATIONS:
                    migrations = [
                        {"version": v, "description": d, "success": bool(ok)}
                        for v, d, ok in conn.execute(f"SELECT version, description, success FROM {MIGRATIONS}")
                    ]
                tables[name] = [
                    {"name": c[1], "type": c[2], "notnull": bool(c[3]), "default": c[4], "pk": c[5]} for c in columns
                ]
    return {
        "user_version": version,
        "objects": [{"type": t, "name": n, "table": tb, "sql": s} for t, n, tb, s in objects],
        "tables": tables,
        "migrations": migrations,
    }


def sqlite_rows(path: Path, norm: Normalizer, *, limit: int = 40) -> dict[str, Any]:
    """Each non-empty table's rows (at most ``limit``, plus the count), normalized, keyed by column name.

    The migrations table is left to :func:`sqlite_schema`: it is the same in every scenario."""
    out: dict[str, Any] = {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for name in names:
            if name.startswith("sqlite_") or name == MIGRATIONS:
                continue
            cursor = conn.execute(f'SELECT * FROM "{name}" LIMIT {limit}')
            columns = [d[0] for d in cursor.description]
            rows = [
                {c: norm.value(_cell(v), c) for c, v in zip(columns, row, strict=True)} for row in cursor.fetchall()
            ]
            count = conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0]
            if count:
                out[name] = {"count": count, "rows": rows}
    return out


def _cell(value: object) -> object:
    if isinstance(value, bytes):
        return f"<BLOB {len(value)} bytes>"
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:  # a JSON column (pycodex's meta_json, Codex's policies): recorded as the value it holds
            return {"json": json.loads(value)}
        except ValueError:
            return value
    return value
