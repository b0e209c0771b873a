"""Real Podman: a box's network follows its thread's sandbox policy, and every box still reaches the relay.

A TCP server listens on the host's loopback. A workspace-write thread without network access runs in a
box with no network at all (``--network none``): its command cannot connect to that server, yet the box
registered through the relay's unix socket and ran the command. The same command in a turn that turns
network access on (a new box) and in a danger-full-access thread reaches it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.providers.podman_support import (
    STEP,
    command_items,
    containers,
    podman,
    relay_children,
    remove_owned,
    wait_containers,
    write_environments,
)
from tests.support.fake_model import exec_call, message, model_config, run_turn
from tests.support.tools import require_podman

#: The box runs the host's venv interpreter (mounted read-only at its own path).
PYTHON = Path(sys.prefix) / "bin" / "python"
DIAL = "{python} -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5); print(\"reached\")'"


@pytest.fixture
async def host_server() -> AsyncIterator[tuple[int, list[bool]]]:
    """A loopback TCP server on the host; the list gets one entry per connection it accepted."""
    accepted: list[bool] = []

    async def on_connect(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(True)
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], accepted
    finally:
        server.close()
        await server.wait_closed()


async def network_mode(name: str) -> str:
    """The container's network mode as the engine reports it (``none``, ``host``, ...)."""
    [info] = json.loads(await podman("inspect", name))
    return str(info["HostConfig"]["NetworkMode"])


async def test_a_box_without_network_access_cannot_reach_the_host_but_still_serves_commands(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, host_server: tuple[int, list[bool]]
) -> None:
    require_podman()
    port, accepted = host_server
    dial = DIAL.format(python=PYTHON, port=port)
    model = await fake_model([
        {"output": [exec_call("c1", f"hostname; {dial}", workdir=str(workspace))]}, {"output": [message("1")]},
        {"output": [exec_call("c2", f"hostname; {dial}", workdir=str(workspace))]}, {"output": [message("2")]},
        {"output": [exec_call("c3", f"hostname; {dial}", workdir=str(workspace))]}, {"output": [message("3")]},
    ])  # fmt: skip
    model_config(codex_home, model.url, sandbox_mode="workspace-write")
    write_environments(codex_home, reap_interval_s=1)
    client = await app_server()
    pool = client.app.environments.pool
    assert pool is not None
    try:
        restricted = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=STEP))["thread"]["id"]
        [box] = await wait_containers(pool.owner, 1)
        assert await network_mode(box["name"]) == "none"
        socket_dir = pool.relay.socket_dir
        assert socket_dir is not None and (socket_dir / "relay.sock").is_socket()
        assert socket_dir.stat().st_mode & 0o777 == 0o700  # private: only the relay's owner gets in
        turn = await run_turn(client, restricted, "dial", timeout=STEP)
        assert turn["status"] == "completed"
        [item] = command_items(client)
        assert item["aggregatedOutput"].split()[0] == box["box"]  # it registered and ran the command
        assert item["exitCode"] != 0 and "reached" not in item["aggregatedOutput"], item
        assert accepted == []

        # The same thread turns network access on: its next command runs in a new box on the host network.
        policy = {"type": "workspaceWrite", "networkAccess": True}
        turn = await run_turn(client, restricted, "dial", timeout=STEP, sandboxPolicy=policy)
        assert turn["status"] == "completed"
        item = command_items(client)[1]
        hostname, reached = item["aggregatedOutput"].split()[:2]
        assert reached == "reached" and item["exitCode"] == 0, item
        assert hostname != box["box"] and len(accepted) == 1
        [networked] = await wait_containers(pool.owner, 1)  # the restricted box was released
        assert networked["box"] == hostname and await network_mode(networked["name"]) == "host"

        full = (await client.call("thread/start", {"cwd": str(workspace), "sandbox": "danger-full-access"},
                                  timeout=STEP))["thread"]["id"]  # fmt: skip
        turn = await run_turn(client, full, "dial", timeout=STEP)
        item = command_items(client)[2]
        assert "reached" in item["aggregatedOutput"] and item["exitCode"] == 0, item
        assert len(accepted) == 2
    finally:
        await client.close()
        left = await remove_owned(pool.owner)
    assert left == [] and await containers(pool.owner) == []
    assert relay_children() == []
    assert not socket_dir.exists()  # the relay's private directory went with it
