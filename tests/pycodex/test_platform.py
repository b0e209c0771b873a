"""pycodex.platform: the Landlock launcher and the pidfd-watching spawn, used by both products."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from pycodex.platform import landlock
from pycodex.platform.spawn import SpawnError, SpawnRequest, spawn
from tests.support.tools import skip_without_landlock

LAUNCHER = str(Path(landlock.__file__).resolve())
needs_landlock = skip_without_landlock()


def _launch(*args: str) -> subprocess.CompletedProcess[str]:
    # -I -S as the app-server runs it: the module must work with no site-packages and no package context.
    return subprocess.run(
        [sys.executable, "-I", "-S", LAUNCHER, *args], capture_output=True, text=True, timeout=30, check=False
    )


@needs_landlock
def test_the_launcher_allows_writes_only_beneath_the_write_roots(tmp_path: Path) -> None:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    script = f"echo a > {inside}/ok && echo b > {outside}/no"
    done = _launch("--write", str(inside), "--", "/bin/sh", "-c", script)
    assert done.returncode != 0 and "Permission denied" in done.stderr
    assert (inside / "ok").read_text() == "a\n"
    assert not (outside / "no").exists()


@needs_landlock
def test_a_writable_file_gets_file_rights_and_its_siblings_stay_closed(tmp_path: Path) -> None:
    target, sibling = tmp_path / "target", tmp_path / "sibling"
    target.write_text("")
    done = _launch("--write", str(target), "--", "/bin/sh", "-c", f"echo x > {target}; echo y > {sibling}")
    assert target.read_text() == "x\n" and not sibling.exists()
    assert done.returncode != 0


def test_the_launcher_refuses_a_bad_command_line_with_one_line() -> None:
    done = _launch("--bogus", "--", "true")
    assert done.returncode == 2 and done.stderr == "sandbox: unexpected argument '--bogus'\n"
    assert _launch("--write", "/tmp").stderr == "sandbox: no command given\n"


def test_no_confinement_when_nothing_is_restricted() -> None:
    assert landlock.confinement(None) is None


async def test_wait_returns_when_the_leader_exits_though_a_grandchild_holds_the_pipes(tmp_path: Path) -> None:
    request = SpawnRequest(["/bin/sh", "-c", "sleep 60 & exit 3"], tmp_path, {"PATH": "/usr/bin:/bin"})
    spawned = await spawn(request)
    try:
        assert await asyncio.wait_for(spawned.wait(), 30) == 3
    finally:
        spawned.signal_group(9)
        for stream in spawned.streams:  # the grandchild is gone once its pipes reach EOF
            while await asyncio.wait_for(spawned.read_chunk(stream, 4096), 30):
                pass


async def test_a_missing_program_is_a_spawn_error_in_codex_wording(tmp_path: Path) -> None:
    with pytest.raises(SpawnError, match=r"^No such file or directory \(os error 2\)$"):
        await spawn(SpawnRequest([str(tmp_path / "missing")], tmp_path, {}))
