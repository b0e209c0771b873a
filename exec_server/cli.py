"""``pycodex exec-server``: argument parsing and the async entry point (the lead wires the subcommand).

Flags mirror ``codex exec-server``: ``--listen ws://IP:PORT | stdio | stdio://`` (default
``ws://127.0.0.1:0``), ``--ws-auth capability-token`` with ``--ws-token-file`` or
``--ws-token-sha256``, ``--concurrent-requests``. The websocket URL is printed as the first stdout
line once listening, as Codex does. Extra knobs (not in Codex): process cap, detached-session TTL and ``--allow-unsandboxed`` (a start
whose sandbox policy cannot be applied here is refused by default; see ``exec_server.sandbox``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hashlib
import ipaddress
import logging
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from exec_server.remote.args import add_remote_arguments
from exec_server.session import DEFAULT_DETACHED_TTL_S, DEFAULT_MAX_PROCESSES, Limits, SessionRegistry
from exec_server.stdio_listener import serve_stdio
from exec_server.ws_listener import WsOptions, start_ws_server
from pycodex.logging_setup import configure_logging
from pycodex.platform.spawn import watch_children_with_pidfds
from pycodex.signals import quiet_interrupt, stop_on_signals

__all__ = ["UsageError", "add_exec_server_arguments", "run_exec_server"]

log = logging.getLogger("exec_server")


class UsageError(Exception):
    """Bad command-line options; the message says which and why."""


def add_exec_server_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``exec-server`` options (listen URL, websocket auth, limits, remote mode) to ``parser``."""
    parser.add_argument(
        "--listen",
        default="ws://127.0.0.1:0",
        metavar="URL",
        help="transport endpoint: ws://IP:PORT (default), stdio, stdio://",
    )
    parser.add_argument("--ws-auth", choices=["capability-token"], default=None)
    parser.add_argument("--ws-token-file", metavar="PATH", default=None)
    parser.add_argument("--ws-token-sha256", metavar="HEX", default=None)
    parser.add_argument("--concurrent-requests", type=int, default=1, metavar="COUNT")
    parser.add_argument(
        "--max-processes", type=int, default=DEFAULT_MAX_PROCESSES, help="running processes per session"
    )
    parser.add_argument(
        "--allow-unsandboxed",
        action="store_true",
        help="run commands whose sandbox policy cannot be applied here WITHOUT a sandbox",
    )
    parser.add_argument(
        "--detached-session-ttl",
        type=float,
        default=DEFAULT_DETACHED_TTL_S,
        metavar="SECONDS",
        help="how long a disconnected session stays resumable before its processes are killed",
    )
    add_remote_arguments(parser)


def _opt(options: argparse.Namespace, name: str, default: object = None) -> Any:
    # ``Any``: argparse's namespace holds whatever each option's ``type`` made of it.
    return getattr(options, name, default)


def _token_digest(options: argparse.Namespace) -> bytes | None:
    mode = _opt(options, "ws_auth")
    token_file, token_hex = _opt(options, "ws_token_file"), _opt(options, "ws_token_sha256")
    if mode is None:
        if token_file or token_hex:
            raise UsageError("--ws-token-file/--ws-token-sha256 need --ws-auth capability-token")
        return None
    if mode != "capability-token":
        raise UsageError(f"unsupported --ws-auth mode {mode!r}")
    if bool(token_file) == bool(token_hex):
        raise UsageError(
            "--ws-auth capability-token needs exactly one of --ws-token-file or --ws-token-sha256"
        )
    if token_hex:
        try:
            digest = bytes.fromhex(token_hex)
        except ValueError as exc:
            raise UsageError("--ws-token-sha256 must be 64 hex digits") from exc
        if len(digest) != 32:
            raise UsageError("--ws-token-sha256 must be 64 hex digits")
        return digest
    path = Path(token_file)
    if not path.is_absolute():
        raise UsageError("--ws-token-file must be an absolute path")
    try:
        token = path.read_text().strip()
    except OSError as exc:
        raise UsageError(f"cannot read --ws-token-file {path}: {exc.strerror}") from exc
    if not token:
        raise UsageError(f"--ws-token-file {path} is empty")
    return hashlib.sha256(token.encode()).digest()


def _is_loopback(host: str) -> bool:
    """A literal loopback address, or ``localhost``; any other name could resolve off the machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parse_listen(url: str) -> tuple[str, int] | None:
    """None for stdio, else (host, port)."""
    if url in ("stdio", "stdio://"):
        return None
    parts = urlsplit(url)
    if parts.scheme != "ws" or not parts.hostname or parts.port is None:
        raise UsageError(f"--listen must be ws://IP:PORT, stdio or stdio://, got {url!r}")
    if parts.path not in ("", "/"):
        raise UsageError(f"--listen must not carry a path, got {url!r}")
    return parts.hostname, parts.port


async def run_exec_server(options: argparse.Namespace) -> int:
    """Run until stdin closes (stdio) or SIGINT/SIGTERM (websocket). Returns the exit status."""
    try:
        listen = _parse_listen(_opt(options, "listen", "ws://127.0.0.1:0"))
        digest = _token_digest(options)
        if listen is not None and digest is None and not _is_loopback(listen[0]):
            # Anyone who reaches an unauthenticated exec-server runs commands as its user (Codex allows it).
            host, port = listen
            shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            raise UsageError(f"refusing to start non-loopback websocket listener {shown} without auth; "
                             "configure `--ws-auth capability-token`")
        concurrent = int(_opt(options, "concurrent_requests", 1))
        if concurrent < 1:
            raise UsageError("--concurrent-requests must be at least 1")
        limits = Limits(
            max_processes=int(_opt(options, "max_processes", DEFAULT_MAX_PROCESSES)),
            detached_ttl_s=float(_opt(options, "detached_session_ttl", DEFAULT_DETACHED_TTL_S)),
            allow_unsandboxed=bool(_opt(options, "allow_unsandboxed", False)),
        )
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # What start-up built (modules, classes, models) lives as long as the process: move it out of the
    # collector's reach, so the full collections that streamed output triggers stay short.
    gc.freeze()
    watch_children_with_pidfds()  # no reaper thread per running command
    registry = SessionRegistry(limits)
    if _opt(options, "remote"):
        # Only --remote needs the registry client, Noise and httpx (~0.2 s of imports).
        from exec_server.remote.cli import run_remote_executor
        from exec_server.remote.session_bridge import connection_session_factory

        try:
            return await run_remote_executor(
                options, connection_session_factory(registry, concurrent_requests=concurrent)
            )
        finally:
            await registry.shutdown()
    if listen is None:
        return await serve_stdio(registry, concurrent_requests=concurrent)
    host, port = listen
    ws_options = WsOptions(host, port, token_sha256=digest, concurrent_requests=concurrent)
    try:
        server = await start_ws_server(ws_options, registry)
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port}: {exc.strerror}", file=sys.stderr)
        return 1
    bound = next(iter(server.sockets)).getsockname()
    print(f"ws://{bound[0]}:{bound[1]}", flush=True)
    stop = stop_on_signals()
    try:
        await stop.wait()
    finally:
        server.close()
        await registry.shutdown()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), 5)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``pycodex exec-server`` with ``argv`` (the process's arguments by default); returns the exit
    status."""
    parser = argparse.ArgumentParser(prog="pycodex exec-server", description="Run the exec-server.")
    add_exec_server_arguments(parser)
    options = parser.parse_args(argv)
    configure_logging()  # PYCODEX_LOG, like every pycodex process
    # A Ctrl-C before the loop handles SIGINT itself: status 130, no traceback.
    return quiet_interrupt(lambda: asyncio.run(run_exec_server(options)))
