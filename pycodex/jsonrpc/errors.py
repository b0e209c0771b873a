"""JSON-RPC error codes and the error tree shared by every pycodex wire.

    PycodexRpcError                 base; never raised directly
    ├── LocalRpcError               we misused the peer (a bug on our side)
    └── RpcError                    an error that travels to the remote side as {"code", "message"}
        ├── InvalidRequest          -32600 (Codex's app-server uses it almost everywhere)
        ├── MethodNotFound          -32601
        ├── InvalidParams           -32602
        ├── InternalError           -32603
        └── ServerOverloaded        -32001

Handlers raise ``RpcError`` subclasses; the router is the single place that turns them into wire errors.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "SERVER_OVERLOADED",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LocalRpcError",
    "MethodNotFound",
    "PycodexRpcError",
    "RpcError",
    "ServerOverloaded",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_OVERLOADED = -32001


class PycodexRpcError(Exception):
    """Root of the JSON-RPC error tree."""


class LocalRpcError(PycodexRpcError):
    """The local side broke a peer invariant, e.g. answered one request twice."""


class RpcError(PycodexRpcError):
    """An error that is sent to the remote side. ``code`` is a class attribute unless overridden."""

    code: ClassVar[int] = INVALID_REQUEST

    def __init__(self, message: str, *, code: int | None = None, data: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.wire_code = self.code if code is None else code
        self.data = data

    def to_wire(self) -> dict[str, object]:
        """The JSON-RPC error object, members in Codex's order (code, data, message)."""
        wire: dict[str, object] = {"code": self.wire_code}
        if self.data is not None:  # Codex's field order: code, data, message
            wire["data"] = self.data
        wire["message"] = self.message
        return wire


class InvalidRequest(RpcError):
    """-32600: the request is not acceptable now (a handshake not done, a lifecycle rule broken)."""

    code = INVALID_REQUEST


class MethodNotFound(RpcError):
    """-32601: no such method on this server."""

    code = METHOD_NOT_FOUND


class InvalidParams(RpcError):
    """-32602: the params do not match the method's model (the text is serde's)."""

    code = INVALID_PARAMS


class InternalError(RpcError):
    """-32603: a failure on our side while handling the request."""

    code = INTERNAL_ERROR


class ServerOverloaded(RpcError):
    """-32001: the inbound request queue is full; the client may retry."""

    code = SERVER_OVERLOADED

    def __init__(self, message: str = "Server overloaded; retry later.") -> None:
        super().__init__(message)
