"""thread/queue/*: user submissions that wait for the thread to be idle, answered as Codex 0.169 does.

A submission added to an idle thread starts a turn at once (Codex announces ``thread/queue/changed`` for
the add and again for the start, before its answer); otherwise it waits, and when a turn ends with the
thread idle the next one starts. The queue lives with the loaded thread (``ThreadRuntime.queued``)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

from app_server.context import HandlerContext
from app_server.handlers.announce import announce
from app_server.handlers.goal_continuation import arm_goal_loop
from app_server.protocol import notices
from app_server.protocol import responses_named as rn
from app_server.protocol.base import to_wire
from app_server.protocol.items import UserInput
from app_server.protocol.responses_threads import (
    ThreadQueueAddResponse,
    ThreadQueueDeleteResponse,
    ThreadQueueListResponse,
    ThreadQueueStartResponse,
    ThreadQueueUpdateResponse,
)
from app_server.protocol.thread_requests import (
    ThreadQueueAddParams,
    ThreadQueueDeleteParams,
    ThreadQueueListParams,
    ThreadQueueReorderParams,
    ThreadQueueStartParams,
    ThreadQueueUpdateParams,
)
from app_server.store import new_uuid7
from app_server.threads.idle_hooks import QUEUE_RANK, add_idle_hook
from app_server.threads.runner import TurnRunner
from app_server.threads.state import ThreadRuntime, TurnState
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["queue_add", "queue_delete", "queue_list", "queue_reorder", "queue_start", "queue_update"]

Launch = Callable[[], Awaitable[None]]


def _inputs(parts: list[UserInput]) -> list[JsonObj]:
    """A submission's input as stored, refused (in Codex's words) when the queue cannot hold it: empty, a
    remote image (only inline data and file URLs), or a local image that cannot be read."""
    inputs = [to_wire(part) if hasattr(part, "model_dump") else dict(part) for part in parts]
    if not inputs:
        raise InvalidRequest("only user input can be added to the user-message queue")
    for part in inputs:
        if part.get("type") == "image" and str(part.get("url", "")).lower().startswith(("http://", "https://")):
            raise InvalidRequest("remote image URLs are not supported; use an inline data URL instead")
        if part.get("type") == "localImage":
            try:
                os.stat(str(part.get("path", "")))
            except OSError as exc:  # worded as Rust's io::Error
                raise InvalidRequest(
                    f"local queued attachment is invalid: {exc.strerror} (os error {exc.errno})"
                ) from None
    return inputs


def _find(thread: ThreadRuntime, submission_id: str) -> JsonObj:
    for entry in thread.queued:
        if entry["id"] == submission_id:
            return entry
    raise InvalidRequest(f"queued submission not found: {submission_id}")


async def _changed(ctx: HandlerContext, thread: ThreadRuntime) -> None:
    await announce(ctx, thread.id, notices.thread_queue_changed(thread.id))


async def _start(ctx: HandlerContext, thread: ThreadRuntime, entry: JsonObj) -> tuple[TurnState, Launch]:
    """Take ``entry`` off the queue and make it the active turn; the caller runs the launcher."""
    services = ctx.services
    thread.queued.remove(entry)
    turn = TurnState(new_uuid7(), inputs=entry["input"])
    turn.client_message_id = entry["clientUserMessageId"]
    runner = TurnRunner(thread=thread, turn=turn, services=await services.turn_services(thread, ctx.session))
    arm_goal_loop(ctx, thread)  # as turn/start: a goal still active when the turn ends continues
    return turn, thread.start_turn(turn, runner, services.spawn)


def _arm(ctx: HandlerContext, thread: ThreadRuntime) -> None:
    """Start the next submission whenever a turn ends with the thread idle."""
    async def next_submission() -> None:
        if thread.queued and thread.active is None:
            _, launch = await _start(ctx, thread, thread.queued[0])
            await _changed(ctx, thread)
            await launch()

    add_idle_hook(thread, "queue", QUEUE_RANK, next_submission)  # before goal continuation, as in Codex


async def queue_add(ctx: HandlerContext, params: ThreadQueueAddParams) -> ThreadQueueAddResponse:
    services = ctx.services
    thread = services.threads.get_loaded(params.thread_id)
    services.threads.subscribe(thread, ctx.session)
    entry = {"id": new_uuid7(), "input": _inputs(params.input), "clientUserMessageId": params.client_user_message_id,
             "responsesapiClientMetadata": params.responsesapi_client_metadata}
    thread.queued.append(entry)
    _arm(ctx, thread)
    await _changed(ctx, thread)
    if thread.active is None and thread.queued[0] is entry:
        _, launch = await _start(ctx, thread, entry)
        await _changed(ctx, thread)
        ctx.session.after_response(launch)
    return ThreadQueueAddResponse(queued_submission=entry)


async def queue_list(ctx: HandlerContext, params: ThreadQueueListParams) -> ThreadQueueListResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    return ThreadQueueListResponse(data=list(thread.queued), next_cursor=None)


async def queue_update(ctx: HandlerContext, params: ThreadQueueUpdateParams) -> ThreadQueueUpdateResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    inputs = _inputs(params.input)  # Codex checks the input before it looks the submission up
    entry = _find(thread, params.queued_submission_id)
    entry["input"] = inputs
    if params.responsesapi_client_metadata:  # non-empty replaces; omitted or empty keeps
        entry["responsesapiClientMetadata"] = params.responsesapi_client_metadata
    await _changed(ctx, thread)
    return ThreadQueueUpdateResponse(queued_submission=entry)


async def queue_delete(ctx: HandlerContext, params: ThreadQueueDeleteParams) -> ThreadQueueDeleteResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    try:
        entry = _find(thread, params.queued_submission_id)
    except InvalidRequest:
        return ThreadQueueDeleteResponse(deleted=False)
    thread.queued.remove(entry)
    await _changed(ctx, thread)
    return ThreadQueueDeleteResponse(deleted=True)


async def queue_reorder(
    ctx: HandlerContext, params: ThreadQueueReorderParams
) -> rn.ThreadQueueReorderResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    ids = params.queued_submission_ids
    by_id = {e["id"]: e for e in thread.queued}
    if len(ids) != len(by_id) or set(ids) != set(by_id):
        raise InvalidRequest("queue reorder must include every queued submission exactly once")
    thread.queued[:] = [by_id[i] for i in ids]
    await _changed(ctx, thread)
    return rn.ThreadQueueReorderResponse()


async def queue_start(ctx: HandlerContext, params: ThreadQueueStartParams) -> ThreadQueueStartResponse:
    thread = ctx.services.threads.get_loaded(params.thread_id)
    if not thread.queued:
        raise InvalidRequest("queue is empty")
    entry = thread.queued[0] if params.queued_submission_id is None else _find(thread, params.queued_submission_id)
    if thread.active is not None:
        raise InvalidRequest(f"thread {thread.id} already has an active turn")
    ctx.services.threads.subscribe(thread, ctx.session)
    turn, launch = await _start(ctx, thread, entry)
    await _changed(ctx, thread)
    ctx.session.after_response(launch)
    return ThreadQueueStartResponse(turn=dict(turn.wire(view="notLoaded"), startedAt=None))
