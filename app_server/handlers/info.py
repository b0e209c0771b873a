"""Requests about the server's own state: skills/list and account/read (config and models have their
own modules). Shapes follow Codex 0.169.0."""

from __future__ import annotations

import asyncio

from app_server.context import HandlerContext
from app_server.model.auth import stored_api_key
from app_server.protocol import server_info as p
from pycodex.json_types import JsonObj

__all__ = ["account_read", "skills_list"]


async def skills_list(ctx: HandlerContext, params: p.SkillsListParams) -> p.SkillsListResponse:
    cwds = list(params.cwds or []) or [str(ctx.services.working_dir())]
    listed: JsonObj = await ctx.services.skills_catalog.list_for_cwds(cwds, bool(params.force_reload))
    return p.SkillsListResponse.model_validate(listed)


async def account_read(ctx: HandlerContext, params: p.GetAccountParams) -> p.GetAccountResponse:
    services = ctx.services
    needs_auth = bool(services.config.provider.requires_openai_auth)
    # As Codex: the stored login is an account only for a provider that uses OpenAI auth.
    key = await asyncio.to_thread(stored_api_key, services.codex_home) if needs_auth else None
    # Codex 0.169 sends workspaceRouting to stable clients too, though only the experimental schema names it.
    return p.GetAccountResponse(account={"type": "apiKey"} if key else None, user_id=None,
                                requires_openai_auth=needs_auth, workspace_routing=None)
