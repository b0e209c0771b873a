"""Where the shared reference material lives: ``../shared`` beside the checkout (as in CI), unless
``PYCODEX_SHARED_DIR`` says otherwise."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("PYCODEX_SHARED_DIR") or REPO_ROOT.parent / "shared")
TRANSCRIPTS = SHARED / "reference" / "transcripts"
