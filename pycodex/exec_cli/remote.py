"""``pycodex exec --remote ADDR``: the run's client on an app-server that is already running (Codex 0.171).

``ADDR`` is ``ws://host:port``, ``wss://host:port``, ``unix://`` (the control socket under this
``CODEX_HOME``: the daemon's) or ``unix://PATH``. ``--remote-auth-token-env VAR`` sends the token in
``VAR`` as a bearer token on the WebSocket upgrade. The wording of the errors is Codex's.
"""

from __future__ import annotations

import os
from pathlib import Path

from pycodex.exec_cli.inproc import TransportClient

__all__ = ["RemoteError", "check_remote_address", "connect_remote"]

_EXPECTED = "expected `ws://host:port`, `wss://host:port`, `unix://`, or `unix://PATH`"


class RemoteError(Exception):
    """An address that is not one, or a server that cannot be reached (exit status 1)."""


def check_remote_address(address: str) -> None:
    """Refuse an address that names no app-server endpoint (before the prompt is read, as Codex does)."""
    if address.startswith("unix://"):
        return
    if address.startswith(("ws://", "wss://")) and address.split("://", 1)[1].strip("/"):
        return
    raise RemoteError(f"invalid remote address `{address}`; {_EXPECTED}")


def _reason(exc: OSError) -> str:
    if exc.errno:
        return f"{os.strerror(exc.errno)} (os error {exc.errno})"
    return str(exc)


async def connect_remote(address: str, codex_home: Path, token_env: str | None = None) -> TransportClient:
    """An open, started client on the app-server at ``address``; RemoteError when it cannot connect."""
    from websockets.asyncio.client import connect, unix_connect
    from websockets.exceptions import InvalidHandshake

    from pycodex.transport.unix_paths import connect_address, default_socket_path
    from pycodex.transport.websocket import MAX_MESSAGE_BYTES, WebSocketTransport

    check_remote_address(address)
    headers: dict[str, str] = {}
    if token_env:
        token = os.environ.get(token_env)
        if not token:
            raise RemoteError(f"environment variable `{token_env}` (--remote-auth-token-env) is not set")
        headers["Authorization"] = f"Bearer {token}"
    try:
        if address.startswith("unix://"):
            path = Path(address[len("unix://"):]) if address != "unix://" else default_socket_path(codex_home)
            ws = await unix_connect(connect_address(path), uri="ws://localhost/", additional_headers=headers,
                                    max_size=MAX_MESSAGE_BYTES, compression=None, ping_interval=None, open_timeout=30)
        else:
            shown = address if address.endswith("/") else address + "/"
            ws = await connect(address, additional_headers=headers, max_size=MAX_MESSAGE_BYTES, compression=None,
                               ping_interval=None, open_timeout=30)
    except OSError as exc:
        where = address if address.startswith("unix://") else shown
        prefix = "" if address.startswith("unix://") else "IO error: "
        raise RemoteError(f"failed to connect to remote app server at `{where}`: {prefix}{_reason(exc)}") from None
    except (InvalidHandshake, TimeoutError) as exc:
        raise RemoteError(f"failed to connect to remote app server at `{address}`: {exc}") from None
    client = TransportClient(WebSocketTransport(ws))
    await client.start()
    return client
