"""turn/* requests: start (or merge into the active turn), steer and interrupt."""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.handlers.announce import announce
from app_server.handlers.goal_continuation import arm_goal_loop
from app_server.protocol import notices
from app_server.protocol import turns as p
from app_server.protocol.base import to_wire
from app_server.store import new_uuid7
from app_server.threads.manager import settings_wire
from app_server.threads.overrides import apply_turn_overrides
from app_server.threads.runner import TurnRunner
from app_server.threads.state import TurnState
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidParams, InvalidRequest

__all__ = ["turn_interrupt", "turn_start", "turn_steer"]


#: Codex refuses a turn/start or turn/steer whose text inputs hold more characters than this.
MAX_INPUT_CHARS = 1 << 20


def _inputs(params: p.TurnStartParams | p.TurnSteerParams) -> list[JsonObj]:
    return [to_wire(part) if hasattr(part, "model_dump") else dict(part) for part in params.input]


def _check_input_size(inputs: list[JsonObj]) -> None:
    """Refuse oversized text the way Codex does (characters are code points, summed over text parts), and
    remote image URLs (only inline data URLs reach the model)."""
    for part in inputs:
        if part.get("type") == "image" and str(part.get("url", "")).lower().startswith(("http://", "https://")):
            raise InvalidRequest("remote image URLs are not supported; use an inline data URL instead")
    actual = sum(
        len(part["text"]) for part in inputs if part.get("type") == "text" and isinstance(part.get("text"), str)
    )
    if actual > MAX_INPUT_CHARS:
        raise InvalidParams(
            f"Input exceeds the maximum length of {MAX_INPUT_CHARS} characters.",
            data={"input_error_code": "input_too_large", "max_chars": MAX_INPUT_CHARS, "actual_chars": actual},
        )


def _accepted(turn: TurnState) -> p.TurnStartResponse:
    # The response shows the turn as accepted: in progress, no start time yet.
    return p.TurnStartResponse(turn=dict(turn.wire(view="notLoaded"), startedAt=None))


async def turn_start(ctx: HandlerContext, params: p.TurnStartParams) -> p.TurnStartResponse:
    services = ctx.services
    thread = services.threads.get_loaded(params.thread_id)
    inputs = _inputs(params)
    _check_input_size(inputs)
    services.threads.subscribe(thread, ctx.session)
    active = thread.active
    if active is not None:
        # Codex merges a start during an active turn into that turn (same id), like a steer.
        thread.steer(inputs, params.client_user_message_id)
        return _accepted(active)
    if apply_turn_overrides(thread.settings, params):
        await asyncio.to_thread(thread.writer.settings_changed, thread.settings.to_record())
        # Codex announces changed sticky settings before it answers the turn/start
        await announce(ctx, thread.id, notices.thread_settings_updated(thread.id, settings_wire(thread.settings)))
    turn = TurnState(new_uuid7(), inputs=inputs)
    turn.client_message_id = params.client_user_message_id  # the user message item's clientId, as Codex
    turn.output_schema = params.output_schema if isinstance(params.output_schema, dict) else None
    runner = TurnRunner(thread=thread, turn=turn, services=await services.turn_services(thread, ctx.session))
    arm_goal_loop(ctx, thread)  # a goal active when this turn ends (the model's create_goal too) continues
    ctx.session.after_response(thread.start_turn(turn, runner, services.spawn))
    return _accepted(turn)


async def turn_steer(ctx: HandlerContext, params: p.TurnSteerParams) -> p.TurnSteerResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    inputs = _inputs(params)
    _check_input_size(inputs)
    active = thread.active
    if active is None:
        raise InvalidRequest("no active turn to steer")
    if active.id != params.expected_turn_id:
        raise InvalidRequest(f"expected active turn id `{params.expected_turn_id}` but found `{active.id}`")
    thread.steer(inputs, params.client_user_message_id)
    return p.TurnSteerResponse(turn_id=active.id)


async def turn_interrupt(ctx: HandlerContext, params: p.TurnInterruptParams) -> p.TurnInterruptResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    active = thread.active
    if active is None or active.id != params.turn_id:
        raise InvalidRequest("no active turn to interrupt")

    async def interrupt() -> None:  # after the response, as Codex orders it
        thread.interrupt()

    ctx.session.after_response(interrupt)
    return p.TurnInterruptResponse()
