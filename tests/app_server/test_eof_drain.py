"""A connection that ends (stdin EOF) still answers every request it had received, bounded by that work alone.

A gated method, declared here, keeps the dispatcher busy while the connection closes: ``on_close`` must not
return (and the server must not exit) until each queued request has its one answer, however long the work
takes; nothing is dropped after a fixed drain time.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from app_server.app import AppServer
from app_server.context import HandlerContext
from app_server.protocol.declarations import MethodDecl
from app_server.protocol.method_table import DECLARATIONS
from pycodex.transport.base import Outbox

GATE = asyncio.Event()


async def gated(ctx: HandlerContext, params: Any) -> dict[str, Any]:
    """Answers once the test opens the gate (a slow handler under load)."""
    await GATE.wait()
    return {"request": ctx.session.current_request_id}


async def test_requests_queued_before_eof_are_all_answered_before_close_returns(tmp_path: Path) -> None:
    GATE.clear()
    app = AppServer(codex_home=tmp_path / "home", environ={"CODEX_EXEC_SERVER_URL": "none"}, cwd=tmp_path,
                    declarations=(*DECLARATIONS, MethodDecl("test/gated", gated)))
    answers: dict[int, Any] = {}

    async def write(data: bytes) -> None:
        for line in data.decode().splitlines():
            message = json.loads(line)
            if "id" in message:
                answers[message["id"]] = message

    outbox = Outbox(write)
    outbox.start()
    connection = app.connection(outbox)
    try:
        client_info = {"clientInfo": {"name": "t", "version": "1"}}
        initialize = {"id": 0, "method": "initialize", "params": client_info}
        await connection.on_message(json.dumps(initialize).encode())
        for request_id in range(1, 6):
            await connection.on_message(json.dumps({"id": request_id, "method": "test/gated"}).encode())
        closing = asyncio.ensure_future(connection.on_close())  # EOF: the five are queued or in flight
        # Many turns of the event loop pass: close keeps waiting for the work, not for a clock.
        done, _ = await asyncio.wait({closing}, timeout=0.05)
        assert not done
        GATE.set()
        await asyncio.wait_for(closing, 10)
        await outbox.close()
        assert sorted(answers) == [0, 1, 2, 3, 4, 5]
        assert [answers[i]["result"] for i in range(1, 6)] == [{"request": i} for i in range(1, 6)]
    finally:
        GATE.set()
        await app.shutdown()
