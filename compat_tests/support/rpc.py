"""The client side of an app-server's stdio JSON-RPC, keeping a transcript, with one-line failure causes.

Every failure raises :class:`ScenarioError`, whose first line is the cause the compat table shows
(``app-server exited rc=1 during thread/start``, ``thread/start answered error -32600: ...``,
``timed out after 30s awaiting turn/completed for turn T``,
``item/completed params.item.aggregatedOutput missing``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from compat_tests.support.causes import COMMAND_ITEM_FIELDS, missing_field
from compat_tests.support.processes import ProcessHandle

__all__ = ["STEP", "AppServerRpc", "ScenarioError", "check_item_fields"]

STEP = 30.0  # bound of every single wait


class ScenarioError(AssertionError):
    """A scenario failed; ``cause`` is the one-line reason, the message adds diagnostics below it."""

    def __init__(self, cause: str, details: str = "") -> None:
        super().__init__(f"{cause}\n{details}" if details else cause)
        self.cause = cause


class AppServerRpc:
    """Line-delimited JSON-RPC over an app-server's stdio; keeps notifications and server requests."""

    def __init__(self, handle: ProcessHandle) -> None:
        self.handle = handle
        self.messages: list[dict[str, Any]] = []
        #: (direction, time, message): ">" client to server, "<" server to client.
        self.transcript: list[tuple[str, float, Any]] = []
        self._started = time.monotonic()
        #: The id turn/start answered with, so a wait for the turn's end can name the turn.
        self.turn_id = ""

    async def _send(self, message: dict[str, Any]) -> None:
        self.transcript.append((">", time.monotonic() - self._started, message))
        try:
            await self.handle.write_line(json.dumps(message))
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ScenarioError(await self._exited(str(message.get("method", "a response")))) from exc

    async def _receive(self, waiting_for: str) -> dict[str, Any]:
        try:
            line = await self.handle.readline(STEP)
        except TimeoutError:
            raise ScenarioError(f"timed out after {STEP:.0f}s awaiting {waiting_for}") from None
        except AssertionError:  # stdout closed
            raise ScenarioError(await self._exited(waiting_for)) from None
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            raise ScenarioError(f"app-server wrote a non-JSON line to stdout: {line[:120]!r}") from None
        self.transcript.append(("<", time.monotonic() - self._started, message))
        return message  # type: ignore[no-any-return]

    async def _exited(self, during: str) -> str:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.handle.proc.wait(), 5.0)
        return f"app-server exited rc={self.handle.proc.returncode} during {during}"

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> Any:
        await self._send({"id": request_id, "method": method, "params": params})
        for _ in range(100_000):
            message = await self._receive(f"the answer to {method}")
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    error = message["error"]
                    if isinstance(error, dict):
                        raise ScenarioError(
                            f"{method} answered error {error.get('code')}: {error.get('message', '')}"
                        )
                    raise ScenarioError(f"{method} answered error {error}")
                if "result" not in message:
                    raise ScenarioError(f"{method} answered without a result: {json.dumps(message)[:200]}")
                result = message["result"]
                if method == "turn/start" and isinstance(result, dict):
                    self.turn_id = str(result.get("turn", {}).get("id", ""))
                return result
            self.messages.append(message)
        raise ScenarioError(f"no answer to {method}")

    async def notify(self, method: str) -> None:
        await self._send({"method": method})

    async def respond(self, request_id: Any, result: dict[str, Any]) -> None:
        await self._send({"id": request_id, "result": result})

    async def wait_for(self, method: str) -> dict[str, Any]:
        """The first message (notification or server request) with ``method``, read on if not yet seen."""
        for _ in range(100_000):
            for message in self.messages:
                if message.get("method") == method:
                    return message
            turn = f" for turn {self.turn_id}" if method.startswith("turn/") and self.turn_id else ""
            self.messages.append(await self._receive(f"{method}{turn}"))
        raise ScenarioError(f"no {method}")

    def transcript_lines(self) -> list[str]:
        return [json.dumps({"dir": d, "t": round(t, 3), "msg": m}) for d, t, m in self.transcript]


def check_item_fields(messages: list[dict[str, Any]]) -> None:
    """Every completed commandExecution item carries the fields clients read; raise naming the first gap."""
    completed = [
        m["params"].get("item", {})
        for m in messages
        if m.get("method") == "item/completed" and isinstance(m.get("params"), dict)
    ]
    commands = [item for item in completed if item.get("type") == "commandExecution"]
    if not commands:
        raise ScenarioError("no item/completed for the commandExecution item")
    for item in commands:
        gap = missing_field("item/completed params.item", item, COMMAND_ITEM_FIELDS)
        if gap:
            raise ScenarioError(gap)
