"""Entry point of ``pycodex app-server``: build the server, pick the transport, run until done.

Ordinary mistakes (a malformed ``--listen``, bad ``--ws-*`` flags, a port in use) end the process with
one stderr line, never a traceback. SIGTERM stops the server gracefully: running turns are interrupted
(recorded and announced as such), requests already read are answered, and the process exits 0.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

from app_server.lazy import LazyModule
from app_server.startup import EarlyStart, StartupError, answer_early, default_codex_home, read_opening
from pycodex.signals import Terminated, TermLatch, stop_on_signals
from pycodex.trace import trace_path

if TYPE_CHECKING:  # imported once a stdio client's initialize is answered (see app_server/startup.py)
    import argparse
    import asyncio
    from pathlib import Path

    from app_server import app as server_app
    from app_server.app import AppServer
    from pycodex import logging_setup
    from pycodex.trace import recorder as trace_recorder
    from pycodex.transport import stdio as transport_stdio
    from pycodex.transport import unix as transport_unix
    from pycodex.transport import websocket as transport_websocket
    from pycodex.transport import ws_auth
    from pycodex.transport.ws_auth import WsAuth
else:
    logging_setup = LazyModule("pycodex.logging_setup")
    server_app = LazyModule("app_server.app")
    trace_recorder = LazyModule("pycodex.trace.recorder")
    transport_stdio = LazyModule("pycodex.transport.stdio")
    transport_unix = LazyModule("pycodex.transport.unix")
    transport_websocket = LazyModule("pycodex.transport.websocket")
    ws_auth = LazyModule("pycodex.transport.ws_auth")

__all__ = ["run_app_server"]


#: How long SIGTERM waits for interrupted turns to record their end before the connection closes.
INTERRUPT_ON_STOP_S = 3.0
_STDIO = ("stdio", "stdio://", "")


class ListenError(Exception):
    """A ``--listen`` value that is not a URL we serve (exit status 2, like a usage error)."""


class UnixListen:
    """``unix://`` (Codex's control socket under ``CODEX_HOME``) or ``unix://PATH``."""

    __slots__ = ("path",)

    def __init__(self, path: str) -> None:
        self.path = path  # "" for the default location


#: ``--listen off``: no client transport at all; the process runs until SIGTERM (as Codex's does).
OFF = "off"
#: Where a server listens: None for stdio, an (IP, port) for WebSocket, a unix socket, or OFF.
Listen: TypeAlias = "tuple[str, int] | UnixListen | str | None"


def run_app_server(
    *,
    listen: str,
    config_overrides: Sequence[str] = (),
    strict_config: bool = False,
    exit_process: bool = True,
    ws_auth_args: argparse.Namespace | None = None,
    trace: str | None = None,
) -> int:
    """Serve until the transport ends; then, with ``exit_process``, end the process at once.

    Interpreter teardown of the loaded modules alone takes 50-200 ms, which would break the promise that
    stdin EOF ends an idle server within 100 ms; everything that matters (responses, rollouts, logs) is
    flushed by then, so the process leaves with ``os._exit`` after flushing the standard streams.
    """
    try:
        endpoint = _parse_listen(listen)
    except ListenError as exc:
        print(f"error: invalid value '{listen}' for '--listen <URL>': {exc}", file=sys.stderr)
        return 2
    term = TermLatch()
    try:
        auth = _listener_auth(endpoint, ws_auth_args)
        trace_file = trace_path(trace)
        early = EarlyStart(b"", None)
        if endpoint is None and trace_file is None and not config_overrides and not strict_config:
            with term.interrupting():  # only while nothing has been answered
                pending = read_opening(sys.stdin.fileno())
            early = answer_early(pending, sys.stdout.fileno(), default_codex_home(), os.environ)
        import asyncio  # stdlib, but not before the answer

        logging_setup.configure_logging()  # here too: `pycodex app-server` without flags comes straight from cli.main
        code = asyncio.run(_serve(endpoint, auth, config_overrides, strict_config, trace_file, early, term))
    except StartupError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Terminated:  # SIGTERM before the first line was read: nothing to answer
        code = 0
    if exit_process:
        _exit_now(code)
    return code


def _listener_auth(endpoint: Listen, ws_auth_args: argparse.Namespace | None) -> WsAuth:
    """The WebSocket auth the flags ask for (checked even on stdio, as always); StartupError if unusable."""
    if ws_auth_args is None and not isinstance(endpoint, tuple):
        return None
    try:
        auth = ws_auth.ws_auth_from_args(ws_auth_args) if ws_auth_args is not None else None
        if isinstance(endpoint, tuple):
            ws_auth.check_listener_auth(*endpoint, auth)
    except ws_auth.WsAuthConfigError as exc:
        raise StartupError(str(exc)) from None
    return auth


def _exit_now(code: int) -> None:
    import logging

    logging.getLogger(__name__).debug("app-server exiting with status %d", code)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _dump_tasks() -> None:
    """SIGUSR1: print every task's stack to stderr (debugging a stuck server)."""
    import asyncio

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


def _parse_listen(listen: str) -> Listen:
    """None for stdio, the (IP, port) of a WebSocket listener, a unix socket, or OFF."""
    if listen in _STDIO:
        return None
    if listen == OFF:
        return OFF
    if listen.startswith("unix://"):
        return UnixListen(listen[len("unix://"):])
    if not listen.startswith("ws://"):
        raise ListenError(
            f"unsupported --listen URL `{listen}`; expected `stdio://`, `unix://`, `unix://PATH`, `ws://IP:PORT`, or `off`"
        )
    try:
        return transport_websocket.parse_ws_listen(listen)
    except ValueError as exc:
        raise ListenError(str(exc)) from None


async def _serve(
    endpoint: Listen, auth: WsAuth, config_overrides: Sequence[str], strict_config: bool,
    trace: Path | None, early: EarlyStart, latch: TermLatch,
) -> int:
    try:
        with trace_recorder.tracing(trace, header=trace_recorder.server_header(default_codex_home(), config_overrides)):
            return await _serve_traced(endpoint, auth, config_overrides, strict_config, early, latch)
    except trace_recorder.TraceFileError as exc:
        raise StartupError(str(exc)) from None


async def _serve_traced(
    endpoint: Listen, auth: WsAuth, config_overrides: Sequence[str], strict_config: bool,
    early: EarlyStart, latch: TermLatch,
) -> int:
    import asyncio  # stdlib, but not before the answer
    import logging

    from pycodex.platform.spawn import watch_children_with_pidfds  # loaded at start-up anyway (AT_STARTUP)

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, _dump_tasks)
    watch_children_with_pidfds()  # local commands: no reaper thread per running process
    app = server_app.AppServer(codex_home=default_codex_home(), config_overrides=config_overrides,
                               strict_config=strict_config)
    if (tracer := trace_recorder.active_tracer()) is not None:
        # What a replay must reproduce that the header could not know: the provider the config resolved to
        # (the offline `scripted` model when no provider or key is configured) and the script it plays.
        provider = app.config.provider
        script = (provider.script or app.environ.get("PYCODEX_SCRIPT")) if provider.is_scripted else None
        tracer.meta(trace_recorder.server_note(provider.id, script))
    # SIGTERM first interrupts running turns while clients can still hear turn/completed, then stops
    # the transport; SIGINT keeps its default (Codex dies of it too). One that came during start-up counts.
    term = stop_on_signals([signal.SIGTERM])
    if latch.fired:
        term.set()
    stop = asyncio.Event()

    async def on_term() -> None:
        await term.wait()
        logging.getLogger(__name__).info("SIGTERM: interrupting running turns and stopping")
        await app.threads.interrupt_all(INTERRUPT_ON_STOP_S)
        stop.set()

    watcher = loop.create_task(on_term(), name="sigterm")
    try:
        if endpoint is None:
            await transport_stdio.serve_stdio(lambda outbox: app.connection(outbox, early_answer=early.answered), stop=stop,
                              pending=early.pending)
        elif isinstance(endpoint, tuple):
            await _serve_ws(app, endpoint, auth, stop)
        elif isinstance(endpoint, UnixListen):
            await _serve_unix(app, endpoint, stop)
        else:  # off: nothing to accept; live until SIGTERM
            print("app-server running with no listener (--listen off)", file=sys.stderr, flush=True)
            await stop.wait()
    finally:
        watcher.cancel()
        await app.shutdown()
    return 0


async def _serve_ws(app: AppServer, endpoint: tuple[str, int], auth: WsAuth, stop: asyncio.Event) -> None:
    host, port = endpoint

    def announce(server: object) -> None:
        for sock in getattr(server, "sockets", []):
            addr = sock.getsockname()
            print(f"app-server listening on ws://{addr[0]}:{addr[1]}", file=sys.stderr, flush=True)

    try:
        await transport_websocket.serve_websocket(app.connection, host, port, auth=auth, on_listening=announce, stop=stop)
    except OSError as exc:  # bind failures: address in use, address not on this host, permission
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise StartupError(f"cannot listen on {host}:{port}: {reason}") from None


async def _serve_unix(app: AppServer, endpoint: UnixListen, stop: asyncio.Event) -> None:
    from pathlib import Path

    default = not endpoint.path
    alias = transport_unix.default_socket_path(default_codex_home()) if default else Path(endpoint.path).absolute()

    def announce(server: object) -> None:
        print(f"app-server listening on unix://{alias}", file=sys.stderr, flush=True)

    try:
        await transport_unix.serve_unix_websocket(app.connection, alias, default=default, stop=stop,
                                                  on_listening=announce)
    except OSError as exc:  # a live server there, a path that is not a socket, permissions
        raise StartupError(f"cannot listen on unix://{alias}: {exc.strerror or exc}") from None
