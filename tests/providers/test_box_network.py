"""Real Podman: a box's network follows its thread's sandbox policy, and every box still reaches the relay.

A TCP server listens on the host's loopback. A workspace-write thread without network access runs in a
box with no network at all (``--network none``): its command cannot connect to that server, yet the box
registered through the relay's unix socket and ran the command. The same command in a danger-full-access
thread reaches it, and (a ``slow`` variant) in a turn that turns network access on, in a new box.
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


def dialing_model(dial: str, workspace: Path, turns: int) -> list[dict[str, Any]]:
    """``turns`` turns, each one command (the box's hostname, then the dial) and a message."""
    script: list[dict[str, Any]] = []
    for n in range(turns):
        script += [{"output": [exec_call(f"c{n}", f"hostname; {dial}", workdir=str(workspace))]},
                   {"output": [message(str(n))]}]  # fmt: skip
    return script


async def start_restricted(client: Any, workspace: Path) -> tuple[str, dict[str, Any], Path]:
    """A workspace-write thread without network access: its id, its box (no network) and the relay's socket
    directory (private, holding the socket the box reaches the relay through)."""
    pool = client.app.environments.pool
    thread = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=STEP))["thread"]["id"]
    [box] = await wait_containers(pool.owner, 1)
    assert await network_mode(box["name"]) == "none"
    socket_dir = pool.relay.socket_dir
    assert socket_dir is not None and (socket_dir / "relay.sock").is_socket()
    assert socket_dir.stat().st_mode & 0o777 == 0o700  # private: only the relay's owner gets in
    return thread, box, socket_dir


async def assert_cannot_dial(client: Any, thread: str, box: dict[str, Any], accepted: list[bool]) -> None:
    turn = await run_turn(client, thread, "dial", timeout=STEP)
    assert turn["status"] == "completed"
    item = command_items(client)[-1]
    assert item["aggregatedOutput"].split()[0] == box["box"]  # it registered and ran the command
    assert item["exitCode"] != 0 and "reached" not in item["aggregatedOutput"], item
    assert accepted == []


async def a_restricted_box_that_cannot_dial(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, host_server: tuple[int, list[bool]]
) -> tuple[Any, str, dict[str, Any], Path]:
    """A server whose model dials the host's server in each of two turns, and a workspace-write thread
    without network access whose first turn could not: the client, the thread, its box, the relay's socket
    directory."""
    require_podman()
    port, accepted = host_server
    model = await fake_model(dialing_model(DIAL.format(python=PYTHON, port=port), workspace, 2))
    model_config(codex_home, model.url, sandbox_mode="workspace-write")
    write_environments(codex_home, reap_interval_s=1)
    client = await app_server()
    thread, box, socket_dir = await start_restricted(client, workspace)
    await assert_cannot_dial(client, thread, box, accepted)
    return client, thread, box, socket_dir


async def assert_nothing_left(client: Any, socket_dir: Path) -> None:
    owner = client.app.environments.pool.owner
    await client.close()
    assert await remove_owned(owner) == [] and await containers(owner) == []
    assert relay_children() == []
    assert not socket_dir.exists()  # the relay's private directory went with it


async def test_a_box_without_network_access_cannot_reach_the_host_but_still_serves_commands(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, host_server: tuple[int, list[bool]]
) -> None:
    client, _thread, _box, socket_dir = await a_restricted_box_that_cannot_dial(
        app_server, fake_model, codex_home, workspace, host_server
    )
    accepted = host_server[1]
    # A danger-full-access thread of the same server: the same command reaches the host's server.
    full = (await client.call("thread/start", {"cwd": str(workspace), "sandbox": "danger-full-access"},
                              timeout=STEP))["thread"]["id"]  # fmt: skip
    await run_turn(client, full, "dial", timeout=STEP)
    item = command_items(client)[1]
    hostname, reached = item["aggregatedOutput"].split()[:2]
    assert reached == "reached" and item["exitCode"] == 0 and len(accepted) == 1, item
    [networked] = [b for b in await containers(client.app.environments.pool.owner) if b["box"] == hostname]
    assert await network_mode(networked["name"]) == "host"
    await assert_nothing_left(client, socket_dir)


@pytest.mark.slow
async def test_a_turn_that_turns_network_access_on_runs_in_a_new_box_with_the_network(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, host_server: tuple[int, list[bool]]
) -> None:
    client, thread, box, socket_dir = await a_restricted_box_that_cannot_dial(
        app_server, fake_model, codex_home, workspace, host_server
    )
    accepted = host_server[1]
    policy = {"type": "workspaceWrite", "networkAccess": True}
    turn = await run_turn(client, thread, "dial", timeout=STEP, sandboxPolicy=policy)
    assert turn["status"] == "completed"
    item = command_items(client)[1]
    hostname, reached = item["aggregatedOutput"].split()[:2]
    assert reached == "reached" and item["exitCode"] == 0, item
    assert hostname != box["box"] and len(accepted) == 1
    [networked] = await wait_containers(client.app.environments.pool.owner, 1)  # the restricted box went
    assert networked["box"] == hostname and await network_mode(networked["name"]) == "host"
    await assert_nothing_left(client, socket_dir)
