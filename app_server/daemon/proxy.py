"""``pycodex app-server proxy``: stdio bytes to the control socket and back, as Codex's proxy does.

The bytes are not interpreted: the client speaks the socket's protocol (a WebSocket upgrade, then
frames) through stdin and stdout. Without ``--sock`` the daemon's control socket is used, and a daemon
is started when none answers there. The pipe is plain blocking I/O with ``selectors``: no event loop,
no server modules, so a client that spawns the proxy is answered within milliseconds of its start.
"""

from __future__ import annotations

import os
import selectors
import socket
from pathlib import Path

from pycodex.transport.unix_paths import connect_address

__all__ = ["connect_control_socket", "pipe"]

_CHUNK = 64 * 1024


def connect_control_socket(path: Path) -> socket.socket:
    """A connected unix socket to ``path``; OSError when nothing listens there."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(connect_address(path))
    except OSError:
        sock.close()
        raise
    return sock


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def pipe(sock: socket.socket, stdin: int = 0, stdout: int = 1) -> None:
    """Copy ``stdin`` to ``sock`` and ``sock`` to ``stdout`` until the socket side ends.

    End of stdin half-closes the socket (the server then finishes what it was sending, and closes);
    end of the socket ends the pipe, so the client sees EOF on the proxy's stdout.
    """
    selector = selectors.DefaultSelector()
    selector.register(stdin, selectors.EVENT_READ, "in")
    selector.register(sock, selectors.EVENT_READ, "sock")
    try:
        while True:
            for key, _ in selector.select():
                if key.data == "in":
                    data = os.read(stdin, _CHUNK)
                    if data:
                        sock.sendall(data)
                    else:
                        selector.unregister(stdin)
                        sock.shutdown(socket.SHUT_WR)
                    continue
                data = sock.recv(_CHUNK)
                if not data:
                    return
                _write_all(stdout, data)
    except (BrokenPipeError, ConnectionResetError):
        return
    finally:
        selector.close()
        sock.close()
