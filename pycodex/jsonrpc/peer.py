"""The sans-IO JSON-RPC peer shared by the app-server and the exec-server.

It owns the two correlation tables of a connection and nothing else: no sockets, no clock, no tasks.

* inbound in-flight: every request received must be answered exactly once. ``respond``/``respond_error``
  check that, so a second answer (or an answer to a request never received) raises ``LocalRpcError``.
  Foreign ids may be any JSON value; they are matched by value and echoed verbatim.
* outbound pending: ``request`` mints integer ids from 0 and remembers the method; a response to one
  of them is reported with that method, a response to anything else with ``method=None`` (a stray).

Usage at an edge (stdio, WebSocket): ``msg = peer.receive(line)``, dispatch on the message type, and
write the bytes returned by ``respond``/``notify``/``request`` followed by the wire's frame delimiter.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pycodex.json_types import JsonObj, JsonValue
from pycodex.jsonrpc.codec import (
    ErrorReceived,
    Message,
    RequestReceived,
    ResponseReceived,
    classify,
    encode,
)
from pycodex.jsonrpc.errors import LocalRpcError, RpcError

__all__ = ["ErrorWire", "RpcPeer", "id_key"]

#: Turns an error into the JSON-RPC error object sent for it ({"code", "data"?, "message"}).
ErrorWire = Callable[[RpcError], JsonObj]


def id_key(request_id: JsonValue) -> str:
    """A hashable identity for a JSON id value (1 and 1.0 differ on the wire, so keep the text)."""
    return json.dumps(request_id, sort_keys=True, separators=(",", ":"))


class RpcPeer:
    """Correlate requests and responses for one connection, and encode outgoing messages."""

    def __init__(self, *, include_jsonrpc: bool = False, error_wire: ErrorWire | None = None) -> None:
        self._include_jsonrpc = include_jsonrpc
        # How an RpcError becomes its wire object: a server that stamps a code into `error.data` on
        # every error it sends (the app-server) supplies its own; by default, `RpcError.to_wire`.
        self._error_wire: ErrorWire = error_wire or RpcError.to_wire
        self._in_flight: dict[str, str] = {}
        self._pending: dict[int, str] = {}
        self._next_id = 0

    # -- inbound -------------------------------------------------------------------------------
    def receive(self, raw: bytes | str) -> Message:
        """Classify one complete message and update the tables.

        A request whose id is already in flight comes back with ``duplicate=True`` and is not
        tracked: answer it with ``error_untracked``.
        """
        msg = classify(raw)
        if isinstance(msg, RequestReceived):
            key = id_key(msg.id)
            if key in self._in_flight:
                return RequestReceived(msg.id, msg.method, msg.params, msg.has_params, duplicate=True)
            self._in_flight[key] = msg.method
            return msg
        if isinstance(msg, ResponseReceived | ErrorReceived) and isinstance(msg.id, int):
            method = self._pending.pop(msg.id, None)
            if method is not None:
                if isinstance(msg, ResponseReceived):
                    return ResponseReceived(msg.id, msg.result, method)
                return ErrorReceived(msg.id, msg.error, method)
        return msg

    def is_in_flight(self, request_id: JsonValue) -> bool:
        """True while a request with this id was received and not yet answered."""
        return id_key(request_id) in self._in_flight

    @property
    def in_flight_count(self) -> int:
        """How many inbound requests await their answer."""
        return len(self._in_flight)

    # -- answers ------------------------------------------------------------------------------
    def respond(self, request_id: JsonValue, result: object) -> bytes:
        """Encode the one successful answer to an inbound request.

        Encoding comes first: if ``result`` is not JSON (NaN, a stray object), the request stays in flight
        so the caller can still answer it with ``respond_error``.
        """
        data = self._encode({"id": request_id, "result": result})
        self._finish(request_id)
        return data

    def respond_error(self, request_id: JsonValue, error: RpcError | JsonObj) -> bytes:
        """Encode the one error answer to an inbound request."""
        self._finish(request_id)
        return self.error_untracked(request_id, error)

    def error_untracked(self, request_id: JsonValue, error: RpcError | JsonObj) -> bytes:
        """Encode an error that answers no tracked request (a duplicate id, or a wire violation)."""
        body = self._error_wire(error) if isinstance(error, RpcError) else error
        return self._encode({"error": body, "id": request_id})

    def _finish(self, request_id: JsonValue) -> None:
        if self._in_flight.pop(id_key(request_id), None) is None:
            raise LocalRpcError(f"no request in flight with id {id_key(request_id)}")

    # -- outbound -----------------------------------------------------------------------------
    def notify(self, method: str, params: object, *, emitted_at_ms: int | None = None) -> bytes:
        """Encode a notification; pass ``emitted_at_ms`` on wires that stamp notifications."""
        msg: JsonObj = {"method": method}
        if params is not None:
            msg["params"] = params
        if emitted_at_ms is not None:
            msg["emittedAtMs"] = emitted_at_ms
        return self._encode(msg)

    def request(self, method: str, params: object) -> tuple[int, bytes]:
        """Mint an id for a request of ours and encode it."""
        request_id = self._next_id
        self._next_id += 1
        self._pending[request_id] = method
        msg: JsonObj = {"method": method, "id": request_id}
        if params is not None:
            msg["params"] = params
        return request_id, self._encode(msg)

    def forget(self, request_id: int) -> bool:
        """Stop waiting for a response (deadline passed); a late answer then counts as stray."""
        return self._pending.pop(request_id, None) is not None

    @property
    def next_request_id(self) -> int:
        """The id ``request`` will mint next."""
        return self._next_id

    def pending_ids(self) -> list[int]:
        """Ids of our requests still waiting for a response."""
        return list(self._pending)

    def _encode(self, msg: JsonObj) -> bytes:
        if self._include_jsonrpc:
            msg = {"jsonrpc": "2.0", **msg}
        return encode(msg)
