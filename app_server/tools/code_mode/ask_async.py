"""``request_user_input_async``: questions shown to the user while the turn goes on.

As Codex 0.169 does it (observed on the binary): the questions become one completed ``agentMessage`` item
(id = the call id, ``phase: final_answer``, ``delivery: async``, ``questions`` as asked with ``options``
null when absent, ``text`` each title followed by ``- option`` lines, questions separated by a blank
line), and the call answers ``{"accepted":true}`` at once. An answer is ordinary user input later
(turn/steer or a new turn); nothing waits for it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from app_server.protocol import notices
from app_server.threads import items as it
from app_server.tools.call_output import call_output
from app_server.tools.contracts import ToolOutcome
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext

__all__ = ["ACCEPTED", "handle_ask_async"]

ACCEPTED = '{"accepted":true}'


def _questions(arguments: str) -> list[JsonObj]:
    """The questions of the call, or ValueError with what is wrong (pycodex's texts)."""
    args = json.loads(arguments or "{}")
    questions = args.get("questions") if isinstance(args, dict) else None
    if not isinstance(questions, list) or not questions:
        raise ValueError("`questions` must be a non-empty list")
    out: list[JsonObj] = []
    for question in questions:
        title = question.get("title") if isinstance(question, dict) else None
        options = question.get("options") if isinstance(question, dict) else None
        if not isinstance(title, str):
            raise ValueError("every question needs a `title` string")
        if options is not None and (not isinstance(options, list) or not options
                                    or not all(isinstance(o, str) for o in options)):
            raise ValueError("`options` must be a non-empty list of strings")
        out.append({"title": title, "options": options})
    return out


async def handle_ask_async(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
    """Show the questions as an async agentMessage item and accept the call."""
    try:
        questions = _questions(call.arguments)
    except ValueError as exc:
        return ToolOutcome(call_output(call, f"failed to parse function arguments: {exc}"))
    text = "\n\n".join(q["title"] + "".join(f"\n- {o}" for o in q["options"] or []) for q in questions)
    item = it.agent_message(call.call_id, text, phase="final_answer", started_at_ms=it.now_ms())
    item.update(delivery="async", questions=questions)
    await ctx.thread.emit(notices.item_started(item, ctx.thread.id, ctx.turn.id))
    await ctx.complete_item(dict(item, completedAtMs=it.now_ms()))
    return ToolOutcome(call_output(call, ACCEPTED))
