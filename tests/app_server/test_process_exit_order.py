"""process/spawn: every output notification is sent before ``process/exited``, however slowly it goes out.

The exit is reported once the pumps that forward the child's output are finished or provably idle (a
background child holding a pipe open, nothing to read), never after a fixed grace that a loaded machine can
outlast: the handler-level tests drive ``_run`` with a stand-in process whose output the test releases.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest

from app_server.handlers import commands
from app_server.surface_state import RunningProcess
from tests.support.appserver import AppServerClient

Start = Callable[..., Awaitable[AppServerClient]]


class _StandInProcess:
    """An exited leader whose stdout still holds ``chunks`` and whose stderr a background child keeps open."""

    streams = ("stdout", "stderr")
    returncode = 0

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)

    async def read_chunk(self, stream: str, size: int) -> bytes:
        if stream == "stdout":
            return self._chunks.pop(0) if self._chunks else b""
        await asyncio.get_running_loop().create_future()  # held open, never written: until cancelled
        raise AssertionError("unreachable")

    async def wait(self) -> int:
        return 0

    def signal_group(self, sig: int) -> None:
        """Nothing to kill."""

    def close_pty(self) -> None:
        """No pty."""


def _running(chunks: list[bytes]) -> RunningProcess:
    return RunningProcess(cast("Any", _StandInProcess(chunks)), stream_stdin=False, tty=False)


async def test_output_still_being_sent_when_the_leader_exits_goes_out_before_the_exit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(commands, "QUIET_S", 0.001)  # many quiet windows pass while the client is slow
    release = asyncio.Event()
    entered = asyncio.Event()
    sent: list[bytes] = []
    returned = False

    async def slow_client(stream: str, data: bytes, capped: bool) -> None:
        assert not returned, "an output notification after the exit"
        entered.set()
        await release.wait()  # the connection's outbox is full until the test lets it drain
        sent.append(data)

    capture = commands._Capture(None)
    run = asyncio.ensure_future(commands._run(_running([b"a", b"b"]), capture, slow_client, None))
    await asyncio.wait_for(entered.wait(), 5)
    # Some fifty quiet windows' worth: a grace of that length would have given up on the pump by now.
    done, _ = await asyncio.wait({run}, timeout=0.05)
    assert not done, "the exit was reported while output was still being sent"
    release.set()
    assert await asyncio.wait_for(run, 5) == 0
    returned = True
    assert sent == [b"a", b"b"]


async def test_a_pipe_held_open_by_a_background_child_does_not_hold_back_the_exit() -> None:
    capture = commands._Capture(None)
    assert await asyncio.wait_for(commands._run(_running([b"done\n"]), capture, None, None), 5) == 0
    assert bytes(capture.data["stdout"]) == b"done\n" and not capture.drain_timed_out


async def test_streamed_output_precedes_process_exited_on_the_wire(app_server: Start, tmp_path: Path) -> None:
    client = await app_server(experimental=True)
    size = 300_000  # dozens of chunks, still in flight when the leader exits
    await client.call("process/spawn", {
        "command": ["sh", "-c", f"head -c {size} /dev/zero; sleep 30 &"], "cwd": str(tmp_path),
        "processHandle": "big", "streamStdoutStderr": True, "outputBytesCap": size * 2})
    exited = await client.wait_notification(
        "process/exited", lambda p: p["processHandle"] == "big", timeout=30
    )
    assert exited["params"]["outputDrainTimedOut"] is False
    methods = [m["method"] for m in client.notifications() if m["method"].startswith("process/")]
    assert methods[-1] == "process/exited" and methods.count("process/exited") == 1
    deltas = client.notifications("process/outputDelta")
    assert sum(len(base64.b64decode(d["params"]["deltaBase64"])) for d in deltas) == size
