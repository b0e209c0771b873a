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
from collections.abc import AsyncIterator

from app_server.model.errors import ModelError, RetryNotice
from app_server.model.events import ResponseEvent, Usage
from app_server.model.provider import RequestContext
from app_server.notify import turn_complete_payload
from app_server.protocol import notices
from app_server.store import new_uuid7, persisted_item
from app_server.threads import items as it
from app_server.threads.goal_meter import GoalMeter
from app_server.threads.lifecycle import TurnEvent, TurnStatus
from app_server.threads.model_metadata import fallback_metadata_warning
from app_server.threads.prompt import ContextInputs, developer_message, initial_context, user_message_item
from app_server.threads.sampling import Completed, Emit, HistoryAppend, ItemDone, SampleMapper, ToolCall
from app_server.threads.services import TurnServices
from app_server.threads.state import MODEL_CONTEXT_WINDOW, Subscriber, ThreadRuntime, TurnState
from app_server.tools.code_mode.specs import request_input
from app_server.tools.images import load_user_content, model_input
from app_server.tools.tool_search import TOOLS_TAG, tools_section
from pycodex import otel
from pycodex.json_types import JsonObj
from pycodex.log_context import bind_turn

__all__ = ["TurnCancelled", "TurnFailed", "TurnRunner"]

logger = logging.getLogger(__name__)


TURN_ABORTED = (
    "<turn_aborted>\nThe user stopped the previous turn on purpose. Anything it was doing may be "
    "unfinished; do not resume it unless asked.\n</turn_aborted>"
)


#: Tools whose interrupted calls Codex reports in the exec form ("Wall time: ...\naborted by user").
SHELL_FAMILY = frozenset({"exec_command", "write_stdin", "shell", "shell_command", "local_shell"})

PERMISSIONS_TAG = "<permissions instructions>"
ENVIRONMENT_TAG = "<environment_context>"


def _last_part(history: list[JsonObj], tag: str, seen: dict[str, tuple[int, str | None]]) -> str | None:
    """The most recent message text part in ``history`` that starts with ``tag``. ``seen`` remembers how far
    earlier calls got, so only entries appended since are read: a turn's cost must not grow with the thread."""
    start, found = seen.get(tag, (0, None))
    if start > len(history):
        start, found = 0, None
    for index in range(len(history) - 1, start - 1, -1):
        item = history[index]
        text = _tagged_text(item, tag) if item.get("type") == "message" else None
        if text is not None:
            found = text
            break
    seen[tag] = (len(history), found)
    return found


def _tagged_text(item: JsonObj, tag: str) -> str | None:
    for part in reversed(item.get("content") or []):
        text = part.get("text") if isinstance(part, dict) else None
        if isinstance(text, str) and text.startswith(tag):
            return text
    return None


class TurnCancelled(Exception):
    """The user cancelled from an approval prompt: the turn ends as interrupted."""


class TurnFailed(Exception):
    """A tool ended the turn as failed (its environment was lost): ``error`` is the ``TurnError``."""

    def __init__(self, error: JsonObj) -> None:
        super().__init__(error.get("message"))
        self.error = error


class TurnRunner:
    """Carries out one turn: the mapper turns response events into actions, tools return outcomes, and
    the runner records both. It is also the ``ToolContext`` tools see."""

    #: Whether the turn's end marks it unread (``thread/readState/changed``), and how ``turn/completed``
    #: shows a completed turn; a compaction turn does neither (as Codex).
    reports_read_state = True
    completed_view = "summary"

    def __init__(self, *, thread: ThreadRuntime, turn: TurnState, services: TurnServices) -> None:
        self.thread = thread
        self.turn = turn
        self.services = services
        #: Function calls whose output has not been recorded yet (kept valid on interrupt).
        #: call id -> when it started (monotonic) and whether it is a shell-family call (its abort text differs)
        self._unanswered: dict[str, tuple[float, bool]] = {}
        self._mapper: SampleMapper | None = None
        self._consume_task: asyncio.Task[bool] | None = None
        self._restart = False
        self._late_tools: tuple[JsonObj, ...] = ()
        #: Counts the turn's tokens and time toward the thread's goal (``threads.goal_meter``).
        self._goal = GoalMeter(thread, turn.id)

    @property
    def origin(self) -> Subscriber | None:
        """The connection that started the turn (asked first for approvals); None without a client."""
        return self.services.origin

    # -- the turn --------------------------------------------------------------------------------
    async def run(self) -> None:
        """Run the turn from ``turn/started`` to ``turn/completed``; it ends exactly once, come what may."""
        thread, turn = self.thread, self.turn
        bind_turn(thread.id, turn.id)  # every log record of this turn carries both ids
        span = otel.turn_started(thread.id, turn.id, thread.settings.model, turn.inputs)
        outcome, error = TurnEvent.COMPLETE, None
        try:
            await thread.record_turn_start(turn)
            fallback = fallback_metadata_warning(thread.settings.model)
            if fallback is not None:  # as Codex: before the thread turns active, on every turn
                await thread.emit(notices.warning(thread.id, fallback))
            await thread.emit_status()
            await thread.emit(notices.turn_started(thread.id, turn.wire(view="notLoaded")))
            await self._goal.start()
            if self.services.late_tool_specs is not None:  # before the context: it names deferred MCP tools
                self._late_tools = await self.services.late_tool_specs()
            if not thread.history:
                extra = self.services.additional_tools  # code mode: Codex's leading additional_tools item
                await self._record_history([*([extra] if extra is not None else []), *self._initial_context()])
            else:
                await self._record_history(self._model_switch() + self._context_updates())
            thread.model_seen = thread.settings.model
            await self._pending_context()
            await self.opening_input()
            while True:
                follow_up = await self._sample()
                if await self._pending_context():
                    follow_up = True
                if turn.pending_inputs:
                    for inputs, client_id in zip(turn.pending_inputs, turn.pending_client_ids, strict=True):
                        await self._user_input(inputs, client_id=client_id)
                    turn.pending_inputs.clear()
                    turn.pending_client_ids.clear()
                    follow_up = True
                if not follow_up:
                    break
        except (asyncio.CancelledError, TurnCancelled):
            outcome = TurnEvent.ABORT
        except ModelError as exc:
            outcome, error = TurnEvent.FAIL, exc.payload.to_wire()
        except TurnFailed as exc:
            outcome, error = TurnEvent.FAIL, exc.error
        except Exception as exc:  # a bug must still end the turn exactly once
            logger.exception("turn %s crashed", turn.id)
            outcome, error = TurnEvent.FAIL, {"message": f"internal error: {exc}", "codexErrorInfo": "other",
                                              "additionalDetails": None, "misalignment": None}
        await asyncio.shield(self._end(outcome, error))
        otel.turn_ended(span, outcome.value, error)
        hook = thread.idle_hook
        if hook is not None and thread.active is None:
            await hook()

    async def _end(self, outcome: TurnEvent, error: JsonObj | None) -> None:
        thread, turn = self.thread, self.turn
        try:
            goal_goes_on = await self._goal.turn_ended(outcome, error)
        except Exception:
            logger.exception("could not count turn %s toward the thread's goal", turn.id)
            goal_goes_on = False
        if outcome is TurnEvent.ABORT:
            now = time.monotonic()
            aborted = [  # what Codex tells the model about a call cut short by the interrupt
                {"type": "function_call_output", "call_id": call_id,
                 "output": f"Wall time: {now - started:.1f} seconds\naborted by user" if shell
                 else f"aborted by user after {now - started:.1f}s"}
                for call_id, (started, shell) in self._unanswered.items()
            ]
            await self._record_history([*aborted, user_message_item([TURN_ABORTED])])
        ended = thread.end_turn(turn, outcome, error)
        try:
            await asyncio.to_thread(
                thread.writer.turn_ended, turn.id, ended.value, error=error, completed_at=turn.completed_at,
                duration_ms=turn.duration_ms,
            )
        except Exception:
            logger.exception("could not record the end of turn %s", turn.id)
        if ended is TurnStatus.FAILED:
            await thread.emit_status()
            await thread.emit(notices.error(error, will_retry=False, thread_id=thread.id, turn_id=turn.id))
        elif self.reports_read_state:
            read_states = thread.services.read_states
            # A throwaway thread has no read state to report, and a turn its goal continues from leaves the
            # thread's read state alone (Codex sends neither).
            if not thread.ephemeral and not goal_goes_on:
                if read_states is not None:
                    read_state = await asyncio.to_thread(read_states.turn_completed, thread.id, turn.id)
                else:
                    read_state = {"firstUnread": {"type": "turn", "turnId": turn.id}, "revision": str(uuid.uuid4())}
                await thread.emit(notices.thread_read_state_changed(thread.id, read_state))
            await thread.emit_status()
        else:
            await thread.emit_status()
        view = self.completed_view if ended is TurnStatus.COMPLETED else "notLoaded"
        await thread.emit(notices.turn_completed(thread.id, turn.wire(view=view)))
        notify = self.services.on_turn_completed
        if notify is not None and ended is TurnStatus.COMPLETED and turn.inputs:  # not compaction or shell turns
            last = turn.last_agent_message
            await notify(turn_complete_payload(
                thread_id=thread.id, turn_id=turn.id, cwd=str(thread.settings.cwd),
                client=self.services.client.originator, inputs=it.user_input_texts(turn.inputs),
                last_message=str(last["text"]) if last else None))
        for key in list(turn.open_requests):
            pending = turn.open_requests.pop(key)
            await pending.close(thread.id)

    # -- inputs and history ----------------------------------------------------------------------
    async def opening_input(self) -> None:
        """Record the input the turn opens with: the user's message (a goal continuation hides its own)."""
        await self._user_input(self.turn.inputs, client_id=self.turn.client_message_id)

    async def _pending_context(self) -> bool:
        """Record the model-only messages that arrived for this turn (a sub-agent's completion notice),
        so the next request sees them; True when there were any."""
        entries, self.thread.pending_context = self.thread.pending_context, []
        await self._record_history(entries)
        return bool(entries)

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
        fresh = [p["text"] for item in self._initial_context() for p in item.get("content", [])]
        updates: list[JsonObj] = []
        for tag, make in ((PERMISSIONS_TAG, developer_message), (ENVIRONMENT_TAG, lambda t: user_message_item(t))):
            current = next((t for t in fresh if t.startswith(tag)), None)
            if current is not None and current != _last_part(self.thread.history, tag, self.thread.context_seen):
                updates.append(make([current]))
        tools = self._tools_section(_last_part(self.thread.history, TOOLS_TAG, self.thread.context_seen))
        return [*updates, developer_message([tools])] if tools is not None else updates

    def _tools_section(self, previously: str | None) -> str | None:
        """The ``<tools>`` part to send now, when the model is offered tool_search (see ``tools.tool_search``)."""
        if not any(spec.get("type") == "tool_search" for spec in self.services.tool_specs):
            return None
        return tools_section(self.thread.services.mcp, previously=previously)

    async def _user_input(self, inputs: list[JsonObj], *, client_id: str | None = None) -> None:
        thread, turn = self.thread, self.turn
        item = dict(it.user_message(new_uuid7(), it.user_input_to_content(inputs), started_at_ms=it.now_ms()),
                    clientId=client_id)
        if not thread.preview:
            thread.preview = " ".join(it.user_input_texts(inputs))[:200]
        await thread.emit(notices.item_started(item, thread.id, turn.id))
        content = await load_user_content(inputs, cwd=thread.settings.cwd, model=thread.settings.model)
        message = user_message_item([""])
        message["content"] = content or message["content"]
        await self._record_history([message])
        # Skills named by the input ride along as extra user messages.
        injected = thread.services.skills.injections(inputs)
        await self._record_history([user_message_item([text]) for text in injected])
        await self.complete_item(dict(item, completedAtMs=it.now_ms()))

    async def complete_item(self, item: JsonObj) -> None:
        """Store ``item`` durably, then announce it (whole; the turn keeps the stored form, as Codex does)."""
        thread, turn = self.thread, self.turn
        stored = persisted_item(item)
        await asyncio.to_thread(thread.writer.item_completed, turn.id, stored)
        otel.item_completed(item)
        turn.keep_item(stored)
        if item["type"] == "agentMessage":
            turn.last_agent_message = item
        await thread.emit(notices.item_completed(item, thread.id, turn.id))

    def _initial_context(self) -> list[JsonObj]:
        thread, s = self.thread, self.thread.settings
        return initial_context(ContextInputs(
            environment=thread.services.environment.status(), skills_sections=thread.services.skills.sections(),
            cwd=s.cwd, sandbox_mode=s.sandbox_mode, approval_policy=s.approval_policy,
            writable_roots=list(s.writable_roots), base_instructions=s.base_instructions,
            developer_instructions=s.developer_instructions,
            project_root_markers=self.services.project_root_markers, tools_section=self._tools_section(None),
        ))

    # -- one model request -------------------------------------------------------------------------
    def request_body(self) -> JsonObj:
        """The Responses request of this turn's next step (thread/sample sends the same, plus its prompt)."""
        thread, turn = self.thread, self.turn
        settings, step = thread.settings, turn.step_settings  # step: a turn/settings/update of this turn
        model = turn.model(settings.model)
        effort = step["effort"] if "effort" in step else settings.effort
        reasoning: JsonObj = {}
        if effort:
            reasoning["effort"] = effort
        reasoning["summary"] = step.get("summary") or settings.summary or "auto"
        body: JsonObj = {
            "model": model,
            "stream": True,
            "input": request_input(model_input(thread.history, model), self.services.additional_tools),
            "tools": [*self.services.tool_specs, *self._late_tools],
            "tool_choice": "auto",
            "parallel_tool_calls": True,
            "reasoning": reasoning,
            "store": False,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": self._session_id,
            "client_metadata": {"session_id": self._session_id, "thread_id": thread.id, "turn_id": turn.id,
                                "root_turn_id": turn.id},
        }
        if self.services.additional_tools is not None:  # code mode: the tools ride in the input
            del body["tools"]
            body["parallel_tool_calls"] = False
        if turn.output_schema is not None:
            body["text"] = {"format": {"type": "json_schema", "strict": True, "schema": turn.output_schema,
                                       "name": "codex_output_schema"}}
        return body

    def request_context(self) -> RequestContext:
        """Who asks, for the model client: ids, client identity and the turn's request metadata."""
        thread, turn, client = self.thread, self.turn, self.services.client
        metadata = {
            "session_id": self._session_id, "thread_id": thread.id, "turn_id": turn.id,
            "window_id": f"{thread.id}:0",
            "request_kind": "turn", "history_initialization": thread.history_initialization,
            "sandbox_mode": thread.settings.sandbox_mode,
            "model": turn.model(thread.settings.model),
        }
        spawned = isinstance(thread.meta.get("source"), dict) and thread.meta.get("parentThreadId")
        return RequestContext(thread_id=thread.id, turn_id=turn.id, originator=client.originator,
                              user_agent=client.user_agent, turn_metadata=metadata, session_id=self._session_id,
                              subagent_parent=str(spawned) if spawned else None)

    @property
    def _session_id(self) -> str:
        """The session of the thread: a sub-agent shares its root thread's (prompt cache, session-id)."""
        return str(self.thread.meta.get("sessionId") or self.thread.id)

    async def _on_retry(self, notice: RetryNotice) -> None:
        await self.thread.emit(notices.error(notice.payload.to_wire(), will_retry=True, thread_id=self.thread.id,
                                             turn_id=self.turn.id))

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
        stream = self.services.model.stream(thread.settings.model_provider, self.request_body(), self.request_context(),
                                            self._on_retry)
        stream = otel.model_stream(stream, model=thread.settings.model, provider=thread.settings.model_provider)
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
                        await thread.emit(action.notice)
                    elif isinstance(action, ItemDone):
                        await self.complete_item(action.item)
                    elif isinstance(action, HistoryAppend):
                        await self._record_history([action.item])
                    elif isinstance(action, ToolCall):
                        called_tools = True
                        shell = action.namespace is None and action.name in SHELL_FAMILY
                        self._unanswered[action.call_id] = (time.monotonic(), shell)
                        outcome = await otel.tool_call(action.name, action.call_id, self.services.run_tool(self, action))
                        await self._record_history([outcome.output, *outcome.extra])
                        self._unanswered.pop(action.call_id, None)
                        if outcome.end_turn:
                            raise TurnCancelled()
                        if outcome.turn_error is not None:
                            raise TurnFailed(outcome.turn_error)
                    elif isinstance(action, Completed):
                        await self._usage(action.usage)
                        await self._record_history(await self._goal.response_done(mid_work=called_tools))
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
        await thread.emit(notices.token_usage_updated(thread.id, self.turn.id, wire))
        await thread.emit(notices.rate_limits_updated())
        # Codex reports the turn's diff again after each model response once a patch has changed files.
        diff = None if self.turn.diff is None else self.turn.diff.unified_diff()
        if diff is not None:
            await thread.emit(notices.turn_diff_updated(thread.id, self.turn.id, diff))
