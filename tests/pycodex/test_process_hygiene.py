"""Process hygiene of the test suite itself: spawned groups are killed whole, even after a timeout."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.support.procs import GROUPS, ProcessGroups, group_members, spawn, stop_process, wait_group_empty
from tests.support.schema import REPO_ROOT

WAIT = 10.0
# A parent that starts a long-lived child, prints its pid and exits: the child is orphaned but keeps the group.
ORPHANING = "sleep 300 & echo $!"
TERM_PROOF = "trap '' TERM; sleep 300 & echo $!; wait"


async def _child_pid(proc: asyncio.subprocess.Process) -> int:
    assert proc.stdout is not None
    line = await asyncio.wait_for(proc.stdout.readline(), WAIT)
    return int(line)


async def _drain(proc: asyncio.subprocess.Process) -> None:
    """Read stdout to its end (the killed child held it open) so the pipe transport closes."""
    await asyncio.wait_for(proc.communicate(), WAIT)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_the_sweep_kills_an_orphan_that_outlived_its_parent() -> None:
    proc = await spawn("sh", "-c", ORPHANING, stdout=asyncio.subprocess.PIPE)
    orphan = await _child_pid(proc)
    # The parent exits at once (proc.wait() may not return while its orphan holds the stdout pipe).
    for _ in range(200):
        if not _alive(proc.pid):
            break
        await asyncio.sleep(0.05)  # polling /proc: no event tells us a process became a zombie
    assert not _alive(proc.pid)
    assert orphan in group_members(proc.pid)  # the parent is gone, its child is still in the group
    registry = ProcessGroups()
    registry.add(proc.pid)
    assert registry.sweep() == {proc.pid: [orphan]}
    assert await wait_group_empty(proc.pid, WAIT) == []
    await _drain(proc)
    assert registry.sweep() == {}  # nothing registered any more
    GROUPS.discard(proc.pid)


async def test_stop_process_takes_the_children_that_ignore_term() -> None:
    proc = await spawn("sh", "-c", TERM_PROOF, stdout=asyncio.subprocess.PIPE)
    child = await _child_pid(proc)
    await stop_process(proc, timeout=0.5)
    assert await wait_group_empty(proc.pid, WAIT) == []
    await _drain(proc)
    assert not _alive(child)


async def test_a_timed_out_test_still_has_its_process_group_killed(tmp_path: Path) -> None:
    """Run a test that spawns a group and then hangs past its pytest-timeout, under our conftest hooks."""
    pidfile = tmp_path / "child.pid"
    (tmp_path / "test_hangs.py").write_text(
        "import asyncio, pytest\n"
        "from tests.support.procs import spawn\n\n"
        "@pytest.mark.timeout(2)\n"
        "async def test_hangs():\n"
        f"    proc = await spawn('sh', '-c', 'sleep 300 & echo $! > {pidfile}; wait')\n"
        "    await asyncio.sleep(3600)  # hangs: the timeout ends it, not a teardown\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    runner = await spawn(
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
        "-o", "asyncio_mode=auto", "--rootdir", str(tmp_path), str(tmp_path / "test_hangs.py"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env, cwd=str(tmp_path),
    )  # fmt: skip
    try:
        out, _ = await asyncio.wait_for(runner.communicate(), 60)
    finally:
        await stop_process(runner)
    report = out.decode("utf-8", "replace")
    assert "Timeout" in report and "1 failed" in report, report[-3000:]
    child = int(pidfile.read_text())
    assert not _alive(child), f"the hung test's child {child} survived the session:\n{report[-3000:]}"
    assert "leaked process groups killed" in report, report[-3000:]
