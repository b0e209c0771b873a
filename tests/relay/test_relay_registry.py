"""The development registry over real HTTP on 127.0.0.1: routes, bearer checks, authorization decisions."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from exec_client.wire.noise import SECURITY_PROFILE, HybridStaticKey
from relay.registry import STREAM_ID_HEADER, AuthorizationDecision, ValidationRequest, fixed_policy
from relay.server import RunningRelay
from tests.support.remote import ENV_ID, STEP, TOKEN, running_relay

BEARER = {"Authorization": f"Bearer {TOKEN}"}


async def post(
    relay: RunningRelay, action: str, body: Any, headers: dict[str, str] | None = None
) -> httpx.Response:
    async with httpx.AsyncClient(timeout=STEP, trust_env=False) as http:
        url = f"{relay.registry_url}/cloud/environment/{ENV_ID}/{action}"
        return await http.post(url, json=body, headers=BEARER if headers is None else headers)


def register_body(key: HybridStaticKey) -> dict[str, Any]:
    return {"security_profile": SECURITY_PROFILE, "executor_public_key": key.public_key.to_json()}


async def test_register_returns_rendezvous_url_profile_and_registration_id() -> None:
    async with running_relay() as relay:
        response = await post(relay, "register", register_body(HybridStaticKey.generate()))
        assert response.status_code == 200
        body = response.json()
        assert set(body) == {"environment_id", "url", "security_profile", "executor_registration_id"}
        assert body["environment_id"] == ENV_ID
        assert body["security_profile"] == "noise_hybrid_ik_v1"
        assert body["url"].startswith(f"{relay.rendezvous_url}/relay/{ENV_ID}?role=environment&ticket=")
        assert body["executor_registration_id"]


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}, {"Authorization": "Bearer"}],
    ids=["missing", "wrong-token", "wrong-scheme", "empty"],
)
async def test_every_route_refuses_a_missing_or_wrong_bearer_with_401(headers: dict[str, str]) -> None:
    async with running_relay() as relay:
        for action in ("register", "connect", "validate"):
            response = await post(relay, action, {}, headers=headers)
            assert response.status_code == 401, action
            assert response.json()["error"]["code"] == "unauthorized"


async def test_register_refuses_a_bad_profile_or_key_with_a_specific_error() -> None:
    async with running_relay() as relay:
        key = HybridStaticKey.generate().public_key.to_json()
        bad_profile = await post(relay, "register", {"security_profile": "none", "executor_public_key": key})
        assert bad_profile.status_code == 400
        assert bad_profile.json()["error"]["code"] == "unsupported_security_profile"
        bad_key = await post(
            relay,
            "register",
            {"security_profile": SECURITY_PROFILE, "executor_public_key": {**key, "suite": "x"}},
        )
        assert bad_key.status_code == 400
        assert "executor_public_key" in bad_key.json()["error"]["message"]


async def test_connect_before_register_is_404_and_after_it_pins_the_registered_key() -> None:
    async with running_relay() as relay:
        harness = HybridStaticKey.generate().public_key.to_json()
        missing = await post(relay, "connect", {"harness_public_key": harness})
        assert missing.status_code == 404
        executor = HybridStaticKey.generate()
        registration = (await post(relay, "register", register_body(executor))).json()
        bundle = (await post(relay, "connect", {"harness_public_key": harness})).json()
        assert bundle["executor_public_key"] == executor.public_key.to_json()
        assert bundle["executor_registration_id"] == registration["executor_registration_id"]
        assert bundle["security_profile"] == SECURITY_PROFILE
        assert "?role=harness&ticket=" in bundle["url"]
        assert bundle["harness_key_authorization"]


async def _validate(
    relay: RunningRelay, harness: HybridStaticKey, authorization: str, stream_id: str = "stream-1"
) -> httpx.Response:
    registration = relay.registry.registration(ENV_ID)
    assert registration is not None
    body = {
        "executor_registration_id": registration.registration_id,
        "harness_public_key": harness.public_key.to_json(),
        "harness_key_authorization": authorization,
    }
    headers = {**BEARER, STREAM_ID_HEADER: stream_id} if stream_id else BEARER
    return await post(relay, "validate", body, headers=headers)


async def test_validate_accepts_the_authorization_issued_for_that_harness_key_only() -> None:
    async with running_relay() as relay:
        await post(relay, "register", register_body(HybridStaticKey.generate()))
        harness, other = HybridStaticKey.generate(), HybridStaticKey.generate()
        bundle = (await post(relay, "connect", {"harness_public_key": harness.public_key.to_json()})).json()
        authorization = bundle["harness_key_authorization"]
        ok = await _validate(relay, harness, authorization)
        assert (ok.status_code, ok.json()) == (200, {"valid": True})
        stolen = await _validate(relay, other, authorization)
        assert stolen.status_code == 401
        assert stolen.json()["error"]["code"] == "harness_key_unauthorized"
        no_header = await _validate(relay, harness, authorization, stream_id="")
        assert no_header.status_code == 400
        assert STREAM_ID_HEADER in no_header.json()["error"]["message"]
    assert ("POST", f"/cloud/environment/{ENV_ID}/validate", "stream-1") in relay.registry.request_log


@pytest.mark.parametrize(
    ("decision", "status", "body"),
    [
        (AuthorizationDecision.INVALID, 200, {"valid": False}),
        (AuthorizationDecision.UNAUTHORIZED, 401, None),
        (AuthorizationDecision.FORBIDDEN, 403, None),
        (AuthorizationDecision.UNAVAILABLE, 503, None),
    ],
)
async def test_the_configured_policy_decides_validate_answers(
    decision: AuthorizationDecision, status: int, body: dict[str, Any] | None
) -> None:
    seen: list[ValidationRequest] = []

    def policy(request: ValidationRequest) -> AuthorizationDecision:
        seen.append(request)
        return fixed_policy(decision)(request)

    async with running_relay(policy=policy) as relay:
        await post(relay, "register", register_body(HybridStaticKey.generate()))
        harness = HybridStaticKey.generate()
        bundle = (await post(relay, "connect", {"harness_public_key": harness.public_key.to_json()})).json()
        response = await _validate(relay, harness, bundle["harness_key_authorization"], stream_id="s-9")
        assert response.status_code == status
        if body is not None:
            assert response.json() == body
    assert [(r.environment_id, r.stream_id, r.harness_key) for r in seen] == [
        (ENV_ID, "s-9", harness.public_key)
    ]


async def test_registering_again_supersedes_the_old_registration() -> None:
    async with running_relay() as relay:
        first = (await post(relay, "register", register_body(HybridStaticKey.generate()))).json()
        second = (await post(relay, "register", register_body(HybridStaticKey.generate()))).json()
        assert first["executor_registration_id"] != second["executor_registration_id"]
        old_ticket = first["url"].rpartition("ticket=")[2]
        new_ticket = second["url"].rpartition("ticket=")[2]
        assert not relay.registry.check_environment_ticket(ENV_ID, old_ticket)
        assert relay.registry.check_environment_ticket(ENV_ID, new_ticket)


async def test_unknown_routes_and_methods_get_json_errors() -> None:
    async with running_relay() as relay, httpx.AsyncClient(timeout=STEP, trust_env=False) as http:
        other = await http.post(f"{relay.registry_url}/cloud/other", headers=BEARER)
        assert other.status_code == 404
        wrong_method = await http.get(
            f"{relay.registry_url}/cloud/environment/{ENV_ID}/register", headers=BEARER
        )
        assert wrong_method.status_code == 405
        not_json = await http.post(
            f"{relay.registry_url}/cloud/environment/{ENV_ID}/register", content=b"{", headers=BEARER
        )
        assert (not_json.status_code, not_json.json()["error"]["code"]) == (400, "invalid_json")


async def raw_exchange(relay: RunningRelay, request: bytes) -> bytes:
    """Send raw bytes to the registry port; return everything it answers before closing."""
    port = int(relay.registry_url.rpartition(":")[2])
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), STEP)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), STEP)
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GARBAGE\r\n\r\n", b"400"),
        (b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"411"),
        (b"POST /x HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", b"413"),
        (b"POST /x HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n", b"431"),
    ],
    ids=["malformed", "chunked", "huge-body", "huge-head"],
)
async def test_the_http_layer_refuses_bad_requests_with_a_status_and_closes(
    request_bytes: bytes, status: bytes
) -> None:
    async with running_relay() as relay:
        answer = await raw_exchange(relay, request_bytes)
    assert answer.startswith(b"HTTP/1.1 " + status)
    assert b"connection: close" in answer


async def test_one_keep_alive_connection_serves_several_requests() -> None:
    request = (
        f"POST /cloud/environment/{ENV_ID}/connect HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".encode()
    )
    async with running_relay() as relay:
        answer = await raw_exchange(relay, request * 2 + request.replace(b"Host: x", b"Connection: close"))
    assert answer.count(b"HTTP/1.1 401 Unauthorized") == 3
