"""The shared Router: the order of checks, a server's own gate, and the error boundary."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from pycodex.jsonrpc.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, InvalidRequest, RpcError
from pycodex.jsonrpc.router import Route, Router


@dataclass
class Conn:
    ready: bool = False


class Echo(BaseModel):
    text: str


class GatedRouter(Router[Conn]):
    """A server whose only ungated method is ``hello``."""

    def gate(self, session: Conn, route: Route[Conn], params: Any) -> None:
        if route.method != "hello" and not session.ready:
            raise InvalidRequest("say hello first")


async def _echo(conn: Conn, params: Echo) -> dict[str, str]:
    return {"text": params.text}


async def _hello(conn: Conn, params: None) -> str:
    conn.ready = True
    return "hi"


async def _broken(conn: Conn, params: None) -> None:
    raise KeyError("a bug")


def _router() -> GatedRouter:
    router = GatedRouter()
    router.add_route(Route("hello", None, _hello))
    router.add_route(Route("echo", Echo, _echo))
    router.add_route(Route("broken", None, _broken))
    return router


S = TypeVar("S")


async def _code(router: Router[S], conn: S, method: str, params: Any = None) -> tuple[int, str]:
    with pytest.raises(RpcError) as error:
        await router.dispatch(conn, method, params, params is not None)
    return error.value.wire_code, error.value.message


async def test_unknown_method_comes_before_params_and_params_before_the_gate() -> None:
    router, conn = _router(), Conn()
    assert await _code(router, conn, "nope") == (METHOD_NOT_FOUND, "method `nope` not found")
    # invalid params are reported even to a session the gate would refuse
    assert await _code(router, conn, "echo", {"text": 5}) == (
        INVALID_PARAMS,
        "Invalid request: invalid type: integer `5` for `text`, expected a string",
    )
    assert await _code(router, conn, "echo", {"text": "x"}) == (-32600, "say hello first")
    assert await router.dispatch(conn, "hello", None, False) == "hi"
    assert await router.dispatch(conn, "echo", {"text": "x"}, True) == {"text": "x"}


async def test_a_handler_bug_is_logged_and_answered_with_32603(caplog: pytest.LogCaptureFixture) -> None:
    router, conn = _router(), Conn(ready=True)
    with caplog.at_level(logging.ERROR):
        assert await _code(router, conn, "broken") == (INTERNAL_ERROR, "internal error while handling broken")
    assert "a bug" in caplog.text  # the traceback goes to the log, not to the client


async def test_a_server_may_map_exceptions_to_client_errors() -> None:
    class Mapping(GatedRouter):
        def boundary(self, method: str, exc: Exception) -> RpcError:
            return InvalidRequest(f"bad key {exc}") if isinstance(exc, KeyError) else super().boundary(method, exc)

    router = Mapping()
    router.add_route(Route("broken", None, _broken))
    assert await _code(router, Conn(ready=True), "broken") == (-32600, "bad key 'a bug'")


def test_a_method_is_registered_once() -> None:
    router = _router()
    with pytest.raises(ValueError, match="registered twice"):
        router.add_route(Route("echo", Echo, _echo))
    assert router.methods == ["hello", "echo", "broken"]


async def test_the_exec_server_gate_names_the_method_family() -> None:
    from exec_server.connection import Connection
    from exec_server.router import ExecRouter
    from exec_server.session import SessionRegistry

    sent: list[bytes] = []

    async def send(data: bytes) -> None:
        sent.append(data)

    registry = SessionRegistry()
    conn = Connection(registry, send, transport="test", parse_error_prefix="test")
    router = ExecRouter()
    try:
        code, message = await _code(router, conn, "process/read", {"processId": "p"})
        assert (code, message) == (-32600, "client must call initialize before using exec methods")
        assert await _code(router, conn, "bogus") == (
            METHOD_NOT_FOUND,
            "exec-server stub does not implement `bogus` yet",
        )
        result = await router.dispatch(conn, "initialize", {"clientName": "t"}, True)
        assert set(result) == {"sessionId", "environmentInfo"}
        code, message = await _code(router, conn, "process/read", {"processId": "p"})
        assert (code, message) == (-32600, "client must send initialized before using exec methods")
        assert await _code(router, conn, "initialize", {"clientName": "t"}) == (
            -32600,
            "initialize may only be sent once per connection",
        )
    finally:
        await conn.close()
        await registry.shutdown()
