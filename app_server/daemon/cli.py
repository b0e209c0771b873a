"""The ``app-server daemon`` commands: arguments, JSON output, exit status.

Like Codex, every daemon command prints exactly one JSON object on stdout on success; errors are one
``Error: ...`` line on stderr and exit status 1. The arguments are parsed by hand, with the parser of
``app-server proxy`` (:func:`app_server.daemon.proxy.options`): clients spawn a proxy for every connection,
and argparse alone would cost it more than its whole pipe set-up.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from app_server.daemon.proxy import codex_home, options

__all__ = ["default_codex_home", "run_daemon_command"]

DAEMON_COMMANDS = ("start", "stop", "restart", "status", "version")
#: Codex's daemon commands that need what pycodex does not have: its standalone managed install (fetched and
#: updated from the network) and its remote-control service. They fail with the reason, not a usage error.
CODEX_ONLY = {
    "bootstrap": "installs Codex's standalone managed package and its updater; pycodex has no managed install "
                 "(use `pycodex app-server daemon start`)",
    "update": "updates Codex's managed daemon package; pycodex has no managed install (upgrade pycodex itself, "
              "then `pycodex app-server daemon restart`)",
    "enable-remote-control": "needs Codex's remote-control service (a ChatGPT account); pycodex has none",
    "disable-remote-control": "needs Codex's remote-control service (a ChatGPT account); pycodex has none",
}
_USAGE = "usage: pycodex app-server daemon {start,stop,restart,status,version}"


def default_codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.pycodex``, absolute (as app_server.startup has it: importing that module
    would load the JSON-RPC codec)."""
    return Path(codex_home())


def run_daemon_command(argv: Sequence[str]) -> int:
    """``pycodex app-server daemon COMMAND``: start, stop, restart, status (pycodex's name) and version."""
    if "-h" in argv or "--help" in argv:
        print(f"{_USAGE}\n\nManage the local app-server daemon (one JSON object on stdout per command).")
        return 0
    try:
        words, _ = options(argv, frozenset())
    except ValueError as exc:
        print(f"error: {exc}\n{_USAGE}", file=sys.stderr)
        return 2
    if len(words) == 1 and words[0] in CODEX_ONLY:
        print(f"Error: `daemon {words[0]}` {CODEX_ONLY[words[0]]}", file=sys.stderr)
        return 1
    if len(words) != 1 or words[0] not in DAEMON_COMMANDS:
        print(_USAGE, file=sys.stderr)
        return 2
    from app_server.daemon import lifecycle

    layout = lifecycle.Layout(default_codex_home())
    command = words[0]
    try:
        if command == "start":
            report = lifecycle.start(layout)
        elif command == "stop":
            report = lifecycle.stop(layout)
        elif command == "restart":
            lifecycle.stop(layout)
            report = lifecycle.start(layout)
        else:
            report = lifecycle.status(layout)
    except (lifecycle.DaemonError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(report, separators=(",", ":")), flush=True)
    return 0
