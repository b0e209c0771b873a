"""``initialize``: the handshake that identifies the client and fixes its capabilities."""

from __future__ import annotations

import os
import platform
import sys
from typing import TYPE_CHECKING

from app_server.connection import Session
from app_server.handlers.table import RouteSpec, app_of
from app_server.protocol import notices
from app_server.protocol.initialize import InitializeParams, InitializeResponse
from pycodex import COMPATIBLE_CODEX_VERSION, __version__

if TYPE_CHECKING:
    pass

__all__ = ["ROUTES", "user_agent"]


def _os_description() -> str:
    try:
        release = platform.freedesktop_os_release()
        name = release.get("ID", "linux").capitalize()
        version = release.get("VERSION_ID", platform.release())
        return f"{name} {version}"
    except OSError:
        return f"{platform.system()} {platform.release()}"


def user_agent(client_name: str, client_version: str) -> str:
    """``<client>/<compatible Codex version> (pycodex <ver>; <os>; <arch>) <terminal> (<client>; <ver>)``.

    SDKs split the agent at the first ``/`` and read the runtime version from the next word, so that
    word must be the Codex version whose protocol we speak; our own version sits in the parenthetical.
    """
    terminal = os.environ.get("TERM_PROGRAM") or os.environ.get("TERM") or "unknown"
    return (
        f"{client_name}/{COMPATIBLE_CODEX_VERSION} (pycodex {__version__}; {_os_description()}; "
        f"{platform.machine() or 'unknown'}) {terminal} ({client_name}; {client_version})"
    )


def _platform_os() -> str:
    return {"linux": "linux", "darwin": "macos", "win32": "windows"}.get(sys.platform, sys.platform)


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
    return InitializeResponse(
        user_agent=user_agent(session.client_name, session.client_version),
        codex_home=str(app.codex_home),
        platform_family="windows" if sys.platform == "win32" else "unix",
        platform_os=_platform_os(),
    )


ROUTES = (RouteSpec("initialize", InitializeParams, initialize),)
