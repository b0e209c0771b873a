"""``initialize``: the handshake that identifies the client and fixes its capabilities."""

from __future__ import annotations

from app_server.connection import Session
from app_server.handlers.table import RouteSpec, app_of
from app_server.protocol import notices
from app_server.protocol.initialize import InitializeParams, InitializeResponse
from app_server.startup import initialize_result, user_agent

__all__ = ["ROUTES", "user_agent"]


async def initialize(session: Session, params: InitializeParams) -> InitializeResponse:
    app = app_of(session)
    caps = params.capabilities
    session.client_name = params.client_info.name
    session.client_version = params.client_info.version
    session.client_title = params.client_info.title
    session.experimental_api = bool(caps and caps.experimental_api)
    session.opt_out = frozenset((caps.opt_out_notification_methods or []) if caps else [])
    session.initialized = True

    async def announce() -> None:
        for warning in app.startup_warnings:
            await notices.send(session, notices.config_warning(warning.to_params()))

    session.after_response(announce)
    # The stdio fast path (app_server.startup.py) answers from the same fields before this runs.
    return InitializeResponse.model_validate(
        initialize_result(session.client_name, session.client_version, app.codex_home)
    )


ROUTES = (RouteSpec("initialize", InitializeParams, initialize),)
