"""account/* and accountSession/* requests.

API-key login works offline and is stored as Codex stores it (app_server/model/auth.py). Everything that needs
a ChatGPT account (rate limits, usage, workspace messages, workspace switching) answers with Codex's
unauthenticated errors; the cloud-provider setups answer as Codex does without credentials."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from app_server.context import HandlerContext
from app_server.model.auth import remove_login, store_api_key
from app_server.protocol import catalog_params as cp
from app_server.protocol import responses_accounts as ra
from app_server.protocol import surface as p
from app_server.protocol.base import WireModel
from pycodex.jsonrpc.errors import InvalidRequest
from pycodex.platform.spawn import os_error_text

__all__ = [
    "account_rate_limit_reset_credit_consume", "account_rate_limits_read",
    "account_send_add_credits_nudge_email", "account_usage_read", "account_workspace_messages_read",
    "bedrock_discover", "bedrock_govcloud", "bedrock_setup", "empty", "gateway_login", "gateway_read",
    "gcp_setup", "login_cancel", "login_start", "logout", "security_setup", "sessions_list",
    "sessions_switch",
]

R = TypeVar("R", bound=WireModel)


def _reselect_provider(ctx: HandlerContext) -> None:
    """Read the config again after a login or logout, so account/read and new threads see the change (the
    stored key is what the built-in `openai` provider sends). A config that does not load now keeps the old
    one; thread/start reports it."""
    try:
        ctx.services.reload_config()
    except InvalidRequest:
        pass


async def login_start(ctx: HandlerContext, params: p.LoginParams) -> ra.LoginAccountResponse:
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
    return ra.LoginAccountResponse(type="apiKey")


async def logout(ctx: HandlerContext, params: None) -> ra.LogoutAccountResponse:
    try:
        remove_login(ctx.services.codex_home)
    except OSError as exc:
        raise InvalidRequest(f"failed to remove credentials: {os_error_text(exc)}") from None
    _reselect_provider(ctx)

    async def announce() -> None:
        await ctx.session.notify("account/updated", {"authMode": None, "planType": None})

    ctx.session.after_response(announce)
    return ra.LogoutAccountResponse()


async def login_cancel(ctx: HandlerContext, params: p.CancelLoginParams) -> ra.CancelLoginAccountResponse:
    raise InvalidRequest(f"invalid login id: {params.login_id}")  # no browser login is ever pending


async def gateway_read(ctx: HandlerContext, params: None) -> ra.GatewayOAuthReadResponse:
    provider = ctx.services.config.provider
    return ra.GatewayOAuthReadResponse(provider_id=provider.id, provider_name=provider.name, required=False,
                                       supports_device_auth=False, status=None, error=None)


async def gateway_login(ctx: HandlerContext, params: None) -> ra.GatewayOAuthLoginResponse:
    raise InvalidRequest("The selected provider does not use gateway OAuth")


async def empty(ctx: HandlerContext, params: None) -> ra.GatewayOAuthCancelResponse:
    return ra.GatewayOAuthCancelResponse()


async def security_setup(ctx: HandlerContext, params: None) -> ra.GetAccountSecuritySetupResponse:
    return ra.GetAccountSecuritySetupResponse(notice=None)


def _needs_account(what: str, result: type[R]) -> Callable[[HandlerContext, Any], Awaitable[R]]:
    """A handler that refuses for want of a ChatGPT account; ``result`` is the model it would answer with."""

    # `Any`: one factory serves methods with different params (or none), whatever the router validated.
    async def handler(ctx: HandlerContext, params: Any) -> R:
        raise InvalidRequest(f"codex account authentication required {what}")

    handler.__name__ = "needs_account"
    handler.__annotations__["return"] = result  # what the declaration test reads: this method's model
    return handler


async def sessions_list(ctx: HandlerContext, params: cp.AccountSessionsListParams) -> ra.AccountSessionsResponse:
    return ra.AccountSessionsResponse(active_session_id=None, sessions=[])


async def sessions_switch(ctx: HandlerContext, params: p.AccountSwitchParams) -> ra.AccountSessionsSwitchResponse:
    raise InvalidRequest("Workspace switching requires a managed ChatGPT login")


async def bedrock_discover(ctx: HandlerContext, params: p.AnyParams) -> ra.BedrockDiscoverResponse:
    return ra.BedrockDiscoverResponse(profiles=[], environment_credentials=[])


async def bedrock_setup(ctx: HandlerContext, params: p.AnyParams) -> ra.BedrockSetupResponse:
    raise InvalidRequest("No AWS credentials found. Please Configure AWS credentials or complete AWS sign-in.")


async def bedrock_govcloud(ctx: HandlerContext, params: p.AnyParams) -> ra.BedrockCheckGovCloudRequirementsResponse:
    return ra.BedrockCheckGovCloudRequirementsResponse(is_gov_cloud=False, should_warn=False)


async def gcp_setup(ctx: HandlerContext, params: p.GcpSetupParams) -> ra.GcpSetupResponse:
    raise InvalidRequest("The Google Cloud auth command could not obtain an access token.",
                   data={"reason": "authCommandFailed"})


# The refusing handlers, one per method (each names what it would need and the model it would answer with).
account_rate_limits_read = _needs_account("to read rate limits", ra.GetAccountRateLimitsResponse)
account_rate_limit_reset_credit_consume = _needs_account(
    "for rate limit reset credits", ra.ConsumeAccountRateLimitResetCreditResponse)
account_usage_read = _needs_account("to read token usage", ra.GetAccountTokenUsageResponse)
account_workspace_messages_read = _needs_account("to read workspace messages", ra.GetWorkspaceMessagesResponse)
account_send_add_credits_nudge_email = _needs_account(
    "to notify workspace owner", ra.SendAddCreditsNudgeEmailResponse)
