"""Ending subprocesses that a test (or benchmark) started: each in its own process group, killed as a group.

Every process a test spawns gets ``start_new_session=True`` (see `NEW_GROUP`) and is registered in
`GROUPS`; its children (the demo's relay and exec-server, a server's tool commands) inherit the group and
session, so killing the group reaches them even after their parent died. The conftest sweeps the registry
after each test module and at session end, which also covers a test that timed out before its teardown.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any, Final

__all__ = [
    "GROUPS",
    "NEW_GROUP",
    "ProcessGroups",
    "group_members",
    "kill_group",
    "spawn",
    "stop_process",
    "wait_group_empty",
]

#: Keyword arguments for `subprocess.Popen` / `asyncio.create_subprocess_exec`: a group of its own.
NEW_GROUP: Final[dict[str, Any]] = {"start_new_session": True}


def group_members(sid: int) -> list[int]:
    """Live (non-zombie) processes whose process group or session is `sid`, from /proc."""
    members: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command: state ppid pgrp session ...
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z" and sid in (int(fields[2]), int(fields[3])):
            members.append(int(entry.name))
    return members


def kill_group(sid: int) -> list[int]:
    """SIGKILL the group `sid` and any member that left it but kept the session; returns who was hit."""
    hit = group_members(sid)
    if sid == os.getpgrp():
        return []  # never our own group
    try:
        os.killpg(sid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in hit:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return hit


async def wait_group_empty(sid: int, timeout: float = 10.0) -> list[int]:
    """Wait (bounded) until nothing is left in group/session `sid`; returns what is still there at the
    deadline (processes that outlived their parent: the leak a caller asserts against)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (left := group_members(sid)) and loop.time() < deadline:
        await asyncio.sleep(0.05)  # polling /proc: there is no event for "a process in this group exited"
    return left


class ProcessGroups:
    """The session's registry of process groups started by tests (leaders' pids, which are the pgids)."""

    def __init__(self) -> None:
        self._pgids: set[int] = set()

    def add(self, pid: int) -> None:
        self._pgids.add(pid)

    def discard(self, pid: int) -> None:
        self._pgids.discard(pid)

    def sweep(self) -> dict[int, list[int]]:
        """Kill every registered group that still has members; returns {pgid: pids killed}."""
        leftovers: dict[int, list[int]] = {}
        for pgid in sorted(self._pgids):
            hit = kill_group(pgid)
            if hit:
                leftovers[pgid] = hit
        self._pgids.clear()
        return leftovers


#: The one registry of this test process (each xdist worker has its own).
GROUPS: Final = ProcessGroups()


async def spawn(*argv: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec` in a new process group, registered for the sweep."""
    proc = await asyncio.create_subprocess_exec(*argv, start_new_session=True, **kwargs)
    GROUPS.add(proc.pid)
    return proc


def _signal_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    """Signal `proc`'s group when it leads one of its own, else only `proc` (never the test's group)."""
    try:
        if os.getpgid(proc.pid) == proc.pid:
            os.killpg(proc.pid, sig)
            return
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.kill(proc.pid, sig)
    except ProcessLookupError:
        pass


async def stop_process(proc: asyncio.subprocess.Process, timeout: float = 10) -> None:
    """SIGTERM the process's group, wait up to ``timeout``, then SIGKILL it; then kill what is left of the
    group (children that ignored TERM or outlived their parent)."""
    if proc.returncode is None:
        _signal_group(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            _signal_group(proc, signal.SIGKILL)
            await asyncio.wait_for(proc.wait(), timeout)
    kill_group(proc.pid)
    GROUPS.discard(proc.pid)
