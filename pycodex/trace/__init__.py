"""Protocol traces: recording (``--trace`` / ``$PYCODEX_TRACE``), and ``pycodex trace show|html|replay``.

The hooks in the transports and clients import only :mod:`pycodex.trace.recorder` (and
:mod:`pycodex.trace.hooks`); the readers are imported by the ``trace`` subcommand alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["ENV_VAR", "trace_path"]

#: Clients that spawn the server (and cannot add ``--trace``) set this to the trace file's path.
ENV_VAR = "PYCODEX_TRACE"


def trace_path(explicit: str | None, environ: Mapping[str, str] | None = None) -> Path | None:
    """The trace file ``--trace`` names, else ``$PYCODEX_TRACE``, else None (here, not in the recorder, so
    a server can ask before it imports the recorder)."""
    value = explicit or (os.environ if environ is None else environ).get(ENV_VAR, "")
    return Path(value) if value else None
