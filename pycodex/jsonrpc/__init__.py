"""The sans-IO JSON-RPC core: message codec, LF framing and the correlating peer."""

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
