"""The exec-server's router: its method table (``handlers.METHODS``) and its initialize gate.

Checks, as observed on Codex 0.169.0: an unknown method is -32601; then params are validated (-32602,
serde's words; absent params count as ``{}`` when the model needs nothing); then ``initialize`` and
``initialized`` are required (-32600 naming the method family); then the handler runs. An exception
that is not an ``RpcError`` is answered with -32603 carrying its text, as Codex does.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel

from exec_client.wire.protocol import InitializeParams, Method
from exec_server.contracts import Handshake
from exec_server.handlers import METHODS, ServedMethod
from pycodex.json_types import JsonObj, JsonValue
from pycodex.jsonrpc import router as rpc
from pycodex.jsonrpc.errors import InternalError, InvalidRequest, MethodNotFound, RpcError
from pycodex.jsonrpc.serde import Framing

__all__ = ["ExecRouter"]

log = logging.getLogger(__name__)


def _on_session(spec: ServedMethod) -> rpc.Route[Handshake]:
    async def run(conn: Handshake, params: BaseModel) -> object:
        assert conn.session is not None  # the gate let it through
        return await spec.call(conn.session, params)

    return rpc.Route("", spec.model, run, meta=spec.family)


class ExecRouter(rpc.Router[Handshake]):
    """The exec-server's table; one per process, shared by its connections."""

    framing = Framing.BARE
    #: The exec-server's wire models (exec_client/wire) declare only what it uses of Codex's sandbox objects
    #: (Codex sends more, e.g. ``sandbox.windowsSandboxProxySettingsMode``), so an unknown safety field here
    #: is ignored like any other; what it enforces is checked by its own sandbox parser, which refuses what
    #: it cannot apply (exec_server/sandbox.py).
    refuse_unknown_safety_fields = False

    def __init__(self) -> None:
        super().__init__()
        self.add_route(rpc.Route(Method.INITIALIZE, InitializeParams, _initialize))
        for method, spec in METHODS.items():
            route = _on_session(spec)
            self.add_route(rpc.Route(method, route.params_model, route.handler, meta=spec.family))

    def unknown_method(self, session: Handshake, method: str) -> RpcError:
        """-32601 with Codex's exec-server wording."""
        shown = rpc.shown_method(method)  # Codex echoes a 1 MiB name in full
        log.info("unimplemented method %s", shown)
        return MethodNotFound(f"exec-server stub does not implement `{shown}` yet")

    def parse(self, route: rpc.Route[Handshake], params: JsonValue, has_params: bool) -> BaseModel | None:
        """Absent params count as ``{}`` when the model requires nothing; then the base parse (lax
        framing)."""
        model = route.params_model
        if params is None and model is not None and route.meta is not None:
            if not any(field.is_required() for field in model.model_fields.values()):
                params = {}
        return super().parse(route, params, has_params)

    def gate(self, session: Handshake, route: rpc.Route[Handshake], params: JsonValue) -> None:
        """``initialize`` first, then ``initialized``: -32600 naming the method family otherwise."""
        if route.meta is None:  # initialize: the connection checks it is the first
            return
        if session.session is None:
            raise InvalidRequest(f"client must call initialize before using {route.meta} methods")
        if not session.initialized:
            raise InvalidRequest(f"client must send initialized before using {route.meta} methods")

    def boundary(self, method: str, exc: Exception) -> RpcError:
        """A bug: logged, and answered with -32603 carrying its text, as Codex does."""
        log.exception("internal error in %s", method)
        return InternalError(str(exc))


async def _initialize(conn: Handshake, params: InitializeParams) -> JsonObj:
    return conn.initialize(params)
