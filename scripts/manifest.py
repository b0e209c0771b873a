"""tests/data/MANIFEST.json: one sha256 per recorded file, so tests can tell a hand edit from a recording.

Every recorder in this folder ends by calling :func:`record_in_manifest` on what it wrote, or writes its JSON
recording with :func:`write_recording`, which does both (tests/app_server/test_schema_support.py checks that the
manifest and the files agree).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[1] / "tests" / "data"


def record_in_manifest(*written: Path) -> None:
    """Record the sha256 of each file in ``written`` (all under tests/data) in MANIFEST.json."""
    path = DATA_DIR / "MANIFEST.json"
    manifest = json.loads(path.read_text())
    for file in written:
        manifest["sha256"][file.resolve().relative_to(DATA_DIR).as_posix()] = hashlib.sha256(
            file.read_bytes()
        ).hexdigest()
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def write_recording(path: Path, data: Any, *, indent: int = 1) -> None:
    """Write ``data`` as a JSON recording at ``path`` (its folder made if missing) and record it in the manifest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent) + "\n")
    record_in_manifest(path)
