"""``initialize``: the handshake that identifies the client and fixes its capabilities."""

from __future__ import annotations

from app_server.context import HandlerContext
from app_server.protocol import notices
from app_server.protocol.initialize import InitializeParams, InitializeResponse
from app_server.startup import initialize_result, user_agent

__all__ = ["initialize", "user_agent"]


async def initialize(ctx: HandlerContext, params: InitializeParams) -> InitializeResponse:
    services = ctx.services
    caps = params.capabilities
    ctx.session.client_name = params.client_info.name
    ctx.session.client_version = params.client_info.version
    ctx.session.client_title = params.client_info.title
    ctx.session.experimental_api = bool(caps and caps.experimental_api)
    ctx.session.opt_out = frozenset((caps.opt_out_notification_methods or []) if caps else [])
    ctx.session.initialized = True

    async def announce() -> None:
        for warning in services.startup_warnings:
            await notices.send(ctx.session, notices.config_warning(warning.to_params()))

    ctx.session.after_response(announce)
    # The stdio fast path (app_server.startup.py) answers from the same fields before this runs.
    return InitializeResponse.model_validate(
        initialize_result(ctx.session.client_name, ctx.session.client_version, services.codex_home)
    )
