"""The agent loop of one turn: sample the model, carry out what it asks, repeat, end exactly once.

Notification order follows Codex (app_server.md §4): ``thread/status/changed`` active, ``turn/started``,
the user message item, then per model response its items in stream order, token usage after each
response, and finally (``thread/readState/changed``), the idle status and one ``turn/completed``.
Every completed item is written to the rollout before its ``item/completed`` goes out.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from app_server.model.errors import ModelError, RetryNotice
from app_server.model.events import ResponseEvent, Usage
from app_server.model.provider import RequestContext
from app_server.store import new_uuid7, persisted_item
from app_server.threads import items as it
from app_server.threads.prompt import developer_message, user_message_item
from app_server.threads.sampling import Completed, Emit, HistoryAppend, ItemDone, SampleMapper, ToolCall
from app_server.threads.state import MODEL_CONTEXT_WINDOW, ThreadRuntime, TurnState

if TYPE_CHECKING:
    from app_server.connection import Session

__all__ = ["ModelGateway", "TurnCancelled", "TurnRunner"]

logger = logging.getLogger(__name__)

JsonObj = dict[str, Any]

TURN_ABORTED = (
    "<turn_aborted>\nThe user stopped the previous turn on purpose. Anything it was doing may be "
    "unfinished; do not resume it unless asked.\n</turn_aborted>"
)


PERMISSIONS_TAG = "<permissions instructions>"
ENVIRONMENT_TAG = "<environment_context>"


def _last_part(history: list[JsonObj], tag: str) -> str | None:
    """The most recent message text part in ``history`` that starts with ``tag``."""
    for item in reversed(history):
        for part in reversed(item.get("content") or [] if item.get("type") == "message" else []):
            text = part.get("text") if isinstance(part, dict) else None
            if isinstance(text, str) and text.startswith(tag):
                return text
    return None


class TurnCancelled(Exception):
    """The user cancelled from an approval prompt: the turn ends as interrupted."""


class ModelGateway(Protocol):
    def stream(
        self, thread: ThreadRuntime, body: JsonObj, ctx: RequestContext,
        on_retry: Callable[[RetryNotice], Awaitable[None]],
    ) -> AsyncIterator[ResponseEvent]: ...


ToolHandler = Callable[["TurnRunner", ToolCall], Awaitable[JsonObj]]


class TurnRunner:
    def __init__(
        self,
        *,
        thread: ThreadRuntime,
        turn: TurnState,
        gateway: ModelGateway,
        tools: list[JsonObj],
        tool_handler: ToolHandler,
        request_ctx: Callable[[ThreadRuntime, TurnState], RequestContext],
        build_context: Callable[[ThreadRuntime], list[JsonObj]],
        origin: Session | None,
        inject: Callable[[list[JsonObj]], list[str]] | None = None,
    ) -> None:
        self.thread = thread
        self.turn = turn
        self._gateway = gateway
        self._tools = tools
        self._tool_handler = tool_handler
        self._request_ctx = request_ctx
        self._build_context = build_context
        self.origin = origin
        self._inject = inject
        #: Function calls whose output has not been recorded yet (kept valid on interrupt).
        self._unanswered: dict[str, float] = {}  # call id -> when it started (monotonic)
        self._mapper: SampleMapper | None = None
        self._consume_task: asyncio.Task[bool] | None = None
        self._restart = False

    # -- the turn --------------------------------------------------------------------------------
    async def run(self) -> None:
        thread, turn = self.thread, self.turn
        status, error = "completed", None
        try:
            await asyncio.to_thread(thread.writer.turn_started, turn.id, started_at=turn.started_at)
            await thread.emit_status()
            await thread.emit("turn/started", {"threadId": thread.id, "turn": turn.wire(view="notLoaded")})
            if not thread.history:
                await self._record_history(self._build_context(thread))
            else:
                await self._record_history(self._model_switch() + self._context_updates())
            thread.model_seen = thread.settings.model
            await self._user_input(turn.inputs)
            while True:
                follow_up = await self._sample()
                if turn.pending_inputs:
                    for inputs in turn.pending_inputs:
                        await self._user_input(inputs)
                    turn.pending_inputs.clear()
                    follow_up = True
                if not follow_up:
                    break
        except asyncio.CancelledError:
            status = "interrupted"
        except TurnCancelled:
            status = "interrupted"
        except ModelError as exc:
            status, error = "failed", exc.payload.to_wire()
        except Exception as exc:  # a bug must still end the turn exactly once
            logger.exception("turn %s crashed", turn.id)
            status, error = "failed", {"message": f"internal error: {exc}", "codexErrorInfo": "other",
                                       "additionalDetails": None, "misalignment": None}
        await asyncio.shield(self._end(status, error))

    async def _end(self, status: str, error: JsonObj | None) -> None:
        thread, turn = self.thread, self.turn
        if status == "interrupted":
            now = time.monotonic()
            aborted = [  # what Codex tells the model about a call cut short by the interrupt
                {"type": "function_call_output", "call_id": call_id,
                 "output": f"Wall time: {now - started:.1f} seconds\naborted by user"}
                for call_id, started in self._unanswered.items()
            ]
            await self._record_history([*aborted, user_message_item([TURN_ABORTED])])
        turn.finish(status, error)
        thread.turns.append(turn.wire(view="full"))
        thread.system_error = status == "failed"
        thread.active = None
        try:
            await asyncio.to_thread(
                thread.writer.turn_ended, turn.id, status, error=error, completed_at=turn.completed_at,
                duration_ms=turn.duration_ms,
            )
        except Exception:
            logger.exception("could not record the end of turn %s", turn.id)
        if status == "failed":
            await thread.emit_status()
            await thread.emit(
                "error", {"error": error, "willRetry": False, "threadId": thread.id, "turnId": turn.id}
            )
        else:
            if thread.read_states is not None and not thread.ephemeral:  # nothing to mark on a throwaway
                read_state = await asyncio.to_thread(thread.read_states.turn_completed, thread.id, turn.id)
            else:
                read_state = {"firstUnread": {"type": "turn", "turnId": turn.id}, "revision": str(uuid.uuid4())}
            await thread.emit("thread/readState/changed", {"threadId": thread.id, "readState": read_state})
            await thread.emit_status()
        view = "summary" if status == "completed" else "notLoaded"
        await thread.emit("turn/completed", {"threadId": thread.id, "turn": turn.wire(view=view)})
        for key in list(turn.open_requests):
            pending = turn.open_requests.pop(key)
            await pending.close(thread.id)

    # -- inputs and history ----------------------------------------------------------------------
    async def _record_history(self, entries: list[JsonObj]) -> None:
        if not entries:
            return
        self.thread.history.extend(entries)
        await asyncio.to_thread(self.thread.writer.response_items, entries)

    def _model_switch(self) -> list[JsonObj]:
        """Tell a newly chosen model that earlier turns came from another one."""
        before, now = self.thread.model_seen, self.thread.settings.model
        if not before or before == now:
            return []
        return [developer_message([
            f"<model_switch>\nFrom this turn on you are running as `{now}`; earlier turns of this conversation "
            f"were answered by `{before}`. Keep working from the history as it stands.\n</model_switch>"
        ])]

    def _context_updates(self) -> list[JsonObj]:
        """Re-send the permissions text and the environment context when they changed since the model last
        saw them (a cwd, sandbox or approval override), as Codex does before the new user message."""
        fresh = [p["text"] for item in self._build_context(self.thread) for p in item.get("content", [])]
        updates: list[JsonObj] = []
        for tag, make in ((PERMISSIONS_TAG, developer_message), (ENVIRONMENT_TAG, lambda t: user_message_item(t))):
            current = next((t for t in fresh if t.startswith(tag)), None)
            if current is not None and current != _last_part(self.thread.history, tag):
                updates.append(make([current]))
        return updates

    async def _user_input(self, inputs: list[JsonObj]) -> None:
        thread, turn = self.thread, self.turn
        item = it.user_message(new_uuid7(), it.user_input_to_content(inputs), started_at_ms=it.now_ms())
        if not thread.preview:
            thread.preview = " ".join(it.user_input_texts(inputs))[:200]
        await thread.emit("item/started", it.started_params(item, thread.id, turn.id))
        await self._record_history([user_message_item(it.user_input_texts(inputs) or [""])])
        if self._inject is not None:  # skills named by the input ride along as extra user messages
            await self._record_history([user_message_item([text]) for text in self._inject(inputs)])
        await self.complete_item(dict(item, completedAtMs=it.now_ms()))

    async def complete_item(self, item: JsonObj) -> None:
        """Store ``item`` durably, then announce it (whole; the turn keeps the stored form, as Codex does)."""
        thread, turn = self.thread, self.turn
        stored = persisted_item(item)
        await asyncio.to_thread(thread.writer.item_completed, turn.id, stored)
        turn.items.append(stored)
        if item["type"] == "agentMessage":
            turn.last_agent_message = item
        await thread.emit("item/completed", it.completed_params(item, thread.id, turn.id))

    # -- one model request -------------------------------------------------------------------------
    def _body(self) -> JsonObj:
        thread, turn = self.thread, self.turn
        settings = thread.settings
        reasoning: JsonObj = {}
        if settings.effort:
            reasoning["effort"] = settings.effort
        reasoning["summary"] = settings.summary or "auto"
        body: JsonObj = {
            "model": settings.model,
            "stream": True,
            "input": thread.history,
            "tools": self._tools,
            "tool_choice": "auto",
            "parallel_tool_calls": True,
            "reasoning": reasoning,
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": thread.id,
            "client_metadata": {"session_id": thread.id, "thread_id": thread.id, "turn_id": turn.id,
                                "root_turn_id": turn.id},
        }
        if turn.output_schema is not None:
            body["text"] = {"format": {"type": "json_schema", "strict": True, "schema": turn.output_schema,
                                       "name": "codex_output_schema"}}
        return body

    async def _on_retry(self, notice: RetryNotice) -> None:
        await self.thread.emit(
            "error",
            {"error": notice.payload.to_wire(), "willRetry": True, "threadId": self.thread.id,
             "turnId": self.turn.id},
        )

    def answered(self, call_id: str) -> None:
        """A tool recorded its own output for ``call_id`` (the interrupt must not add another)."""
        self._unanswered.pop(call_id, None)

    def steer(self) -> None:
        """New input arrived: restart the in-flight request if the model has not said anything yet."""
        self.turn.input_arrived.set()
        mapper, task = self._mapper, self._consume_task
        if mapper is not None and task is not None and not task.done() and not mapper.produced_output:
            self._restart = True
            task.cancel()

    async def _sample(self) -> bool:
        """Run one model request; True when tool outputs (or steer input) call for another."""
        thread, turn = self.thread, self.turn
        self._mapper = mapper = SampleMapper(thread.id, turn.id)
        self._restart = False
        stream = self._gateway.stream(thread, self._body(), self._request_ctx(thread, turn), self._on_retry)
        self._consume_task = task = asyncio.get_running_loop().create_task(self._consume(mapper, stream))
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._restart and current is not None and not current.cancelling():
                return True
            raise
        finally:
            self._mapper = None
            self._consume_task = None

    async def _consume(self, mapper: SampleMapper, stream: AsyncIterator[ResponseEvent]) -> bool:
        thread = self.thread
        called_tools = False
        try:
            async for event in stream:
                for action in mapper.feed(event):
                    if isinstance(action, Emit):
                        await thread.emit(action.method, action.params)
                    elif isinstance(action, ItemDone):
                        await self.complete_item(action.item)
                    elif isinstance(action, HistoryAppend):
                        await self._record_history([action.item])
                    elif isinstance(action, ToolCall):
                        called_tools = True
                        self._unanswered[action.call_id] = time.monotonic()
                        output = await self._tool_handler(self, action)
                        await self._record_history([output])
                        self._unanswered.pop(action.call_id, None)
                    elif isinstance(action, Completed):
                        await self._usage(action.usage)
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        return called_tools

    async def _usage(self, usage: Usage | None) -> None:
        thread = self.thread
        last = {
            "totalTokens": usage.total_tokens if usage else 0,
            "inputTokens": usage.input_tokens if usage else 0,
            "cachedInputTokens": usage.cached_input_tokens if usage else 0,
            "cacheWriteInputTokens": 0,
            "outputTokens": usage.output_tokens if usage else 0,
            "reasoningOutputTokens": usage.reasoning_output_tokens if usage else 0,
        }
        for key, value in last.items():
            thread.total_usage[key] = thread.total_usage.get(key, 0) + value
        thread.last_usage = last
        wire = {"total": dict(thread.total_usage), "last": last, "modelContextWindow": MODEL_CONTEXT_WINDOW}
        await asyncio.to_thread(thread.writer.token_usage, self.turn.id, wire)
        await thread.emit("thread/tokenUsage/updated", {"threadId": thread.id, "turnId": self.turn.id,
                                                        "tokenUsage": wire})
        await thread.emit("account/rateLimits/updated", {"rateLimits": {
            "limitId": "codex", "limitName": None, "normalModelSlug": None, "primary": None, "secondary": None,
            "credits": None, "individualLimit": None, "spendControlReached": None, "planType": None,
            "rateLimitReachedType": None}})
