"""The unix-socket edge: WebSocket (an HTTP upgrade, then frames) over a unix socket, as Codex 0.169 serves it.

The layout (the default path, the runtime folder, the symlink) is in :mod:`pycodex.transport.unix_paths`.
The socket is 0600 and a client whose peer uid is not ours is refused before the upgrade (SO_PEERCRED), so
only the owner can ever reach the server. A socket left by a crash (a path that refuses connections) is
detected and replaced; a live one makes the new listener fail with "already in use".
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import stat
from collections.abc import Callable, Iterator
from http import HTTPStatus
from pathlib import Path

from websockets.asyncio.server import Server, ServerConnection, unix_serve
from websockets.http11 import Request, Response

from pycodex.transport.base import ConnectionHandler, serve_transport
from pycodex.transport.unix_paths import (
    default_socket_path,
    owner_only_dir,
    peer_allowed,
    peer_uid,
    runtime_dir,
    runtime_socket_path,
    socket_answers,
)
from pycodex.transport.websocket import MAX_MESSAGE_BYTES, WebSocketTransport
from pycodex.transport.ws_auth import has_origin, header_safe_logger

__all__ = ["SocketInUse", "default_socket_path", "prepare_socket_path", "serve_unix_websocket"]

logger = logging.getLogger(__name__)

class SocketInUse(OSError):
    """Another server already listens on the requested socket path."""


def prepare_socket_path(alias: Path, *, default: bool) -> Path:
    """Make room for a listener at ``alias`` and return the real socket path to bind.

    Raises ``SocketInUse`` when a live server answers there. A dead socket, a dangling or stale link is
    removed (a crash leaves those behind). The default location's folder is created owner-only.
    """
    if default:
        owner_only_dir(alias.parent)
    owner_only_dir(runtime_dir())
    if socket_answers(alias):
        raise SocketInUse(errno.EADDRINUSE, f"another app-server is listening on {alias}")
    real = runtime_socket_path(alias)
    for stale in (alias, real):
        if stale.is_symlink() or (stale.exists() and stat.S_ISSOCK(stale.lstat().st_mode)):
            logger.info("removing stale socket %s", stale)
            stale.unlink()
        elif stale.exists():
            raise FileExistsError(errno.EEXIST, f"{stale} exists and is not a socket")
    return real


def _gate(connection: ServerConnection, request: Request) -> Response | None:
    """Refuse other users' clients and browser requests before the upgrade."""
    sock = connection.transport.get_extra_info("socket")
    try:
        uid = peer_uid(sock)
    except (OSError, TypeError) as exc:
        logger.warning("refusing a unix-socket client whose credentials cannot be read: %s", exc)
        return connection.respond(HTTPStatus.FORBIDDEN, "")
    if not peer_allowed(uid):
        logger.warning("refusing a unix-socket client of uid %d", uid)
        return connection.respond(HTTPStatus.FORBIDDEN, "")
    if has_origin(request.headers):
        return connection.respond(HTTPStatus.FORBIDDEN, "")
    return None


def _announce_limit(connection: ServerConnection, request: Request, response: Response) -> Response:
    """Codex's unix listener names its message limit on the 101 (its ws:// listener does not)."""
    if response.status_code == HTTPStatus.SWITCHING_PROTOCOLS:
        response.headers["x-codex-websocket-max-unfragmented-message-bytes"] = str(MAX_MESSAGE_BYTES)
    return response


@contextlib.contextmanager
def _published(alias: Path, real: Path) -> Iterator[None]:
    """The alias symlink while serving; both names are removed when the listener ends."""
    os.symlink(real, alias)
    try:
        yield
    finally:
        for path in (alias, real):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


async def serve_unix_websocket(
    make_handler: ConnectionHandler,
    alias: Path,
    *,
    default: bool = False,
    stop: asyncio.Event | None = None,
    on_listening: Callable[[Server], None] | None = None,
) -> None:
    """Serve WebSocket connections at the unix socket ``alias`` until ``stop`` is set (or forever)."""

    async def handle(ws: ServerConnection) -> None:
        await serve_transport(make_handler, WebSocketTransport(ws, binary="drop"), flush_timeout=1.0)

    real = prepare_socket_path(alias, default=default)
    old_umask = os.umask(0o177)  # the socket is born 0600: no window in which others could connect
    try:
        server = await unix_serve(
            handle, str(real), process_request=_gate, process_response=_announce_limit, logger=header_safe_logger("websockets.server"),
            max_size=MAX_MESSAGE_BYTES, compression=None, max_queue=64,
        )
    finally:
        os.umask(old_umask)
    async with server:
        os.chmod(real, 0o600)
        with _published(alias, real):
            if on_listening is not None:
                on_listening(server)
            if stop is None:
                await asyncio.Future()
            else:
                await stop.wait()
