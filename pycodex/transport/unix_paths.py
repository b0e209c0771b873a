"""Where Codex's unix sockets live and who may use them, without the WebSocket machinery.

``unix://`` means ``$CODEX_HOME/app-server-control/app-server-control.sock`` (folder 0700). The socket
itself lives in the runtime folder ``/tmp/codex-daemon-<uid>/`` (0700), named by the SHA-256 of the
requested path, which becomes a symlink to it: a socket address holds at most 108 bytes, a ``CODEX_HOME``
path can be longer. The proxy and the daemon commands import only this module, so they start fast.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
import stat
import struct
from pathlib import Path

__all__ = [
    "CONTROL_DIR", "CONTROL_SOCKET", "connect_address", "default_socket_path", "owner_only_dir", "peer_allowed", "peer_uid",
    "runtime_dir", "runtime_socket_path", "socket_answers",
]

CONTROL_DIR = "app-server-control"
CONTROL_SOCKET = "app-server-control.sock"
_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def default_socket_path(codex_home: Path) -> Path:
    """Where ``unix://`` listens: Codex's control socket under ``CODEX_HOME``."""
    return codex_home / CONTROL_DIR / CONTROL_SOCKET


def runtime_dir(uid: int | None = None) -> Path:
    """The owner-only folder that holds the real sockets (Codex's ``/tmp/codex-daemon-<uid>``)."""
    return Path("/tmp") / f"codex-daemon-{os.getuid() if uid is None else uid}"


def runtime_socket_path(alias: Path) -> Path:
    """The real socket behind ``alias``: the runtime folder, named by the SHA-256 of the alias path."""
    return runtime_dir() / hashlib.sha256(os.fsencode(alias)).hexdigest()


def owner_only_dir(path: Path) -> None:
    """Create ``path`` 0700, or check an existing one is ours and not a symlink; tighten its mode."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(errno.EPERM, f"{path} is not a folder owned by this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        path.chmod(0o700)


def connect_address(path: Path) -> str:
    """The address to connect to for ``path``: the socket a symlink names, since the link's own path may
    be longer than a socket address can hold (the reason for the link)."""
    return os.path.realpath(path) if path.is_symlink() else str(path)


def socket_answers(path: Path, timeout: float = 1.0) -> bool:
    """A server accepts connections at ``path`` (following a symlink)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout)
    try:
        probe.connect(connect_address(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a connected unix socket (SO_PEERCRED)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    return int(_UCRED.unpack(raw)[1])


def peer_allowed(uid: int, own_uid: int | None = None) -> bool:
    """Only the server's own user may connect: every other uid (root's included) is refused."""
    return uid == (os.getuid() if own_uid is None else own_uid)
