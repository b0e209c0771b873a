"""Handlers called directly, in memory: each answers with its result model, or a dict equal to that model's dump.

Handlers are module-level functions of ``(ctx, params)``, so a context holding a stand-in session with the
handler-facing API is enough; the real AppServer (store, threads, config) is its services, in a temporary
CODEX_HOME.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from app_server.app import AppServer
from app_server.context import HandlerContext
from app_server.handlers import config, info, models, threads, turns
from app_server.protocol import server_info as si
from app_server.protocol import threads as tp
from app_server.protocol import turns as up
from app_server.protocol.base import to_wire
from app_server.protocol.codex_0171 import ThreadListParams0171


class StandInSession:
    """The handler-facing ``Session`` API, recording what a handler sends and defers."""

    def __init__(self) -> None:
        self.id = 1
        self.client_name = "tests"
        self.client_version = "1.0"
        self.session_source = "vscode"
        self.experimental_api = True
        self.initialized = True
        self.closed = asyncio.Event()
        self.on_close: list[Callable[[], Any]] = []
        self.deferred: list[Callable[[], Awaitable[None]]] = []
        self.sent: list[tuple[str, Any]] = []

    def after_response(self, callback: Callable[[], Awaitable[None]]) -> None:
        self.deferred.append(callback)

    async def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))

    async def notify_within(self, method: str, params: Any, timeout: float) -> bool:
        self.sent.append((method, params))
        return True

    def wants(self, method: str) -> bool:
        return True

    def encode_notification(self, method: str, params: Any) -> bytes:
        return json.dumps({"method": method, "params": params}).encode()

    def offer(self, data: bytes) -> bool:
        msg = json.loads(data)
        self.sent.append((msg["method"], msg["params"]))
        return True

    async def send_within(self, data: bytes, timeout: float) -> bool:
        msg = json.loads(data)
        self.sent.append((msg["method"], msg["params"]))
        return True

    async def request(self, method: str, params: Any, *, timeout: float = 1.0) -> Any:
        raise AssertionError("no server request expected")

    def next_request_id(self) -> int:
        return 0


def pinned(model: type[BaseModel], result: Any) -> None:
    if isinstance(result, BaseModel):  # a handler that returns its model: the declared one
        assert type(result) is model, (type(result).__name__, model.__name__)
        return
    # Same keys and values; key order is the handler's.
    assert isinstance(result, dict)
    assert to_wire(model.model_validate(result)) == result, model.__name__


def test_dict_responses_equal_their_model_dumps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_EXEC_SERVER_URL", "none")  # no local shell snapshot to start

    async def body() -> None:
        app = AppServer(codex_home=tmp_path / "home")
        session: Any = StandInSession()
        ctx = HandlerContext(session, app)
        try:
            start = await threads.thread_start(ctx, tp.ThreadStartParams.model_validate({"cwd": str(tmp_path)}))
            pinned(tp.ThreadStartResponse, start)
            thread_id = start.thread.id
            accepted = await turns.turn_start(ctx, up.TurnStartParams.model_validate(
                {"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]}))
            pinned(up.TurnStartResponse, accepted)
            assert accepted.turn.status == "inProgress"
            steer = await turns.turn_steer(ctx, up.TurnSteerParams.model_validate(
                {"threadId": thread_id, "expectedTurnId": accepted.turn.id,
                 "input": [{"type": "text", "text": "more"}]}))
            assert steer == up.TurnSteerResponse(turn_id=accepted.turn.id)
            read = await threads.thread_read(ctx, tp.ThreadReadParams.model_validate(
                {"threadId": thread_id, "includeTurns": True}))
            pinned(tp.ThreadReadResponse, read)
            listed = await threads.turns_list(ctx, tp.ThreadTurnsListParams.model_validate({"threadId": thread_id}))
            pinned(tp.ThreadTurnsListResponse, listed)
            pinned(tp.ThreadListResponse, await threads.thread_list(ctx, ThreadListParams0171.model_validate({})))
            resume = await threads.thread_resume(ctx, tp.ThreadResumeParams.model_validate({"threadId": thread_id}))
            pinned(tp.ThreadResumeResponse, resume)
            pinned(si.ModelListResponse, await models.list_models(ctx, si.ModelListParams.model_validate({})))
            pinned(si.GetAccountResponse, await info.account_read(ctx, si.GetAccountParams.model_validate({})))
            pinned(si.ConfigReadResponse, await config.config_read(ctx, si.ConfigReadParams.model_validate({})))
            layered = await config.config_read(ctx, si.ConfigReadParams.model_validate({"includeLayers": True}))
            pinned(si.ConfigReadResponse, layered)
        finally:
            await app.shutdown()

    asyncio.run(asyncio.wait_for(body(), 30))
