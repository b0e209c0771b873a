"""An in-memory JSON-RPC client for an ``AppServer`` running in this process.

``pycodex exec`` talks to the app-server exactly as an IDE would (``initialize``, ``thread/start``,
``turn/start``...), but without a pipe: the server's outbox writes into a queue here, and requests go
straight to the connection's ``on_message``. Server-to-client requests (approvals) are declined, as a
non-interactive run cannot ask anybody.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from app_server.app import AppServer
from app_server.connection import AppConnection
from pycodex.transport.base import Outbox

__all__ = ["InProcessClient", "RequestFailed"]

JsonObj = dict[str, Any]
#: How long one request may take before the run gives up (a stuck server must not hang exec).
REQUEST_TIMEOUT_S = 60.0


class RequestFailed(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, message: str, code: int) -> None:
        super().__init__(message)
        self.method = method
        self.message = message
        self.code = code


class InProcessClient:
    def __init__(self, app: AppServer, *, session_source: str = "exec") -> None:
        self._app = app
        self._session_source = session_source
        self._next_id = 1
        self._pending: dict[int, asyncio.Future[JsonObj]] = {}
        self.notifications: asyncio.Queue[tuple[str, JsonObj]] = asyncio.Queue()
        self._outbox: Outbox | None = None
        self._conn: AppConnection | None = None

    async def start(self) -> None:
        self._outbox = Outbox(self._on_server_message)
        self._outbox.start()
        self._conn = self._app.connection(self._outbox)
        self._conn.session.session_source = self._session_source

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.on_close()
        if self._outbox is not None:
            await self._outbox.close(flush_timeout=1.0)

    async def _on_server_message(self, data: bytes) -> None:
        msg = json.loads(data)
        if "method" in msg and "id" in msg:  # a server request: nobody can answer it in exec
            await self._send({"id": msg["id"], "result": _decline(str(msg["method"]))})
        elif "method" in msg:
            await self.notifications.put((str(msg["method"]), dict(msg.get("params") or {})))
        else:
            future = self._pending.pop(msg.get("id"), None)
            if future is not None and not future.done():
                future.set_result(msg)

    async def _send(self, msg: JsonObj) -> None:
        assert self._conn is not None, "start() first"
        await self._conn.on_message(json.dumps(msg).encode())

    async def request(self, method: str, params: JsonObj, *, timeout: float = REQUEST_TIMEOUT_S) -> JsonObj:
        rid = self._next_id
        self._next_id += 1
        future: asyncio.Future[JsonObj] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        await self._send({"id": rid, "method": method, "params": params})
        try:
            reply = await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(rid, None)
        if "error" in reply:
            error = reply["error"] or {}
            raise RequestFailed(method, str(error.get("message", "")), int(error.get("code", -32603)))
        return dict(reply.get("result") or {})

    async def notify(self, method: str) -> None:
        with contextlib.suppress(Exception):
            await self._send({"method": method})


def _decline(method: str) -> JsonObj:
    if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
        return {"decision": "decline"}
    if method in ("execCommandApproval", "applyPatchApproval"):
        return {"decision": "denied"}
    return {}
