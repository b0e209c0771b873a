"""The unix-socket edge: WebSocket (an HTTP upgrade, then frames) over a unix socket, as Codex 0.169 serves it.

Layout, as Codex lays it out: ``unix://`` means ``$CODEX_HOME/app-server-control/app-server-control.sock``
(folder 0700). The socket itself lives in the runtime folder ``/tmp/codex-daemon-<uid>/`` (0700), named by
the SHA-256 of the requested path, and the requested path is a symlink to it: a socket address holds at most
108 bytes, a ``CODEX_HOME`` path can be longer. The socket is 0600 and a client whose peer uid is not ours is
refused before the upgrade (SO_PEERCRED), so only the owner can ever reach the server.

A socket left by a crash (a path that refuses connections) is detected and replaced; a live one makes
the new listener fail with "already in use".
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import logging
import os
import socket
import stat
import struct
from collections.abc import Callable, Iterator
from http import HTTPStatus
from pathlib import Path

from websockets.asyncio.server import Server, ServerConnection, unix_serve
from websockets.http11 import Request, Response

from pycodex.transport.base import ConnectionHandler, serve_transport
from pycodex.transport.websocket import MAX_MESSAGE_BYTES, WebSocketTransport
from pycodex.transport.ws_auth import has_origin, header_safe_logger

__all__ = [
    "SocketInUse", "default_socket_path", "peer_allowed", "peer_uid", "prepare_socket_path", "runtime_dir",
    "runtime_socket_path", "serve_unix_websocket", "socket_answers",
]

logger = logging.getLogger(__name__)

CONTROL_DIR = "app-server-control"
CONTROL_SOCKET = "app-server-control.sock"
_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class SocketInUse(OSError):
    """Another server already listens on the requested socket path."""


def default_socket_path(codex_home: Path) -> Path:
    """Where ``unix://`` listens: Codex's control socket under ``CODEX_HOME``."""
    return codex_home / CONTROL_DIR / CONTROL_SOCKET


def runtime_dir(uid: int | None = None) -> Path:
    """The owner-only folder that holds the real sockets (Codex's ``/tmp/codex-daemon-<uid>``)."""
    return Path("/tmp") / f"codex-daemon-{os.getuid() if uid is None else uid}"


def runtime_socket_path(alias: Path) -> Path:
    """The real socket behind ``alias``: the runtime folder, named by the SHA-256 of the alias path."""
    return runtime_dir() / hashlib.sha256(os.fsencode(alias)).hexdigest()


def _owner_only_dir(path: Path) -> None:
    """Create ``path`` 0700, or check an existing one is ours and not a symlink; tighten its mode."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(errno.EPERM, f"{path} is not a folder owned by this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        path.chmod(0o700)


def socket_answers(path: Path, timeout: float = 1.0) -> bool:
    """A server accepts connections at ``path`` (following a symlink)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def prepare_socket_path(alias: Path, *, default: bool) -> Path:
    """Make room for a listener at ``alias`` and return the real socket path to bind.

    Raises ``SocketInUse`` when a live server answers there. A dead socket, a dangling or stale link is
    removed (a crash leaves those behind). The default location's folder is created owner-only.
    """
    if default:
        _owner_only_dir(alias.parent)
    _owner_only_dir(runtime_dir())
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


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected unix socket (SO_PEERCRED)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    return int(_UCRED.unpack(raw)[1])


def peer_allowed(uid: int, own_uid: int | None = None) -> bool:
    """Only the server's own user may connect (root's clients are not let in to another user's server)."""
    return uid == (os.getuid() if own_uid is None else own_uid)


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
            handle, str(real), process_request=_gate, logger=header_safe_logger("websockets.server"),
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
