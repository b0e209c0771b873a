"""Real Podman: each thread's commands run in a fresh container of its own, started through the relay.

The app-server runs in-memory with ``environments.toml`` naming a podman-provided default environment; the
fake model calls ``exec_command``, whose output comes back from inside the container. Each test ends by
checking that no container of its pool is left.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from app_server.providers import make_pool
from tests.app_server.tools.test_patch_tool import outputs
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

PROBE = "hostname; test -e {marker} && echo host-file-visible || echo host-file-hidden; echo in-box > /tmp/box-only"


class Thread:
    """Stands for the thread environment a lease follows (its life, by weak reference)."""


@pytest.fixture
async def owners() -> AsyncIterator[list[str]]:
    """Owner labels of the pools a test starts (``start_server``); after the test has closed its servers,
    none of their containers may be left."""
    require_podman()
    found: list[str] = []
    yield found
    left = [name for owner in found for name in await remove_owned(owner)]
    assert left == [], f"containers outlived their app-server: {left}"


async def start_server(app_server: Any, owners: list[str]) -> Any:
    client = await app_server()
    pool = client.app.environments.pool
    assert pool is not None, "environments.toml did not select the podman provider"
    owners.append(pool.owner)
    return client


async def stop_server(client: Any, owners: list[str]) -> None:
    """Close the server (its boxes and relay go with it) and check at once that none of them is left."""
    await client.close()
    assert await containers(owners[-1]) == []
    assert relay_children() == []


async def test_a_turn_runs_its_command_inside_a_fresh_container(
    app_server, fake_model, codex_home: Path, workspace: Path, tmp_path: Path, owners: list[str]
) -> None:
    marker = tmp_path / "host-marker"  # outside the workspace: the box must not see it
    marker.write_text("host")
    model = await fake_model([
        {"output": [exec_call("c1", PROBE.format(marker=marker), workdir=str(workspace))]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url, sandbox_mode="danger-full-access")
    write_environments(codex_home, reap_interval_s=1)
    client = await start_server(app_server, owners)
    thread = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=STEP))["thread"]
    [box] = await wait_containers(owners[0], 1)
    assert box["thread"] == thread["id"]
    turn = await run_turn(client, thread["id"], "probe", timeout=STEP)
    assert turn["status"] == "completed"
    [item] = command_items(client)
    output = item["aggregatedOutput"]
    hostname, visibility = output.split()[:2]
    assert hostname == box["box"] and hostname != socket.gethostname()
    assert visibility == "host-file-hidden"
    assert not Path("/tmp/box-only").exists() or Path("/tmp/box-only").read_text() != "in-box\n"
    assert item["exitCode"] == 0
    await stop_server(client, owners)


async def test_two_threads_get_two_containers_and_archive_releases_one(
    app_server, fake_model, codex_home: Path, workspace: Path, owners: list[str]
) -> None:
    model = await fake_model({"responses": [
        {"output": [exec_call("a", "hostname", workdir=str(workspace))]}, {"output": [message("a")]},
        {"output": [exec_call("b", "hostname", workdir=str(workspace))]}, {"output": [message("b")]},
    ]})  # fmt: skip
    model_config(codex_home, model.url, sandbox_mode="danger-full-access")
    write_environments(codex_home, reap_interval_s=1)
    client = await start_server(app_server, owners)
    first = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=STEP))["thread"]["id"]
    second = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=STEP))["thread"]["id"]
    boxes = await wait_containers(owners[0], 2)
    assert {b["thread"] for b in boxes} == {first, second}
    await run_turn(client, first, "a", timeout=STEP)
    await run_turn(client, second, "b", timeout=STEP)
    hostnames = [item["aggregatedOutput"].strip() for item in command_items(client)]
    assert sorted(hostnames) == sorted(b["box"] for b in boxes) and len(set(hostnames)) == 2
    await client.call("thread/archive", {"threadId": first}, timeout=STEP)
    [left] = await wait_containers(owners[0], 1)
    assert left["thread"] == second
    await stop_server(client, owners)


async def test_a_container_killed_mid_command_fails_the_turn_and_the_next_turn_gets_a_new_box(
    app_server, fake_model, codex_home: Path, workspace: Path, owners: list[str]
) -> None:
    model = await fake_model([
        {"output": [exec_call("c1", "echo started; exec sleep 120", workdir=str(workspace), yield_time_ms=30_000)]},
        {"output": [exec_call("c2", "hostname", workdir=str(workspace))]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url, sandbox_mode="danger-full-access")
    write_environments(codex_home, reap_interval_s=1)
    client = await start_server(app_server, owners)
    thread = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=STEP))["thread"]["id"]
    [first] = await wait_containers(owners[0], 1)
    await client.call("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "go"}]})
    await client.wait_notification("item/commandExecution/outputDelta", lambda p: "started" in p["delta"], timeout=STEP)
    await podman("kill", first["name"])
    done = await client.wait_notification("turn/completed", timeout=STEP)
    turn_error = done["params"]["turn"]["error"]
    assert done["params"]["turn"]["status"] == "failed", done
    assert turn_error["message"].startswith(
        f"environment `box` was lost mid-command: the podman container {first['name']} exited (137)"), turn_error
    [error] = client.notifications("error")  # as for a model stream that failed: one error, no retry
    assert error["params"]["error"] == turn_error and error["params"]["willRetry"] is False
    [lost] = command_items(client)
    assert lost["status"] == "failed" and lost["exitCode"] is None
    # Exactly one turn/completed (a thread/read round trip lets any second one arrive first).
    await client.call("thread/read", {"threadId": thread, "includeTurns": True})
    assert len(client.notifications("turn/completed")) == 1
    assert len(model.requests()) == 1  # the turn ended there: the model was not asked again
    turn = await run_turn(client, thread, "again", timeout=STEP)
    assert turn["status"] == "completed"
    told = outputs(model)["c1"]  # the next request still answers the lost call, saying what happened
    assert told.startswith("exec_command failed: ") and "started" in told, told
    hostname = command_items(client)[1]["aggregatedOutput"].strip()
    assert hostname.startswith("box-") and hostname != first["box"]
    [second] = await wait_containers(owners[0], 1)
    assert second["box"] == hostname
    await stop_server(client, owners)


async def test_a_warm_pool_hands_a_thread_a_box_already_running(
    app_server, fake_model, codex_home: Path, workspace: Path, owners: list[str]
) -> None:
    model = await fake_model([{"output": [exec_call("c1", "hostname", workdir=str(workspace))]},
                              {"output": [message("done")]}])  # fmt: skip
    # Warm boxes are made for the default sandbox (workspace-write, no network): this thread's.
    model_config(codex_home, model.url, sandbox_mode="workspace-write")
    write_environments(codex_home, pool_size=1, reap_interval_s=1, mounts=[f"{workspace}:{workspace}:rw"])
    client = await start_server(app_server, owners)
    pool = client.app.environments.pool
    await pool.wait_warm(STEP)
    [warm] = await containers(owners[0])
    thread = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=STEP))["thread"]["id"]
    await run_turn(client, thread, "go", timeout=STEP)
    assert command_items(client)[0]["aggregatedOutput"].strip() == warm["box"]
    await pool.wait_warm(STEP)  # the pool refills behind the thread
    assert len(await containers(owners[0])) == 2
    await stop_server(client, owners)


async def test_a_box_whose_thread_is_gone_is_reaped(
    app_server, fake_model, codex_home: Path, workspace: Path, owners: list[str]
) -> None:
    model = await fake_model([{"output": [message("ok")]}])
    model_config(codex_home, model.url)
    write_environments(codex_home, reap_interval_s=0.2)
    client = await start_server(app_server, owners)
    # A container labelled as this pool's that no lease knows (a lease lost in a crash): the reaper takes it.
    image = require_podman()
    await podman("run", "-d", "--rm", "--runtime", "runc", "--ulimit", "nofile=1024:1024", "--ulimit",
                 "nproc=1024:1024", "--label", f"pycodex.owner={owners[0]}", "--label", "pycodex.box=box-stray",
                 image, "sleep", "120")  # fmt: skip
    client.app.environments.pool.start()
    await wait_containers(owners[0], 0)
    await stop_server(client, owners)


async def test_a_read_only_sandbox_mounts_the_workspace_read_only(
    app_server, fake_model, codex_home: Path, workspace: Path, owners: list[str]
) -> None:
    model = await fake_model([
        {"output": [exec_call("c1", "cat seen.txt; touch written.txt", workdir=str(workspace))]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url, sandbox_mode="read-only")
    write_environments(codex_home, reap_interval_s=1)
    (workspace / "seen.txt").write_text("from the host\n")
    client = await start_server(app_server, owners)
    thread = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=STEP))["thread"]["id"]
    await run_turn(client, thread, "go", timeout=STEP)
    [item] = command_items(client)
    assert item["aggregatedOutput"].startswith("from the host\n")
    assert "Read-only file system" in item["aggregatedOutput"] and item["exitCode"] != 0
    assert not (workspace / "written.txt").exists()
    await stop_server(client, owners)


async def test_a_box_ends_by_itself_when_its_app_server_lets_go_of_its_stdin(owners: list[str]) -> None:
    # What an app-server killed with SIGKILL leaves behind: the `podman run` client, whose stdin then ends.
    pool = make_pool("box", {"provider": "podman", "reap_interval_s": 3600}, {})
    owners.append(pool.owner)
    thread = Thread()  # the lease follows this object's life, as a thread's environment's
    lease = await pool.acquire("thread-x", thread, None)
    [running] = await containers(pool.owner)
    assert running["box"] == lease.box.box_id
    lease.box.handle.stdin.close()
    await asyncio.wait_for(lease.box.exited.wait(), STEP)
    await wait_containers(pool.owner, 0)
    await pool.close()
    assert relay_children() == []


async def test_a_killed_app_server_leaves_no_container_behind(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    # A real `pycodex app-server` process, SIGKILLed: no teardown of its own runs. Its boxes' `podman run`
    # clients survive it, see their stdin end, and their boxes stop (box_main's dead man's switch).
    require_podman()
    model = await fake_model([{"output": [message("ok")]}])
    model_config(codex_home, model.url)
    write_environments(codex_home, reap_interval_s=3600)  # no reaper pass can be what removes it
    client = await app_server(subprocess=True)
    thread = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=STEP))["thread"]["id"]
    label = f"label=pycodex.thread={thread}"
    [name] = (await podman("ps", "--filter", label, "--format", "{{.Names}}")).split()
    client.process.proc.kill()  # our own child, by PID (not its group: the podman clients live on)
    assert await client.wait_exit(10) == -signal.SIGKILL
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STEP
    while (left := (await podman("ps", "-a", "--filter", label, "--format", "{{.Names}}")).split()) and (
        loop.time() < deadline
    ):
        await asyncio.sleep(0.2)
    if left:  # teardown: never leave it, then fail
        await podman("rm", "-f", "-t", "0", name)
    assert left == []
