"""Requests about the server's own state: skills/list and account/read (config and models have their
own modules). Shapes follow Codex 0.169.0."""

from __future__ import annotations

from typing import Any

from app_server.connection import Session
from app_server.handlers.table import RouteSpec, app_of
from app_server.protocol import server_info as p

__all__ = ["ROUTES"]

JsonObj = dict[str, Any]


async def skills_list(session: Session, params: p.SkillsListParams) -> JsonObj:
    cwds = list(params.cwds or []) or [str(app_of(session).working_dir())]
    result: JsonObj = await app_of(session).skills_catalog.list_for_cwds(cwds, bool(params.force_reload))
    return result


async def account_read(session: Session, params: p.GetAccountParams) -> JsonObj:
    provider = app_of(session).config.provider
    # Codex 0.169 sends workspaceRouting to stable clients too, though only the experimental schema names it.
    return {"account": None, "userId": None, "requiresOpenaiAuth": bool(provider.requires_openai_auth),
            "workspaceRouting": None}


ROUTES = (
    RouteSpec("skills/list", p.SkillsListParams, skills_list),
    RouteSpec("account/read", p.GetAccountParams, account_read),
)
