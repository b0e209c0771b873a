"""account/* and accountSession/* requests.

API-key login works offline and is stored as Codex stores it (app_server/model/auth.py). Everything that needs
a ChatGPT account (rate limits, usage, workspace messages, workspace switching) answers with Codex's
unauthenticated errors; the cloud-provider setups answer as Codex does without credentials."""

from __future__ import annotations

from typing import Any

from app_server.context import HandlerContext
from app_server.model.auth import remove_login, store_api_key
from app_server.protocol import surface as p
from app_server.protocol.declarations import Handler
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest
from pycodex.platform.spawn import os_error_text

__all__ = [
    "account_rate_limit_reset_credit_consume", "account_rate_limits_read",
    "account_send_add_credits_nudge_email", "account_usage_read", "account_workspace_messages_read",
    "bedrock_discover", "bedrock_govcloud", "bedrock_setup", "empty", "gateway_login", "gateway_read",
    "gcp_setup", "login_cancel", "login_start", "logout", "security_setup", "sessions_list",
    "sessions_switch",
]


def _reselect_provider(ctx: HandlerContext) -> None:
    """Without `model_provider` in config.toml, whether a key exists picks the default provider (the
    built-in `openai` or the offline `scripted` one): read the config again so account/read and new
    threads see the change. A config that does not load now keeps the old one; thread/start reports it."""
    try:
        ctx.services.reload_config()
    except InvalidRequest:
        pass


async def login_start(ctx: HandlerContext, params: p.LoginParams) -> JsonObj:
    if params.type != "apiKey":
        raise InvalidRequest(f"{params.type} login is not available in pycodex; log in with an API key")
    if not params.api_key:
        raise InvalidRequest("Invalid request: missing field `apiKey`")
    try:
        store_api_key(ctx.services.codex_home, params.api_key)
    except OSError as exc:
        raise InvalidRequest(f"failed to save API key: {os_error_text(exc)}") from None
    _reselect_provider(ctx)

    async def announce() -> None:
        await ctx.session.notify("account/login/completed",
                             {"loginId": None, "success": True, "error": None, "onboardingEntrypoint": None})
        await ctx.session.notify("account/updated", {"authMode": "apikey", "planType": None})

    ctx.session.after_response(announce)
    return {"type": "apiKey"}


async def logout(ctx: HandlerContext, params: Any) -> JsonObj:
    try:
        remove_login(ctx.services.codex_home)
    except OSError as exc:
        raise InvalidRequest(f"failed to remove credentials: {os_error_text(exc)}") from None
    _reselect_provider(ctx)

    async def announce() -> None:
        await ctx.session.notify("account/updated", {"authMode": None, "planType": None})

    ctx.session.after_response(announce)
    return {}


async def login_cancel(ctx: HandlerContext, params: p.CancelLoginParams) -> JsonObj:
    raise InvalidRequest(f"invalid login id: {params.login_id}")  # no browser login is ever pending


async def gateway_read(ctx: HandlerContext, params: Any) -> JsonObj:
    provider = ctx.services.config.provider
    return {"providerId": provider.id, "providerName": provider.name, "required": False,
            "supportsDeviceAuth": False, "status": None, "error": None}


async def gateway_login(ctx: HandlerContext, params: Any) -> JsonObj:
    raise InvalidRequest("The selected provider does not use gateway OAuth")


async def empty(ctx: HandlerContext, params: Any) -> JsonObj:
    return {}


async def security_setup(ctx: HandlerContext, params: Any) -> JsonObj:
    return {"notice": None}


def _needs_account(what: str) -> Handler:
    async def handler(ctx: HandlerContext, params: Any) -> JsonObj:
        raise InvalidRequest(f"codex account authentication required {what}")

    handler.__name__ = "needs_account"
    return handler


async def sessions_list(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"activeSessionId": None, "sessions": []}


async def sessions_switch(ctx: HandlerContext, params: p.AccountSwitchParams) -> JsonObj:
    raise InvalidRequest("Workspace switching requires a managed ChatGPT login")


async def bedrock_discover(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"profiles": [], "environmentCredentials": []}


async def bedrock_setup(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    raise InvalidRequest("No AWS credentials found. Please Configure AWS credentials or complete AWS sign-in.")


async def bedrock_govcloud(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"isGovCloud": False, "shouldWarn": False}


async def gcp_setup(ctx: HandlerContext, params: p.GcpSetupParams) -> JsonObj:
    raise InvalidRequest("The Google Cloud auth command could not obtain an access token.",
                   data={"reason": "authCommandFailed"})


# The refusing handlers, one per method (each names what it would need).
account_rate_limits_read = _needs_account("to read rate limits")
account_rate_limit_reset_credit_consume = _needs_account("for rate limit reset credits")
account_usage_read = _needs_account("to read token usage")
account_workspace_messages_read = _needs_account("to read workspace messages")
account_send_add_credits_nudge_email = _needs_account("to notify workspace owner")
