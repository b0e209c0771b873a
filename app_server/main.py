"""Entry point of ``pycodex app-server``: build the server, pick the transport, run until done."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Sequence

from app_server.app import AppServer, StartupError, default_codex_home
from pycodex.transport.stdio import serve_stdio
from pycodex.transport.websocket import parse_ws_listen, serve_websocket

__all__ = ["run_app_server"]

logger = logging.getLogger(__name__)


def run_app_server(
    *,
    listen: str,
    config_overrides: Sequence[str] = (),
    strict_config: bool = False,
    exit_process: bool = True,
) -> int:
    """Serve until the transport ends; then, with ``exit_process``, end the process at once.

    Interpreter teardown of the loaded modules alone takes 50-200 ms, which would break the promise that
    stdin EOF ends an idle server within 100 ms; everything that matters (responses, rollouts, logs) is
    flushed by then, so the process leaves with ``os._exit`` after flushing the standard streams.
    """
    try:
        code = asyncio.run(_serve(listen, config_overrides, strict_config))
    except StartupError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    if exit_process:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    logger.debug("app-server exiting with status %d", code)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _dump_tasks() -> None:
    """SIGUSR1: print every task's stack to stderr (debugging a stuck server)."""
    for task in asyncio.all_tasks():
        print(f"--- {task.get_name()}", file=sys.stderr)
        awaitable: object = task.get_coro()
        for _ in range(64):  # walk the await chain down to the innermost frame
            frame = getattr(awaitable, "cr_frame", None) or getattr(awaitable, "ag_frame", None)
            if frame is not None:
                print(
                    f"  {frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}", file=sys.stderr
                )
            awaitable = getattr(awaitable, "cr_await", None) or getattr(awaitable, "ag_await", None)
            if awaitable is None:
                break
    sys.stderr.flush()


async def _serve(listen: str, config_overrides: Sequence[str], strict_config: bool) -> int:
    import signal

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, _dump_tasks)
    if listen in ("stdio", "stdio://", ""):
        app = AppServer(
            codex_home=default_codex_home(), config_overrides=config_overrides, strict_config=strict_config
        )
        try:
            await serve_stdio(app.connection)
        finally:
            await app.shutdown()
        return 0
    if listen.startswith("ws://"):
        try:
            host, port = parse_ws_listen(listen)
        except ValueError as exc:
            raise StartupError(str(exc)) from None
        app = AppServer(
            codex_home=default_codex_home(), config_overrides=config_overrides, strict_config=strict_config
        )

        def announce(server: object) -> None:
            sockets = getattr(server, "sockets", [])
            for sock in sockets:
                addr = sock.getsockname()
                print(f"app-server listening on ws://{addr[0]}:{addr[1]}", file=sys.stderr, flush=True)

        try:
            await serve_websocket(app.connection, host, port, on_listening=announce)
        finally:
            await app.shutdown()
        return 0
    raise StartupError(f"unsupported --listen value {listen!r}: use stdio:// or ws://IP:PORT")
