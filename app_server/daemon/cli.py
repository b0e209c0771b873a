"""The ``app-server daemon`` and ``app-server proxy`` commands: arguments, JSON output, exit status.

Like Codex, every daemon command prints exactly one JSON object on stdout on success; errors are one
``Error: ...`` line on stderr and exit status 1. The arguments are parsed by hand: the proxy is spawned by
clients for every connection, and argparse alone would cost it more than its whole pipe set-up.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["run_daemon_command", "run_proxy"]

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
    """``$CODEX_HOME``, else ``~/.pycodex`` (as app_server.startup has it: importing that module would
    load the JSON-RPC codec, a third of the proxy's start-up)."""
    raw = os.environ.get("CODEX_HOME")
    return (Path(raw) if raw else Path.home() / ".pycodex").absolute()


def _options(argv: Sequence[str], valued: frozenset[str]) -> tuple[list[str], dict[str, str]]:
    """Positionals and the last value of each valued option (``-c``/``--enable``/``--disable`` are
    accepted and ignored, as the daemon starts with the home's own config)."""
    words: list[str] = []
    values: dict[str, str] = {}
    items = iter(argv)
    for word in items:
        name, eq, inline = word.partition("=")
        if name in valued or name in ("-c", "--config", "--enable", "--disable"):
            value = inline if eq else next(items, None)
            if value is None:
                raise ValueError(f"a value is required for '{name}'")
            values[name] = value
        elif word.startswith("-"):
            raise ValueError(f"unexpected argument '{word}'")
        else:
            words.append(word)
    return words, values


def run_daemon_command(argv: Sequence[str]) -> int:
    """``pycodex app-server daemon COMMAND``: start, stop, restart, status (pycodex's name) and version."""
    if "-h" in argv or "--help" in argv:
        print(f"{_USAGE}\n\nManage the local app-server daemon (one JSON object on stdout per command).")
        return 0
    try:
        words, _ = _options(argv, frozenset())
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


def run_proxy(argv: Sequence[str]) -> int:
    """``pycodex app-server proxy [--sock PATH]``: pipe stdio to the socket (starting the daemon if needed)."""
    from app_server.daemon.proxy import connect_control_socket, pipe

    if "-h" in argv or "--help" in argv:
        print("usage: pycodex app-server proxy [--sock SOCKET_PATH]\n\n"
              "Proxy stdio bytes to the running app-server control socket (the daemon's is started if none runs).")
        return 0
    try:
        words, values = _options(argv, frozenset({"--sock"}))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if words:
        print(f"error: unexpected argument '{words[0]}'", file=sys.stderr)
        return 2
    path = Path(values["--sock"]) if "--sock" in values else None
    try:
        if path is not None:
            sock = connect_control_socket(path)
        else:
            sock = _connect_or_start()
    except OSError as exc:
        print(f"Error: failed to connect to {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # the daemon could not start (DaemonError): say why, no traceback
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    pipe(sock)
    return 0


def _connect_or_start() -> socket.socket:
    from app_server.daemon.proxy import connect_control_socket
    from pycodex.transport.unix_paths import default_socket_path

    home = default_codex_home()
    try:
        return connect_control_socket(default_socket_path(home))
    except OSError:
        pass
    from app_server.daemon import lifecycle

    lifecycle.start(lifecycle.Layout(home))  # nothing listens: start the daemon (idempotent, locked)
    return connect_control_socket(default_socket_path(home))
