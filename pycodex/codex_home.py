"""The check Codex makes of ``$CODEX_HOME`` before anything runs: a set value must name an existing folder.

A typo in ``CODEX_HOME`` would otherwise create a fresh, empty home (no config, no login, no sessions) and
run on it. Codex 0.169 refuses to start instead; pycodex does the same, in one line, exit status 1:
``Error finding codex home: CODEX_HOME points to "X", but that path does not exist`` (``exec``,
``mcp-server`` and the other commands), ``Error: CODEX_HOME points to ...`` (``app-server``, where Codex adds
a backtrace). An unset or empty ``CODEX_HOME`` means the default home, which is created when missing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["HOME_ERROR_PREFIX", "codex_home_problem"]

#: How `codex exec` and `codex mcp-server` introduce the problem.
HOME_ERROR_PREFIX = "Error finding codex home: "


def codex_home_problem(env: Mapping[str, str] | None = None) -> str | None:
    """What is wrong with a set ``CODEX_HOME`` (Codex's text), or None when it is unset or usable."""
    value = (os.environ if env is None else env).get("CODEX_HOME")
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.exists():
        return f'CODEX_HOME points to "{value}", but that path does not exist'
    if not path.is_dir():
        return f'CODEX_HOME points to "{value}", but that path is not a directory'
    return None
