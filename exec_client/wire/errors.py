"""Exec-server specific JSON-RPC errors (codes beyond the shared core) and the client's exceptions.

Codes observed from Codex 0.169.0: -32004 for a missing path in fs methods, -32010 when a session to
resume is still attached to another connection. Everything else reuses the shared core's classes.
"""

from __future__ import annotations

from pycodex.json_types import JsonValue
from pycodex.jsonrpc.errors import PycodexRpcError, RpcError

__all__ = [
    "NOT_FOUND",
    "SESSION_ALREADY_ATTACHED",
    "ExecServerClosed",
    "ExecServerError",
    "NotFound",
    "SessionAlreadyAttached",
]

NOT_FOUND = -32004
SESSION_ALREADY_ATTACHED = -32010


class NotFound(RpcError):
    """The exec-server's not-found error (a path or a handle that does not exist)."""

    code = NOT_FOUND


class SessionAlreadyAttached(RpcError):
    """``initialize{resumeSessionId}`` named a session another connection holds."""

    code = SESSION_ALREADY_ATTACHED


class ExecServerError(PycodexRpcError):
    """The exec-server answered one of our requests with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: JsonValue = None) -> None:
        super().__init__(f"exec-server error {code}: {message}")
        self.code = code
        self.message = message
        self.data = data

    @classmethod
    def from_wire(cls, error: JsonValue) -> ExecServerError:
        """The error object of a response as an exception (a malformed one still yields one)."""
        if isinstance(error, dict):
            code = error.get("code")
            message = error.get("message")
            return cls(
                code if isinstance(code, int) else 0,
                message if isinstance(message, str) else repr(error),
                error.get("data"),
            )
        return cls(0, f"malformed error object: {error!r}")


class ExecServerClosed(PycodexRpcError):
    """The connection to the exec-server ended (or was never usable)."""
