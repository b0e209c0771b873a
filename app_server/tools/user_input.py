"""``request_user_input``: the model's questions go to the client as ``item/tool/requestUserInput``.

What Codex 0.169 does, which this follows:

* the tool is offered in every collaboration mode, but the call works only where asking is allowed: Plan
  mode, and Default mode with ``[features] default_mode_request_user_input``; elsewhere the model is told
  ``request_user_input is unavailable in Default mode`` and nobody is asked;
* every question needs options (``request_user_input requires non-empty options for every question``);
  each is sent with ``isOther: true``; the request's ``itemId`` is the call id, ``isBlocking`` is false in
  Default mode and ``autoResolutionMs`` null; no thread item is emitted, and the thread's status carries
  ``waitingOnUserInput`` while the question is open;
* the model gets the answer as compact JSON (``{"answers":{"<id>":{"answers":[...]}}}``); an error answer
  (or one that is not a response) counts as no answers, ``{"answers":{}}``;
* an interrupted turn leaves the request open until after ``turn/completed`` (as approvals do).

With no client to ask, pycodex answers ``request_user_input was cancelled before receiving a response``
(Codex's text for a request that ends without a response).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from pydantic import ValidationError

from app_server.protocol.approvals import (
    ToolRequestUserInputParams,
    ToolRequestUserInputQuestion,
    ToolRequestUserInputResponse,
)
from app_server.protocol.base import to_wire
from app_server.store import new_uuid7
from app_server.tools.ask import NoAnswer, ask_clients
from app_server.tools.contracts import ToolOutcome

if TYPE_CHECKING:
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext

__all__ = ["METHOD", "NAME", "handle_request_user_input"]

logger = logging.getLogger(__name__)

NAME = "request_user_input"
METHOD = "item/tool/requestUserInput"
UNAVAILABLE_DEFAULT = "request_user_input is unavailable in Default mode"
MISSING_OPTIONS = "request_user_input requires non-empty options for every question"
CANCELLED = "request_user_input was cancelled before receiving a response"
NO_ANSWERS = '{"answers":{}}'


def _output(call: ToolCall, text: str) -> ToolOutcome:
    return ToolOutcome({"type": "function_call_output", "id": f"fco_{new_uuid7()}", "call_id": call.call_id,
                        "output": text})


def _questions(arguments: str) -> list[ToolRequestUserInputQuestion] | str:
    """The call's questions, or the text that tells the model what is wrong with them."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError as exc:
        return f"failed to parse function arguments: {exc}"
    raw = args.get("questions") if isinstance(args, dict) else None
    if not isinstance(raw, list):
        return "failed to parse function arguments: missing field `questions`"
    try:
        questions = [ToolRequestUserInputQuestion.model_validate(q) for q in raw]
    except ValidationError as exc:
        return f"failed to parse function arguments: {exc.errors()[0]['msg']}"
    if any(not q.options for q in questions):
        return MISSING_OPTIONS
    return [q.model_copy(update={"is_other": True}) for q in questions]


def _answer_text(result: object) -> str:
    """The model's text for the client's result: compact JSON of the answers, no answers if unreadable."""
    try:
        response = ToolRequestUserInputResponse.model_validate(result)
    except ValidationError:
        return NO_ANSWERS
    return json.dumps(to_wire(response), separators=(",", ":"), ensure_ascii=False)


async def handle_request_user_input(ctx: ToolContext, call: ToolCall, *, allowed: bool) -> ToolOutcome:
    """Ask the thread's clients the call's questions (when ``allowed``) and tell the model the answers."""
    if not allowed:
        return _output(call, UNAVAILABLE_DEFAULT)
    questions = _questions(call.arguments)
    if isinstance(questions, str):
        return _output(call, questions)
    thread, turn = ctx.thread, ctx.turn
    params = ToolRequestUserInputParams(thread_id=thread.id, turn_id=turn.id, item_id=call.call_id,
                                        questions=questions, is_blocking=False)
    try:
        text = await ask_clients(ctx, METHOD, to_wire(params), _answer_text)
    except NoAnswer as exc:
        if exc.nobody:
            return _output(call, CANCELLED)
        # a timeout or an error answer: no answers, as Codex tells the model
        logger.info("request_user_input %s ended without an answer: %s", call.call_id, exc.cause)
        text = NO_ANSWERS
    return _output(call, text)
