"""account/*: API-key login stored as Codex stores it, logout, and the unauthenticated answers."""

from __future__ import annotations

import json
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path

from tests.support.appserver import OMIT, AppServerClient

Start = Callable[..., Awaitable[AppServerClient]]


async def test_api_key_login_and_logout(app_server: Start, codex_home: Path) -> None:
    client = await app_server()
    assert await client.call("account/login/start", {"type": "apiKey", "apiKey": "sk-test"}) == {"type": "apiKey"}
    auth = codex_home / "auth.json"
    assert json.loads(auth.read_text()) == {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-test"}
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    done = await client.wait_notification("account/login/completed")
    assert done["params"] == {"loginId": None, "success": True, "error": None, "onboardingEntrypoint": None}
    updated = await client.wait_notification("account/updated")
    assert updated["params"] == {"authMode": "apikey", "planType": None}
    assert await client.call("account/logout") == {}
    assert not auth.exists()
    assert (await client.wait_notification("account/updated"))["params"] == {"authMode": None, "planType": None}
    browser = await client.request("account/login/start", {"type": "chatgpt"})
    assert browser["error"]["code"] == -32600 and not auth.exists()
    cancel = await client.request("account/login/cancel", {"loginId": "nosuch"})
    assert cancel["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                               "message": "invalid login id: nosuch"}


async def test_gateway_and_security(app_server: Start) -> None:
    client = await app_server()
    gateway = await client.call("account/gatewayOAuth/read")
    assert gateway == {"providerId": "mock_provider", "providerName": "Mock provider", "required": False,
                       "supportsDeviceAuth": False, "status": None, "error": None}
    login = await client.request("account/gatewayOAuth/login")
    assert login["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                              "message": "The selected provider does not use gateway OAuth"}
    assert await client.call("account/gatewayOAuth/cancel") == {}
    assert await client.call("account/securitySetup/read") == {"notice": None}


CASES: list[tuple[str, object, str]] = [
    ("account/rateLimits/read", OMIT, "codex account authentication required to read rate limits"),
    ("account/rateLimitResetCredit/consume", {"idempotencyKey": "k"},
     "codex account authentication required for rate limit reset credits"),
    ("account/usage/read", OMIT, "codex account authentication required to read token usage"),
    ("account/workspaceMessages/read", OMIT, "codex account authentication required to read workspace messages"),
    ("account/sendAddCreditsNudgeEmail", {"creditType": "credits"},
     "codex account authentication required to notify workspace owner"),
    ("accountSession/switch", {"accountId": "a", "sessionId": "s"}, "Workspace switching requires a managed ChatGPT login"),
]


async def test_unauthenticated(app_server: Start) -> None:
    client = await app_server(experimental=True)
    for method, params, message in CASES:
        reply = await client.request(method, params)
        assert reply["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                  "message": message}, method


async def test_cloud_providers_offline(app_server: Start) -> None:
    client = await app_server(experimental=True)
    assert await client.call("accountSession/list", {}) == {"activeSessionId": None, "sessions": []}
    assert await client.call("account/bedrock/discover", {}) == {"profiles": [], "environmentCredentials": []}
    assert await client.call("account/bedrock/checkGovCloudRequirements", {}) == {"isGovCloud": False, "shouldWarn": False}
    gcp = await client.request("account/gcp/setup", {"projectId": "p"})
    assert gcp["error"]["data"] == {"reason": "authCommandFailed"}
    bedrock = await client.request("account/bedrock/setup", {"type": "environment", "region": "us-east-1"})
    assert bedrock["error"]["code"] == -32600
