"""thread/attachment/add, list and remove, and thread/attachmentOwner/list: a client's typed records tied to
a thread (app_server/store/thread_attachments.py), answered as Codex 0.169 answers for a local thread.

Codex announces ``thread/attachment/updated`` after the response, only when something changed (a created
attachment or a removed one); adding an existing key answers ``existing`` with the first payload."""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.handlers.announce import announce
from app_server.protocol import notices
from app_server.protocol import responses_named as rn
from app_server.protocol.responses_threads import (
    ThreadAttachmentAddResponse,
    ThreadAttachmentListResponse,
    ThreadAttachmentOwner,
    ThreadAttachmentOwnerListResponse,
)
from app_server.protocol.thread_requests import (
    ThreadAttachmentAddParams,
    ThreadAttachmentListParams,
    ThreadAttachmentOwnerListParams,
    ThreadAttachmentRemoveParams,
)
from app_server.store import parse_thread_id
from app_server.store.layout import find_rollout_file, is_archived_path
from app_server.threads import history

__all__ = ["attachment_add", "attachment_list", "attachment_owner_list", "attachment_remove"]


async def attachment_add(ctx: HandlerContext, params: ThreadAttachmentAddParams) -> ThreadAttachmentAddResponse:
    services = ctx.services
    thread_id = parse_thread_id(params.thread_id)
    await history.require_thread(services.threads, thread_id)
    attachment, created = await asyncio.to_thread(
        services.thread_state.add_attachment, thread_id, params.attachment_type, params.identity_key,
        params.payload)
    if created:
        note = notices.thread_attachment_updated(thread_id, params.attachment_type, params.identity_key,
                                                 attachment["id"], "created")
        ctx.session.after_response(lambda: announce(ctx, thread_id, note))
    return ThreadAttachmentAddResponse(outcome="created" if created else "existing", attachment=attachment)


async def attachment_list(
    ctx: HandlerContext, params: ThreadAttachmentListParams
) -> ThreadAttachmentListResponse:
    thread_id = parse_thread_id(params.thread_id)
    data = await asyncio.to_thread(ctx.services.thread_state.attachments, thread_id)
    return ThreadAttachmentListResponse(data=data, next_cursor=None)


async def attachment_remove(
    ctx: HandlerContext, params: ThreadAttachmentRemoveParams
) -> rn.ThreadAttachmentRemoveResponse:
    thread_id = parse_thread_id(params.thread_id)
    removed = await asyncio.to_thread(
        ctx.services.thread_state.remove_attachment, thread_id, params.attachment_type, params.identity_key)
    if removed is not None:
        note = notices.thread_attachment_updated(thread_id, params.attachment_type, params.identity_key, removed,
                                                 "deleted")
        ctx.session.after_response(lambda: announce(ctx, thread_id, note))
    return rn.ThreadAttachmentRemoveResponse()


async def attachment_owner_list(
    ctx: HandlerContext, params: ThreadAttachmentOwnerListParams
) -> ThreadAttachmentOwnerListResponse:
    services = ctx.services
    owners = await asyncio.to_thread(
        services.thread_state.attachment_owners, params.attachment_type, params.identity_key
    )
    home = services.threads.store.codex_home

    def archived(thread_id: str) -> bool:
        path = find_rollout_file(home, thread_id)
        return path is not None and is_archived_path(home, path)

    flags = await asyncio.to_thread(lambda: [archived(t) for t in owners])
    data = [ThreadAttachmentOwner(thread_id=t, archived=a) for t, a in zip(owners, flags, strict=True)
            if params.archived is None or params.archived == a]
    return ThreadAttachmentOwnerListResponse(data=data, next_cursor=None)
