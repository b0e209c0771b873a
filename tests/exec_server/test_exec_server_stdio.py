"""``--listen stdio``: newline-delimited JSON, Codex's parse-error text, exit 0 when stdin closes."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.execserver import STEP, server_argv, server_env, server_params, start_params


async def _line(stdout: asyncio.StreamReader) -> dict[str, Any]:
    raw = await asyncio.wait_for(stdout.readline(), STEP)
    assert raw, "server closed stdout"
    msg: dict[str, Any] = json.loads(raw)
    return msg


@pytest.mark.parametrize("name", server_params())
async def test_stdio_speaks_json_lines_and_exits_zero_killing_its_processes_on_eof(
    name: str, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    proc = await asyncio.create_subprocess_exec(
        *server_argv(name, "--listen", "stdio"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=server_env(tmp_path),
        cwd=tmp_path,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"{bad\n[1]\n")
        first, second = await _line(proc.stdout), await _line(proc.stdout)
        prefix = "failed to parse JSON-RPC message from exec-server stdio: "
        assert first["id"] == -1 and first["error"]["message"].startswith(prefix)
        assert second["error"] == {"code": -32600, "message": prefix + "expected a JSON-RPC object"}
        script = f"echo $$ > {pidfile}; echo hi; exec sleep 30"
        for msg in (
            {"id": 1, "method": "initialize", "params": {"clientName": "pytest"}},
            {"method": "initialized"},
            {
                "id": 2,
                "method": "process/start",
                "params": start_params("p", ["/bin/sh", "-c", script], tmp_path),
            },
        ):
            proc.stdin.write(json.dumps(msg).encode() + b"\n")
        await proc.stdin.drain()
        seen: list[dict[str, Any]] = []
        for _ in range(10):
            seen.append(await _line(proc.stdout))
            if any(m.get("method") == "process/output" for m in seen) and any(m.get("id") == 2 for m in seen):
                break
        assert next(m for m in seen if m.get("id") == 2)["result"] == {
            "processId": "p",
            "sandboxType": "none",
        }
        leader = int(pidfile.read_text())
        proc.stdin.close()
        assert await asyncio.wait_for(proc.wait(), STEP) == 0
        for _ in range(int(STEP / 0.05)):
            if not _alive(leader):
                break
            await asyncio.sleep(0.05)
        assert not _alive(leader)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"
