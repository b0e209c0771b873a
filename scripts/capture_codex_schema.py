"""Record the SQLite database of Codex's that pycodex may create before Codex has: its schema objects in
creation order and its sqlx migration rows (checksums included), as the Codex binary makes them.

Codex opens a database whose recorded migrations match its own as up to date, so a database built from this
recording is one Codex 0.169 accepts as its own (0.171 adds its newer migrations on top, as it would to one
0.169 made). Writes app_server/store/codex_schema_0169.json.

    python scripts/capture_codex_schema.py PATH/TO/codex
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.capture_codex_storage import ROOT, SCENARIOS, _config, _drive

OUT = ROOT / "app_server" / "store" / "codex_schema_0169.json"
DATABASES = ("thread_history_1.sqlite",)  # state_5 is never made by pycodex (see codex_state)


def _dump(path: Path) -> dict[str, Any]:
    conn = sqlite3.connect(path)
    try:
        objects = [{"type": t, "name": n, "sql": s} for t, n, s in conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
        migrations = [{"version": v, "description": d, "checksum": c.hex()} for v, d, c in conn.execute(
            "SELECT version, description, checksum FROM _sqlx_migrations ORDER BY version")]
    finally:
        conn.close()
    return {"objects": objects, "migrations": migrations}


def main(codex: str) -> None:
    """Run one plain Codex turn in a fresh CODEX_HOME and record its databases' schemas."""
    with tempfile.TemporaryDirectory() as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps(SCENARIOS[0].responses))
        fake = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert fake.stdout is not None
            (home / "config.toml").write_text(_config(int(fake.stdout.readline()), []))
            asyncio.run(_drive(SCENARIOS[0], [codex, "app-server"], home, work))
        finally:
            assert fake.stdin is not None
            fake.stdin.close()
            fake.wait(10)
        version = subprocess.run([codex, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]
        recording = {"codex_version": version, "databases": {db: _dump(home / db) for db in DATABASES}}
    OUT.write_text(json.dumps(recording, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
