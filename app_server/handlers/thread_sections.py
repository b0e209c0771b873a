"""threadSection/list, create, update, delete; thread/section/move; thread/delete; thread/metadata/update."""

from __future__ import annotations

import asyncio
import logging

from app_server.context import HandlerContext
from app_server.handlers import projects
from app_server.handlers.announce import announce
from app_server.protocol import notices
from app_server.protocol import responses_named as rn
from app_server.protocol import thread_sections as p
from app_server.protocol.threads import Thread
from app_server.store import ThreadNotFoundError, parse_thread_id
from app_server.store.thread_sections import SectionNotFound
from app_server.threads import history
from app_server.threads.sections import overlay
from pycodex.jsonrpc.errors import InvalidParams, InvalidRequest

__all__ = [
    "metadata_update", "section_create", "section_delete", "section_list", "section_move", "section_update",
    "thread_delete",
]

logger = logging.getLogger(__name__)


async def section_list(ctx: HandlerContext, params: p.ThreadSectionListParams) -> p.ThreadSectionListResponse:
    sections = await asyncio.to_thread(ctx.services.thread_state.sections)
    start = int(params.cursor) if params.cursor and params.cursor.isdigit() else 0
    if params.cursor and not params.cursor.isdigit():
        raise InvalidRequest(f"invalid cursor: {params.cursor}")
    size = params.limit or len(sections) or 1
    page = sections[start : start + size]
    more = start + size < len(sections)
    return p.ThreadSectionListResponse(data=page, next_cursor=str(start + size) if more else None)


async def section_create(
    ctx: HandlerContext, params: p.ThreadSectionCreateParams
) -> rn.ThreadSectionCreateResponse:
    appearance = params.appearance.model_dump(by_alias=True) if params.appearance else None
    section = await asyncio.to_thread(ctx.services.thread_state.create_section, params.name, appearance)
    return rn.ThreadSectionCreateResponse(section=section)


async def section_update(
    ctx: HandlerContext, params: p.ThreadSectionUpdateParams
) -> rn.ThreadSectionUpdateResponse:
    appearance = params.appearance.model_dump(by_alias=True) if params.appearance else None
    try:
        section = await asyncio.to_thread(
            ctx.services.thread_state.update_section, params.section_id, params.name, appearance,
            appearance_given="appearance" in params.model_fields_set)
    except SectionNotFound as exc:
        raise InvalidParams(str(exc)) from None
    return rn.ThreadSectionUpdateResponse(section=section)


async def section_delete(
    ctx: HandlerContext, params: p.ThreadSectionDeleteParams
) -> rn.ThreadSectionDeleteResponse:
    try:
        members = await asyncio.to_thread(ctx.services.thread_state.delete_section, params.section_id)
    except SectionNotFound as exc:
        raise InvalidParams(str(exc)) from None

    async def after() -> None:
        for thread_id in members:
            await announce(ctx, thread_id, notices.thread_section_changed(thread_id, None))

    ctx.session.after_response(after)
    return rn.ThreadSectionDeleteResponse()


async def section_move(
    ctx: HandlerContext, params: p.ThreadSectionMoveParams
) -> rn.ThreadSectionMoveResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await history.require_thread(services.threads, thread_id)
    try:
        await asyncio.to_thread(
            services.thread_state.move, thread_id, params.section_id, params.before_thread_id
        )
    except SectionNotFound as exc:
        raise InvalidParams(str(exc)) from None
    note = notices.thread_section_changed(thread_id, params.section_id)
    ctx.session.after_response(lambda: announce(ctx, thread_id, note))
    return rn.ThreadSectionMoveResponse()


async def thread_delete(ctx: HandlerContext, params: p.ThreadDeleteParams) -> rn.ThreadDeleteResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    loaded = services.threads.loaded.get(thread_id)
    if loaded is not None:
        if loaded.active is not None and not loaded.active.ended:
            raise InvalidRequest(f"cannot delete thread {thread_id} while a turn is running")
        await services.threads.unload(loaded)
    try:
        await asyncio.to_thread(services.threads.store.delete, thread_id)
    except ThreadNotFoundError:
        raise InvalidRequest(f"no rollout found for thread id {thread_id}") from None
    await asyncio.to_thread(services.thread_state.forget, thread_id)
    ctx.session.after_response(lambda: announce(ctx, thread_id, notices.thread_deleted(thread_id)))
    return rn.ThreadDeleteResponse()


async def metadata_update(
    ctx: HandlerContext, params: p.ThreadMetadataUpdateParams
) -> p.ThreadMetadataUpdateResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    if params.git_info is None and params.daybreak_enabled is None and params.project_id is None:
        raise InvalidRequest("thread metadata update must include at least one field")
    loaded = services.threads.loaded.get(thread_id)
    try:
        wire = (services.threads.thread_wire(loaded) if loaded is not None
                else await asyncio.to_thread(services.threads.store.read_thread, thread_id))
    except ThreadNotFoundError:
        raise InvalidRequest(f"no rollout found for thread id {thread_id}") from None
    # the project first: an unknown one refuses the whole update, as in Codex
    project = (await projects.current_project(ctx, thread_id) if params.project_id is None
               else await projects.assign_thread(ctx, thread_id, params.project_id))
    patch = params.git_info.model_dump(by_alias=True, exclude_unset=True) if params.git_info else None
    await asyncio.to_thread(services.thread_state.update_metadata, thread_id, patch, params.daybreak_enabled,
                            wire.get("gitInfo"))
    thread = await asyncio.to_thread(overlay, wire, services.thread_state)
    updated = Thread.model_validate(dict(thread, canAcceptDirectInput=None, projectId=project))
    return p.ThreadMetadataUpdateResponse(thread=updated)
