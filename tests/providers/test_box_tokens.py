"""Per-box registry tokens (``DevRegistry.grant``): one environment's register and validate, nothing else;
and the relay child's control channel (``--control-stdin``) that hands them to the app-server."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import httpx

from exec_client.wire.noise import SECURITY_PROFILE, HybridStaticKey
from relay.server import RunningRelay
from tests.support.procs import spawn, stop_process
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


async def test_the_relay_child_answers_its_control_commands_and_stops_at_end_of_input() -> None:
    proc = await spawn(sys.executable, "-m", "relay", "--listen", "127.0.0.1:0", "--control-stdin",
                       env=dict(os.environ, PYCODEX_RELAY_TOKEN="harness"), stdin=asyncio.subprocess.PIPE,
                       stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        url = (await asyncio.wait_for(proc.stdout.readline(), STEP)).decode().strip()
        await asyncio.wait_for(proc.stdout.readline(), STEP)

        async def ask(line: str) -> str:
            proc.stdin.write(line.encode() + b"\n")
            return (await asyncio.wait_for(proc.stdout.readline(), STEP)).decode().strip()

        token = await ask("grant box-a")
        key = HybridStaticKey.generate().public_key.to_json()
        async with httpx.AsyncClient(timeout=STEP, trust_env=False) as http:
            registered = await http.post(f"{url}/cloud/environment/box-a/register",
                                         json={"security_profile": SECURITY_PROFILE, "executor_public_key": key},
                                         headers={"Authorization": f"Bearer {token}"})  # fmt: skip
        assert registered.status_code == 200
        assert await ask("connected box-a") == "no"  # registered, but no executor dialled the rendezvous
        assert await ask("revoke box-a") == "ok"
        assert await ask("launch box-a") == "error: unknown command 'launch'"
        proc.stdin.close()
        assert await asyncio.wait_for(proc.wait(), STEP) == 0
    finally:
        await stop_process(proc)
