"""One ACP session (one stored thread): its settings, and a prompt run as a v2 turn streamed to the client.

The turn's notifications arrive on the session's queue (``AppServerBridge.subscribe``); each is translated
(``updates.TurnStream``) and sent as ``session/update`` in order. The prompt answers once the turn's
``turn/completed`` came, with the stop reason its status gives: ``completed`` is ``end_turn``,
``interrupted`` (``session/cancel``, or a cancelled permission) is ``cancelled``, a failure for the context
window is ``max_tokens`` and one for a policy is ``refusal``; any other failure is a JSON-RPC error whose
message is the turn's.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Literal

from acp import RequestError
from acp.interfaces import Client
from acp.schema import (
    AudioContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from acp_agent.bridge import AppServerBridge, Notice
from acp_agent.modes import Mode
from acp_agent.updates import TurnStream, obj
from pycodex.exec_cli.inproc import RequestFailed
from pycodex.json_types import JsonObj

__all__ = ["PromptBlock", "Session", "StopReason", "stop_reason", "to_inputs"]

logger = logging.getLogger(__name__)

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)
#: codexErrorInfo values that are a stop reason rather than an error.
_FAILED_STOPS: dict[str, StopReason] = {"contextWindowExceeded": "max_tokens", "cyberPolicy": "refusal"}


def stop_reason(turn: JsonObj) -> StopReason:
    """The ACP stop reason of a finished v2 turn; raises ``RequestError`` for a failure that is an error."""
    status = turn.get("status")
    if status == "completed":
        return "end_turn"
    if status == "interrupted":
        return "cancelled"
    error = obj(turn.get("error"))
    info = error.get("codexErrorInfo")
    if isinstance(info, str) and info in _FAILED_STOPS:
        return _FAILED_STOPS[info]
    message = str(error.get("message") or f"the turn ended {status}")
    if info == "unauthorized" or (isinstance(info, dict) and (info.get("httpConnectionFailed") or {}).get(
            "httpStatusCode") == 401):
        raise RequestError(-32000, f"Authentication required: {message}", {"codexErrorInfo": info})
    raise RequestError(-32603, message, {"codexErrorInfo": info})


def to_inputs(blocks: list[PromptBlock]) -> list[JsonObj]:
    """ACP prompt blocks as v2 ``UserInput``s (embedded context as text, images as data URLs)."""
    inputs: list[JsonObj] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            inputs.append({"type": "text", "text": block.text, "text_elements": []})
        elif isinstance(block, ImageContentBlock):
            inputs.append({"type": "image", "url": f"data:{block.mime_type};base64,{block.data}"})
        elif isinstance(block, ResourceContentBlock):
            inputs.append({"type": "text", "text": f"[@{block.name}]({block.uri})", "text_elements": []})
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(block.resource, TextResourceContents):
            text = f'<context ref="{block.resource.uri}">\n{block.resource.text}\n</context>'
            inputs.append({"type": "text", "text": text, "text_elements": []})
        else:
            raise RequestError.invalid_params({"message": f"prompt content `{block.type}` is not supported"})
    return inputs


@dataclass
class Session:
    """An ACP session: the thread behind it and what the next turn changes."""

    id: str
    cwd: str
    queue: asyncio.Queue[Notice]
    mode: Mode
    model: str
    #: Set by set_mode / the model picker; sent (and cleared) with the next turn/start.
    pending: JsonObj = field(default_factory=dict)
    turn_id: str | None = None
    #: fileChange items started in the running turn (their approval shows their diffs).
    changes: dict[str, list[JsonObj]] = field(default_factory=dict)
    #: ``session/cancel`` came while the turn was starting (no turn id yet): interrupt it once it has one.
    cancel_pending: bool = False
    #: The MCP tool call running now (its approval elicitation names no item).
    mcp_call: str = ""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def run_turn(self, bridge: AppServerBridge, client: Client, inputs: list[JsonObj]) -> StopReason:
        """One prompt: turn/start with ``inputs`` and the pending settings, streamed until it completes."""
        params: JsonObj = {"threadId": self.id, "input": inputs, **self.pending}
        self.pending = {}
        self.cancel_pending = False
        turn = (await bridge.request("turn/start", params))["turn"]
        return await self.follow(bridge, client, str(turn["id"]))

    async def run_command(self, bridge: AppServerBridge, client: Client, method: str, params: JsonObj) -> StopReason:
        """A slash command that starts a turn of its own (compaction, review): follow that turn."""
        self.turn_id = None
        self.cancel_pending = False
        answer = await bridge.request(method, {"threadId": self.id, **params})
        turn = answer.get("turn")
        if isinstance(turn, dict):
            return await self.follow(bridge, client, str(turn["id"]))
        while True:  # thread/compact/start answers {}: its turn shows in turn/started
            notice = await self._next()
            if notice[0] == "turn/started":
                return await self.follow(bridge, client, str(obj(notice[1].get("turn")).get("id")))

    async def _next(self) -> tuple[str, JsonObj]:
        notice = await self.queue.get()
        if notice is None:
            self.queue.put_nowait(None)
            raise RequestError.internal_error({"message": "the app-server stopped"})
        return notice

    async def interrupt(self, bridge: AppServerBridge) -> None:
        """``turn/interrupt`` the running turn, or have it interrupted as soon as it has an id."""
        if self.turn_id is None:
            self.cancel_pending = True
            return
        try:
            await bridge.request("turn/interrupt", {"threadId": self.id, "turnId": self.turn_id})
        except RequestFailed as exc:  # the turn ended meanwhile
            logger.info("session/cancel: %s", exc.message)

    async def follow(self, bridge: AppServerBridge, client: Client, turn_id: str) -> StopReason:
        """Send the turn's updates in order until its ``turn/completed``; its stop reason."""
        self.turn_id = turn_id
        if self.cancel_pending:
            await self.interrupt(bridge)
        stream = TurnStream(turn_id)
        try:
            while True:
                method, params = await self._next()
                item = obj(params.get("item"))
                if method == "item/started" and item.get("type") == "fileChange":
                    self.changes[str(item.get("id"))] = [c for c in item.get("changes") or [] if isinstance(c, dict)]
                if method == "item/started" and item.get("type") == "mcpToolCall":
                    self.mcp_call = str(item.get("id"))
                for update in stream.feed(method, params):
                    await client.session_update(self.id, update)
                turn = obj(params.get("turn"))
                if method == "turn/completed" and turn.get("id") == turn_id:
                    return stop_reason(turn)
        finally:
            self.turn_id = None
            self.changes.clear()
