"""Shared helpers (no tests) for the real-Podman provider tests: config, container listing, teardown.

Every container these tests see is found by pycodex's labels and the owner label of the pool under test,
so nothing else on the machine is looked at or touched.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

from app_server.providers.base import LABEL_BOX, LABEL_OWNER, LABEL_THREAD

STEP = 60.0  # bound of every single wait on the engine (a cold box imports the whole exec-server)


def write_environments(codex_home: Path, **table: Any) -> None:
    """``environments.toml`` whose default is a podman-provided environment ``box`` with ``table``'s keys."""
    lines = ['default = "box"', "", "[environments.box]", 'provider = "podman"']
    for key, value in table.items():
        lines.append(f"{key} = {json.dumps(value)}")
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "environments.toml").write_text("\n".join(lines) + "\n")


async def podman(*args: str) -> str:
    """Run ``podman ARGS`` (bounded) and return its stdout; raises on failure."""
    binary = shutil.which("podman")
    assert binary is not None
    proc = await asyncio.create_subprocess_exec(
        binary, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), STEP)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def containers(owner: str) -> list[dict[str, Any]]:
    """Every container (running or not) labelled with ``owner``."""
    rows = json.loads(await podman("ps", "-a", "--filter", f"label={LABEL_OWNER}={owner}", "--format", "json") or "[]")
    return [{"name": r["Names"][0], "box": r["Labels"].get(LABEL_BOX), "thread": r["Labels"].get(LABEL_THREAD),
             "state": r.get("State")} for r in rows]  # fmt: skip


async def wait_containers(owner: str, count: int, timeout: float = STEP) -> list[dict[str, Any]]:
    """Until exactly ``count`` of ``owner``'s containers exist (polled, bounded); returns them."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        found = await containers(owner)
        if len(found) == count or loop.time() > deadline:
            assert len(found) == count, found
            return found
        await asyncio.sleep(0.2)


async def remove_owned(owner: str) -> list[str]:
    """Teardown: remove whatever ``owner`` left (the tests then assert it was nothing)."""
    left = await containers(owner)
    for row in left:
        await podman("rm", "-f", "-t", "0", row["name"])
    return [row["name"] for row in left]


def relay_children() -> list[int]:
    """Live children of this process that are a boxes' relay (``python -m relay --control-stdin``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[1]) == os.getpid() and b"--control-stdin" in cmdline:
            found.append(int(entry.name))
    return found


def command_items(client: Any) -> list[dict[str, Any]]:
    """The completed commandExecution items the client saw, in order."""
    return [n["params"]["item"] for n in client.notifications("item/completed")
            if n["params"]["item"]["type"] == "commandExecution"]  # fmt: skip
