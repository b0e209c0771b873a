"""account/* and accountSession/* requests.

API-key login works offline and is stored as Codex stores it: ``CODEX_HOME/auth.json`` holding
``{"auth_mode": "apikey", "OPENAI_API_KEY": ...}``, readable by the owner only. Everything that needs
a ChatGPT account (rate limits, usage, workspace messages, workspace switching) answers with Codex's
unauthenticated errors; the cloud-provider setups answer as Codex does without credentials."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from app_server.connection import Session
from app_server.handlers.table import RouteSpec, app_of
from app_server.protocol import surface as p
from pycodex.jsonrpc.errors import InvalidRequest
from pycodex.platform.spawn import os_error_text

__all__ = ["AUTH_FILE", "ROUTES"]

JsonObj = dict[str, Any]
AUTH_FILE = "auth.json"


def _auth_path(session: Session) -> Path:
    return app_of(session).codex_home / AUTH_FILE


def _write_auth(session: Session, data: JsonObj) -> None:
    path = _auth_path(session)
    tmp = path.with_name(f".{AUTH_FILE}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, indent=2))
    os.replace(tmp, path)


async def login_start(session: Session, params: p.LoginParams) -> JsonObj:
    if params.type != "apiKey":
        raise InvalidRequest(f"{params.type} login is not available in pycodex; log in with an API key")
    if not params.api_key:
        raise InvalidRequest("Invalid request: missing field `apiKey`")
    try:
        _write_auth(session, {"auth_mode": "apikey", "OPENAI_API_KEY": params.api_key})
    except OSError as exc:
        raise InvalidRequest(f"failed to save API key: {os_error_text(exc)}") from None

    async def announce() -> None:
        await session.notify("account/login/completed",
                             {"loginId": None, "success": True, "error": None, "onboardingEntrypoint": None})
        await session.notify("account/updated", {"authMode": "apikey", "planType": None})

    session.after_response(announce)
    return {"type": "apiKey"}


async def logout(session: Session, params: Any) -> JsonObj:
    try:
        _auth_path(session).unlink(missing_ok=True)
    except OSError as exc:
        raise InvalidRequest(f"failed to remove credentials: {os_error_text(exc)}") from None

    async def announce() -> None:
        await session.notify("account/updated", {"authMode": None, "planType": None})

    session.after_response(announce)
    return {}


async def login_cancel(session: Session, params: p.CancelLoginParams) -> JsonObj:
    raise InvalidRequest(f"invalid login id: {params.login_id}")  # no browser login is ever pending


async def gateway_read(session: Session, params: Any) -> JsonObj:
    provider = app_of(session).config.provider
    return {"providerId": provider.id, "providerName": provider.name, "required": False,
            "supportsDeviceAuth": False, "status": None, "error": None}


async def gateway_login(session: Session, params: Any) -> JsonObj:
    raise InvalidRequest("The selected provider does not use gateway OAuth")


async def empty(session: Session, params: Any) -> JsonObj:
    return {}


async def security_setup(session: Session, params: Any) -> JsonObj:
    return {"notice": None}


def _needs_account(what: str) -> Any:
    async def handler(session: Session, params: Any) -> JsonObj:
        raise InvalidRequest(f"codex account authentication required {what}")

    handler.__name__ = "needs_account"
    return handler


async def sessions_list(session: Session, params: p.AnyParams) -> JsonObj:
    return {"activeSessionId": None, "sessions": []}


async def sessions_switch(session: Session, params: p.AccountSwitchParams) -> JsonObj:
    raise InvalidRequest("Workspace switching requires a managed ChatGPT login")


async def bedrock_discover(session: Session, params: p.AnyParams) -> JsonObj:
    return {"profiles": [], "environmentCredentials": []}


async def bedrock_setup(session: Session, params: p.AnyParams) -> JsonObj:
    raise InvalidRequest("No AWS credentials found. Please Configure AWS credentials or complete AWS sign-in.")


async def bedrock_govcloud(session: Session, params: p.AnyParams) -> JsonObj:
    return {"isGovCloud": False, "shouldWarn": False}


async def gcp_setup(session: Session, params: p.GcpSetupParams) -> JsonObj:
    raise InvalidRequest("The Google Cloud auth command could not obtain an access token.",
                   data={"reason": "authCommandFailed"})


ROUTES = (
    RouteSpec("account/login/start", p.LoginParams, login_start),
    RouteSpec("account/logout", None, logout),
    RouteSpec("account/login/cancel", p.CancelLoginParams, login_cancel),
    RouteSpec("account/gatewayOAuth/read", None, gateway_read),
    RouteSpec("account/gatewayOAuth/login", None, gateway_login),
    RouteSpec("account/gatewayOAuth/cancel", None, empty),
    RouteSpec("account/securitySetup/read", None, security_setup),
    RouteSpec("account/rateLimits/read", None, _needs_account("to read rate limits")),
    RouteSpec("account/rateLimitResetCredit/consume", p.ConsumeResetCreditParams,
              _needs_account("for rate limit reset credits")),
    RouteSpec("account/usage/read", None, _needs_account("to read token usage")),
    RouteSpec("account/workspaceMessages/read", None, _needs_account("to read workspace messages")),
    RouteSpec("account/sendAddCreditsNudgeEmail", p.NudgeEmailParams,
              _needs_account("to notify workspace owner")),
    RouteSpec("accountSession/list", p.AnyParams, sessions_list, experimental=True),
    RouteSpec("accountSession/switch", p.AccountSwitchParams, sessions_switch, experimental=True),
    RouteSpec("account/bedrock/discover", p.AnyParams, bedrock_discover, experimental=True),
    RouteSpec("account/bedrock/setup", p.AnyParams, bedrock_setup, experimental=True),
    RouteSpec("account/bedrock/checkGovCloudRequirements", p.AnyParams, bedrock_govcloud, experimental=True),
    RouteSpec("account/gcp/setup", p.GcpSetupParams, gcp_setup, experimental=True),
)
