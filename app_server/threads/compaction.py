"""A compaction turn (``thread/compact/start``): the model summarises the conversation so far, and the
thread's model history is replaced by a short one that carries that summary instead of the old exchange.

Wire shape follows Codex 0.169 with a local provider: ``turn/started``, one ``contextCompaction`` item
(started, then completed once the history is replaced), token usage for the summarising request, the idle
status and ``turn/completed`` with no items shown. The summarising request has no tools, and its answer is
not shown as an agent message. The new history keeps the user's own messages (the context messages are
rebuilt fresh just before the last of them, as Codex places them) and ends with the summary. The prompt
texts are pycodex's own.
"""

from __future__ import annotations

import asyncio

from app_server.model.errors import ModelError
from app_server.protocol import notices
from app_server.store import new_uuid7
from app_server.threads import items as it
from app_server.threads.lifecycle import TurnEvent
from app_server.threads.prompt import user_message_item
from app_server.threads.runner import TurnCancelled, TurnRunner
from app_server.threads.sampling import Completed, ItemDone, SampleMapper
from pycodex.json_types import JsonObj
from pycodex.log_context import bind_turn

__all__ = ["SUMMARY_PREFIX", "SUMMARY_REQUEST", "CompactionRunner", "compacted_history"]


SUMMARY_REQUEST = (
    "Checkpoint: the conversation above is about to be condensed, and another assistant will carry on from "
    "your notes alone. Write those notes now. Cover what the user asked for, what has been done and decided, "
    "which files and commands matter, what is still open, and the next concrete steps. Be brief and factual; "
    "do not address the user."
)

SUMMARY_PREFIX = (
    "Earlier parts of this conversation were condensed. These are the notes left by the assistant that "
    "handled them; rely on them to continue the work:"
)

#: Text openings of the user-role messages the harness writes (context, skills, interrupts), not the user.
_HARNESS_TAGS = ("<environment_context>", "# AGENTS.md instructions", "<turn_aborted>", "<skill>", "<user_instructions>")


def _texts(item: JsonObj) -> list[str]:
    return [p["text"] for p in item.get("content") or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _is_user_turn(item: JsonObj) -> bool:
    if item.get("type") != "message" or item.get("role") != "user":
        return False
    texts = _texts(item)
    return not any(t.startswith(_HARNESS_TAGS) or t.startswith(SUMMARY_PREFIX) for t in texts)


def compacted_history(history: list[JsonObj], fresh_context: list[JsonObj], summary: str) -> list[JsonObj]:
    """The replacement history: base instructions first, the user's messages with the rest of the fresh
    context before the last of them, then the summary as a user message."""
    base, rest = fresh_context[:1], fresh_context[1:]
    users = [item for item in history if _is_user_turn(item)]
    out = [*base, *users[:-1], *rest, *users[-1:]]
    out.append(user_message_item([f"{SUMMARY_PREFIX}\n{summary}"]))
    return out


class CompactionRunner(TurnRunner):
    """Runs a compaction turn in place of the agent loop; the turn ends the way every turn ends."""

    reports_read_state = False
    completed_view = "notLoaded"

    async def run(self) -> None:
        """Run the compaction turn: summarise the history, replace it with the summary, then end the turn."""
        thread, turn = self.thread, self.turn
        bind_turn(thread.id, turn.id)
        outcome, error = TurnEvent.COMPLETE, None
        try:
            await thread.record_turn_start(turn)
            await thread.emit_status()
            await thread.emit(notices.turn_started(thread.id, turn.wire(view="notLoaded")))
            item: JsonObj = {"type": "contextCompaction", "id": new_uuid7(), "startedAtMs": it.now_ms(),
                             "completedAtMs": None}
            await thread.emit(notices.item_started(item, thread.id, turn.id))
            summary = await self._summarize()
            replacement = compacted_history(thread.history, self._initial_context(), summary)
            thread.history[:] = replacement
            thread.context_seen.clear()
            await asyncio.to_thread(thread.writer.compacted, replacement)
            await self.complete_item(dict(item, completedAtMs=it.now_ms()))
        except (asyncio.CancelledError, TurnCancelled):
            outcome = TurnEvent.ABORT
        except ModelError as exc:
            outcome, error = TurnEvent.FAIL, exc.payload.to_wire()
        await asyncio.shield(self._end(outcome, error))

    async def _summarize(self) -> str:
        """One tool-less request over the whole history plus the summary request; its last message text."""
        thread, turn = self.thread, self.turn
        body = self.request_body()
        body["input"] = [*thread.history, user_message_item([SUMMARY_REQUEST])]
        body["tools"] = []
        mapper = SampleMapper(thread.id, turn.id)
        stream = self.services.model.stream(thread.settings.model_provider, body, self.request_context(),
                                            self._on_retry)
        summary = ""
        try:
            async for event in stream:
                for action in mapper.feed(event):
                    if isinstance(action, ItemDone) and action.item.get("type") == "agentMessage":
                        summary = str(action.item.get("text") or "")
                    elif isinstance(action, Completed):
                        await self._usage(action.usage)
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        return summary
