"""What a pycodex process keeps out of its imports, set up by each entry point before it imports the rest.

Only the standard library: ``pycodex app-server`` runs this before its ``initialize`` answer.
"""

from __future__ import annotations

import sys

__all__ = ["skip_httpx_cli"]


def skip_httpx_cli() -> None:
    """Keep httpx's command-line tool out of this process.

    ``import httpx`` imports its CLI (click, rich, pygments: ~0.1 s of CPU) whenever those are installed,
    and they are (uvicorn needs click; ``pycodex trace show`` uses rich). No pycodex process runs httpx's
    CLI, so its module is marked absent and httpx falls back to the stub it keeps for installs without it;
    rich itself stays importable."""
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: "absent" to the importer
