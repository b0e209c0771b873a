"""Requests about the server's own state: skills/list, account/read, model/list, config/read."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from app_server.connection import Session
from app_server.protocol import server_info as p

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["register"]

JsonObj = dict[str, Any]


def register(app: AppServer) -> None:
    async def skills_list(session: Session, params: p.SkillsListParams) -> JsonObj:
        cwds = list(params.cwds or []) or [os.getcwd()]
        result: JsonObj = await app.skills_catalog.list_for_cwds(cwds, bool(params.force_reload))
        return result

    async def account_read(session: Session, params: Any) -> JsonObj:
        provider = app.config.provider
        return {"account": None, "requiresOpenaiAuth": bool(provider.requires_openai_auth)}

    app.router.add("skills/list", p.SkillsListParams, skills_list)
    app.router.add("account/read", p.GetAccountParams, account_read)
