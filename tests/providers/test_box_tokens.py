"""Per-box registry tokens (``DevRegistry.grant``): one environment's register and validate, nothing else."""

from __future__ import annotations

from typing import Any

import httpx

from exec_client.wire.noise import SECURITY_PROFILE, HybridStaticKey
from relay.server import RunningRelay
from tests.support.remote import STEP, running_relay


async def post(relay: RunningRelay, env_id: str, action: str, token: str) -> httpx.Response:
    key = HybridStaticKey.generate().public_key.to_json()
    body: dict[str, Any] = {"security_profile": SECURITY_PROFILE, "executor_public_key": key,
                            "harness_public_key": key}  # fmt: skip
    async with httpx.AsyncClient(timeout=STEP, trust_env=False) as http:
        url = f"{relay.registry_url}/cloud/environment/{env_id}/{action}"
        return await http.post(url, json=body, headers={"Authorization": f"Bearer {token}"})


async def test_a_granted_token_registers_only_its_own_environment_and_never_connects() -> None:
    async with running_relay() as relay:
        token = relay.registry.grant("box-a")
        assert (await post(relay, "box-a", "register", token)).status_code == 200
        assert (await post(relay, "box-b", "register", token)).status_code == 401
        assert (await post(relay, "box-a", "connect", token)).status_code == 401  # a box opens no harness streams
        assert token not in repr(relay.registry.__dict__.get("_scoped"))  # only digests are kept


async def test_revoking_withdraws_the_token_and_the_registration() -> None:
    async with running_relay() as relay:
        token = relay.registry.grant("box-a")
        assert (await post(relay, "box-a", "register", token)).status_code == 200
        relay.registry.revoke("box-a")
        assert relay.registry.registration("box-a") is None
        assert (await post(relay, "box-a", "register", token)).status_code == 401
