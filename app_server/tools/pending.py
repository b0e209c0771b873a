"""A server-to-client question (an approval) that every subscribed client may answer.

Codex offers a pending approval to the client that started the turn and again to any client that
subscribes to the thread later (thread/resume); the first answer wins. A client that disconnects does
not answer for the others: the question stays open until someone answers, the turn is interrupted, or
the timeout passes. Each client sees the request under its own connection's request id, so
``serverRequest/resolved`` goes to each asked client with that client's id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from app_server.connection import ConnectionClosedError
from app_server.protocol import notices
from pycodex.json_types import JsonObj, JsonValue

if TYPE_CHECKING:
    from collections.abc import Iterable

    from app_server.threads.contracts import Subscriber

__all__ = ["PendingRequest", "askable_clients"]

logger = logging.getLogger(__name__)


class PendingRequest:
    """One open server request (an approval), offered to each subscribed client; the first answer wins."""

    def __init__(self, method: str, params: JsonObj, *, timeout: float) -> None:
        self.method = method
        self.params = params
        self._timeout = timeout
        self._answer: asyncio.Future[JsonValue] = asyncio.get_running_loop().create_future()
        self._asked: dict[Subscriber, int] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._deadline = asyncio.get_running_loop().time() + timeout

    @property
    def asked(self) -> dict[Subscriber, int]:
        """Each client this was sent to, with the request id on that client's connection."""
        return dict(self._asked)

    def offer(self, session: Subscriber) -> None:
        """Send the question to ``session`` unless it already has it, is closed, or it is answered."""
        if session in self._asked or session.closed.is_set() or self._answer.done():
            return
        self._asked[session] = -1
        self._tasks.append(asyncio.get_running_loop().create_task(self._ask(session)))

    async def _ask(self, session: Subscriber) -> None:
        remaining = max(self._deadline - asyncio.get_running_loop().time(), 0.001)
        # session.request takes its id synchronously before its first await, so this is that id.
        self._asked[session] = session.next_request_id()
        try:
            result = await session.request(self.method, self.params, timeout=remaining)
        except ConnectionClosedError:
            logger.info("client left with %s open; waiting for another client", self.method)
            return
        except Exception as exc:  # a timeout or an error answer: no decision (the caller fails closed)
            if not self._answer.done():
                self._answer.set_exception(exc)
            return
        if not self._answer.done():
            self._answer.set_result(result)

    async def wait(self) -> JsonValue:
        """The first answer; raises TimeoutError when nobody answers in time."""
        remaining = max(self._deadline - asyncio.get_running_loop().time(), 0.001)
        return await asyncio.wait_for(asyncio.shield(self._answer), remaining)

    async def close(self, thread_id: str) -> None:
        """Withdraw the question from every client and tell each asked client it is resolved."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if not self._answer.done():
            self._answer.cancel()
        for session, request_id in self._asked.items():
            if request_id >= 0:
                await notices.send(session, notices.server_request_resolved(thread_id, request_id))


def askable_clients(origin: Subscriber | None, subscribers: Iterable[Subscriber]) -> list[Subscriber]:
    """Who a turn's question goes to: the client that started the turn first, then the thread's other live
    subscribers (an empty list: nobody can answer, and each tool says what that means for its call)."""
    askable = [origin] if origin is not None and not origin.closed.is_set() else []
    return askable + [s for s in subscribers if s is not origin and not s.closed.is_set()]
