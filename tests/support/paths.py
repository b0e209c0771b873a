"""Where test data lives.

Everything the tests compare against is checked in under ``tests/data`` (recorded from Codex 0.169.0 by
``scripts/record_reference.py``). Only the shared real-client scripts stay outside the repository: ``../shared``
beside the checkout unless ``PYCODEX_SHARED_DIR`` says otherwise; tests that need it skip when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "tests" / "data"
TRANSCRIPTS = DATA / "transcripts"
SCHEMA_SNAPSHOT = DATA / "schema"
MANIFEST = DATA / "MANIFEST.json"
SHARED = Path(os.environ.get("PYCODEX_SHARED_DIR") or REPO_ROOT.parent / "shared")
