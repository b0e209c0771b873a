"""The commands the README promises work on a fresh machine: `pycodex demo` runs offline to a completed turn."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from tests.support.procs import GROUPS, kill_group, spawn, wait_group_empty
from tests.support.schema import REPO_ROOT


def _clean_env(home: Path) -> dict[str, str]:
    """A temp HOME and no CODEX_*/OPENAI_* values: no real key, config or history can be used."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    env["HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    return env


async def _run(args: list[str], home: Path, cwd: Path, timeout: float = 45.0) -> tuple[int, str, str]:
    """Run `pycodex ARGS` in a process group of its own; afterwards nothing may be left in that group (the
    demo's relay and exec-server end with it), and on a timeout the whole group is killed."""
    proc = await spawn(
        sys.executable, "-m", "pycodex", *args,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=_clean_env(home), cwd=str(cwd),
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        kill_group(proc.pid)
        await proc.wait()
        raise
    finally:
        orphans = await wait_group_empty(proc.pid)
        kill_group(proc.pid)
        GROUPS.discard(proc.pid)
    assert not orphans, f"`pycodex {' '.join(args)}` left processes behind: {_describe(orphans)}"
    assert proc.returncode is not None
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _describe(pids: list[int]) -> list[str]:
    described = []
    for pid in pids:
        try:
            described.append(f"{pid}: " + Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            described.append(str(pid))
    return described


async def test_pycodex_demo_runs_offline_to_a_completed_turn(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    code, out, err = await _run(["demo"], home, cwd)
    assert code == 0, f"stdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}"
    lines = [line for line in out.splitlines() if line.strip()]
    assert "< turn/completed: completed" in lines, out[-2000:]
    assert "assistant:" in out
    # The command ran on the remote executor (only it knows the marker) and the relay saw no plaintext.
    assert "| hello from the remote executor (executor-" in out, out[-2000:]
    assert lines[-1].endswith("plaintext found in them: none"), out[-2000:]
    assert list(home.iterdir()) == []  # the demo used a throw-away CODEX_HOME, not ~/.pycodex


async def test_pycodex_demo_local_runs_the_command_in_process(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    code, out, err = await _run(["demo", "--local"], home, cwd)
    assert code == 0, f"stdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}"
    assert [line for line in out.splitlines() if line.strip()][-1] == "< turn/completed: completed"
    assert "| hello from pycodex" in out


async def test_pycodex_demo_json_prints_protocol_lines_ending_with_turn_completed(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    home.mkdir()
    cwd.mkdir()
    code, out, err = await _run(["demo", "--json"], home, cwd)
    assert code == 0, f"stdout:\n{out[-2000:]}\nstderr:\n{err[-2000:]}"
    received = [json.loads(line[2:]) for line in out.splitlines() if line.startswith("< ")]
    completed = [m for m in received if m.get("method") == "turn/completed"]
    assert len(completed) == 1 and completed[0]["params"]["turn"]["status"] == "completed", completed
    assert all("emittedAtMs" in m for m in received if "method" in m and "id" not in m)


README = REPO_ROOT / "README.md"
_FENCE = re.compile(r"^```(?P<info>[^\n]*)\n(?P<body>.*?)^```$", re.M | re.S)
_LINK = re.compile(r"\]\((?P<target>[^)#\s]+)(?:#[^)]*)?\)")


def _runnable_blocks() -> list[str]:
    """The README's fenced blocks whose info string is ``bash runnable``: recipes a first reader can paste."""
    return [m["body"] for m in _FENCE.finditer(README.read_text()) if m["info"].split() == ["bash", "runnable"]]


def test_the_readme_marks_its_runnable_recipes() -> None:
    assert len(_runnable_blocks()) >= 2  # the mock-model turn and the command check, at least


@pytest.mark.parametrize("index", range(len(_runnable_blocks())))
async def test_each_runnable_readme_block_succeeds_on_a_fresh_machine(tmp_path: Path, index: int) -> None:
    """Run with ``bash -euo pipefail`` in an empty folder, HOME there too, `pycodex` on PATH meaning this
    checkout, no CODEX_* or OPENAI_* values; the block's whole process group must be gone afterwards."""
    block = _runnable_blocks()[index]
    home, cwd, bin_dir = tmp_path / "home", tmp_path / "cwd", tmp_path / "bin"
    for folder in (home, cwd, bin_dir):
        folder.mkdir()
    shim = bin_dir / "pycodex"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pycodex "$@"\n')
    shim.chmod(0o755)
    env = _clean_env(home)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    script = tmp_path / "block.sh"
    script.write_text(block)
    proc = await spawn("bash", "-euo", "pipefail", str(script), stdin=asyncio.subprocess.DEVNULL,
                       stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=str(cwd))
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 90)
    finally:
        kill_group(proc.pid)
        GROUPS.discard(proc.pid)
    assert proc.returncode == 0, f"block {index}:\n{block}\nstdout:\n{out.decode()[-2000:]}\nstderr:\n{err.decode()[-2000:]}"


def test_every_relative_link_of_the_readme_exists() -> None:
    missing = [m["target"] for m in _LINK.finditer(README.read_text())
               if "://" not in m["target"] and not (REPO_ROOT / m["target"]).exists()]
    assert missing == []
