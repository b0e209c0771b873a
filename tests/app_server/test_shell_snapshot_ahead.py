"""A thread's shell snapshot can take a login-shell capture begun before the thread existed (the server
starts one for its own directory once initialize is answered, so a first turn's first command does not
wait for a login shell); without one it runs its own login shell."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from app_server.tools.shell_snapshot import ShellSnapshot, capture_login_env


async def _ahead(env_dump: bytes) -> bytes | None:
    return env_dump


async def test_a_capture_made_ahead_is_written_without_another_shell(tmp_path: Path) -> None:
    # A shell that cannot run: the snapshot can only succeed from the capture it is handed.
    snapshot = ShellSnapshot(tmp_path / "t.sh", shell=str(tmp_path / "no-such-shell"))
    captured = asyncio.get_running_loop().create_task(_ahead(b"PYCODEX_AHEAD_MARK=yes\0PWD=/x\0"))
    assert await asyncio.wait_for(snapshot.start(tmp_path, captured), 10)
    assert (tmp_path / "t.sh").read_text() == "export PYCODEX_AHEAD_MARK=yes\n"
    argv = await snapshot.argv_for("echo hi", login=True)
    assert argv is not None and argv[-1].endswith("echo hi")


async def test_without_a_capture_the_snapshot_runs_its_own_login_shell(tmp_path: Path) -> None:
    missing = ShellSnapshot(tmp_path / "m.sh", shell=str(tmp_path / "no-such-shell"))
    assert not await asyncio.wait_for(missing.start(tmp_path), 10)
    assert await asyncio.wait_for(capture_login_env(str(tmp_path / "no-such-shell"), tmp_path), 10) is None
    if os.path.exists("/bin/sh"):
        out = await asyncio.wait_for(capture_login_env("/bin/sh", tmp_path), 30)
        assert out is not None and b"PATH=" in out
