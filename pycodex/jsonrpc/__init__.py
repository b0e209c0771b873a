"""The sans-IO JSON-RPC core: codec, LF framing, the correlating peer, the serde-error translator and
the generic ``Router`` (``pycodex.jsonrpc.router``) both servers build on."""

from pycodex.jsonrpc.codec import (
    ErrorReceived,
    Message,
    NotificationReceived,
    RequestReceived,
    ResponseReceived,
    Violation,
    classify,
    encode,
)
from pycodex.jsonrpc.errors import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    LocalRpcError,
    MethodNotFound,
    RpcError,
    ServerOverloaded,
)
from pycodex.jsonrpc.framing import DEFAULT_MAX_LINE_BYTES, LineBuffer, OverlongLine
from pycodex.jsonrpc.peer import RpcPeer, id_key

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "ErrorReceived",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LineBuffer",
    "LocalRpcError",
    "Message",
    "MethodNotFound",
    "NotificationReceived",
    "OverlongLine",
    "RequestReceived",
    "ResponseReceived",
    "RpcError",
    "RpcPeer",
    "ServerOverloaded",
    "Violation",
    "classify",
    "encode",
    "id_key",
]
