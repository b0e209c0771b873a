"""thread/settings/update: change a loaded thread's sticky settings for its later turns without starting one.

As Codex 0.169: the answer is ``{}``; when anything changed, ``thread/settings/updated`` follows with the
thread's whole settings (the TUI holds its next prompt until it comes). The TUI's ``/permissions`` sends a
``permissions`` profile id (``:read-only``...) with an approval policy and reviewer; the thread's next
command and patch run under it (the tools read the thread's settings when they run). Fields pycodex does
not model (collaboration mode, personality, environments...) are accepted and leave nothing changed."""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.handlers.announce import announce
from app_server.protocol import notices
from app_server.protocol import responses_named as rn
from app_server.protocol.thread_requests import ThreadSettingsUpdateParams
from app_server.threads.manager import settings_wire
from app_server.threads.overrides import apply_turn_overrides

__all__ = ["ThreadSettingsUpdateParams", "settings_update"]


async def settings_update(
    ctx: HandlerContext, params: ThreadSettingsUpdateParams
) -> rn.ThreadSettingsUpdateResponse:
    services = ctx.services
    thread = services.threads.get_loaded(params.thread_id)
    changed = apply_turn_overrides(thread.settings, params)
    if params.service_tier is not None and params.service_tier != thread.settings.service_tier:
        thread.settings.service_tier, changed = params.service_tier, True
    if changed:
        await asyncio.to_thread(thread.writer.settings_changed, thread.settings.to_record())
        note = notices.thread_settings_updated(thread.id, settings_wire(thread.settings))
        ctx.session.after_response(lambda: announce(ctx, thread.id, note))
    return rn.ThreadSettingsUpdateResponse()
