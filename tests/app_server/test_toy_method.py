"""Adding a method touches one declaration: a toy method declared here is routed, validated, answered and
exported.

The toy's params model, result model and handler live in this file; the one ``MethodDecl`` naming them is
appended to the real table and handed to an ``AppServer``. Nothing else in the tree learns of it, yet a
client connection reaches it, gets -32602 for bad params, -32600 before ``initialize``, sees it listed
in the "unknown variant" text, and the schema export describes it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, ClassVar

from app_server.app import AppServer
from app_server.context import HandlerContext
from app_server.protocol.base import ParamsModel, WireModel
from app_server.protocol.declarations import MethodDecl
from app_server.protocol.method_table import DECLARATIONS
from app_server.protocol.schema_export import bundle_schema, served_methods
from pycodex.transport.base import Outbox


class ToyEchoParams(ParamsModel):
    """The toy's params: a word to echo, and how many times."""

    METHOD: ClassVar[str] = "toy/echo"
    word: str
    times: int = 1


class ToyEchoResponse(WireModel):
    """The toy's result."""

    echoed: str
    client_name: str


async def toy_echo(ctx: HandlerContext, params: ToyEchoParams) -> ToyEchoResponse:
    """Echo the word; the client's name comes from the session, CODEX_HOME from the services."""
    assert ctx.services.codex_home.is_dir()
    return ToyEchoResponse(echoed=" ".join([params.word] * params.times), client_name=ctx.session.client_name)


TOY = MethodDecl("toy/echo", toy_echo, ToyEchoParams, ToyEchoResponse)


class _Client:
    """One connection of the server, fed raw lines; answers collected by id."""

    def __init__(self, app: AppServer) -> None:
        self.answers: dict[int, Any] = {}
        self._arrived = asyncio.Condition()
        self._outbox = Outbox(self._write)
        self._outbox.start()
        self.connection = app.connection(self._outbox)

    async def _write(self, data: bytes) -> None:
        for line in data.decode().splitlines():
            message = json.loads(line)
            if "id" in message:
                async with self._arrived:
                    self.answers[message["id"]] = message
                    self._arrived.notify_all()

    async def close(self) -> None:
        await self.connection.on_close()
        await self._outbox.close()

    async def call(self, request_id: int, method: str, params: Any) -> Any:
        line = json.dumps({"id": request_id, "method": method, "params": params})
        await self.connection.on_message(line.encode())
        async with self._arrived:
            await asyncio.wait_for(self._arrived.wait_for(lambda: request_id in self.answers), 10)
        return self.answers[request_id]


async def test_a_toy_method_declared_once_is_routed_validated_answered_and_exported(tmp_path: Path) -> None:
    app = AppServer(codex_home=tmp_path / "home", environ={"CODEX_EXEC_SERVER_URL": "none"}, cwd=tmp_path,
                    declarations=(*DECLARATIONS, TOY))
    client = _Client(app)
    try:
        before = await client.call(1, "toy/echo", {"word": "hi"})
        assert before["error"] == {"code": -32600, "data": {"appErrorCode": "not_initialized"},
                                   "message": "Not initialized"}
        await client.call(2, "initialize", {"clientInfo": {"name": "toy_client", "version": "1"}})
        answered = await client.call(3, "toy/echo", {"word": "hi", "times": 2})
        assert answered["result"] == {"echoed": "hi hi", "clientName": "toy_client"}
        invalid = await client.call(4, "toy/echo", {"times": 2})
        assert invalid["error"]["code"] == -32602 and "word" in invalid["error"]["message"]
        unknown = await client.call(5, "toy/nope", {})
        assert unknown["error"]["message"].endswith("`mcpServer/event/stream/stop`, `toy/echo`")
    finally:
        await client.close()
        await app.shutdown()

    bundle = bundle_schema(served_methods(experimental=True, declarations=(*DECLARATIONS, TOY)))
    union = bundle["definitions"]["ClientRequest"]["oneOf"]
    variants = {v["properties"]["method"]["enum"][0]: v for v in union}
    assert variants["toy/echo"]["properties"]["params"] == {"$ref": "#/definitions/ToyEchoParams"}
    assert variants["toy/echo"]["title"] == "Toy/echoRequest"
    assert {"ToyEchoParams", "ToyEchoResponse"} <= set(bundle["definitions"])
    assert bundle["definitions"]["ToyEchoResponse"]["required"] == ["echoed", "clientName"]
