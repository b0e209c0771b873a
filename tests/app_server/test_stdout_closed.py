"""The app-server on stdio exits once its client closes the read end of its stdout, even with stdin open:
nobody can read the answers any more (before, it kept running until stdin closed)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from tests.support.appserver_process import app_server_env
from tests.support.procs import spawn, stop_process

EXIT_TIMEOUT_S = 30


async def test_closing_stdout_ends_the_app_server(codex_home: Path, workspace: Path) -> None:
    read_end, write_end = os.pipe()
    proc = await spawn(sys.executable, "-m", "pycodex", "app-server", stdin=asyncio.subprocess.PIPE, stdout=write_end,
                       stderr=asyncio.subprocess.DEVNULL, cwd=workspace, env=app_server_env(codex_home))
    os.close(write_end)
    try:
        assert proc.stdin is not None
        init = {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "0"}}}
        proc.stdin.write(json.dumps(init).encode() + b"\n")
        await proc.stdin.drain()
        with os.fdopen(read_end, "rb") as stdout:
            first = await asyncio.wait_for(asyncio.to_thread(stdout.readline), EXIT_TIMEOUT_S)
            assert json.loads(first)["id"] == 1
        # stdout's only reader is gone; stdin stays open.
        code = await asyncio.wait_for(proc.wait(), EXIT_TIMEOUT_S)
        assert code == 0
    finally:
        await stop_process(proc)
