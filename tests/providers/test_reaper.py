"""The reaper's choices, on a fake engine: which listed boxes it removes and which it leaves alone."""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import subprocess
import sys
import weakref
from types import SimpleNamespace

from app_server.providers.base import LABEL_BOX, LABEL_OWNER, Box, BoxInfo, BoxLaunch, BoxProvider, BoxRequest
from app_server.providers.pool import BoxPool, Lease, PoolSettings


class FakeEngine(BoxProvider):
    """Lists what the test put there and records removals; starts nothing."""

    engine = "fake"

    def __init__(self, boxes: list[BoxInfo]) -> None:
        self.boxes, self.removed, self.stopped = boxes, list[str](), list[str]()

    async def check(self) -> None:
        return None

    async def start(self, request: BoxRequest, launch: BoxLaunch) -> Box:
        raise AssertionError("the reaper starts nothing")

    async def stop(self, box: Box) -> None:
        self.stopped.append(box.box_id)
        box.exited.set()

    async def list_boxes(self) -> list[BoxInfo]:
        return [b for b in self.boxes if b.name not in self.removed]

    async def remove(self, name: str) -> None:
        self.removed.append(name)


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    return proc.pid


class FakeEnvironment:
    """Stands for the lease's ExecServerEnvironment: a client that is not closed, a close that works."""

    def __init__(self) -> None:
        self.client = SimpleNamespace(closed=asyncio.Event())

    async def close(self) -> None:
        self.client.closed.set()


class FakeConnector:
    async def aclose(self) -> None:
        return None


async def test_the_reaper_removes_unknown_boxes_of_its_own_and_of_dead_owners_only() -> None:
    engine = FakeEngine([])
    pool = BoxPool("box", engine, BoxRequest(), PoolSettings())
    host = socket.gethostname()
    engine.boxes = [
        BoxInfo("mine-unknown", {LABEL_OWNER: pool.owner, LABEL_BOX: "box-1"}),
        BoxInfo("dead-owner", {LABEL_OWNER: f"{host}:{dead_pid()}:abcd", LABEL_BOX: "box-2"}),
        BoxInfo("live-owner", {LABEL_OWNER: f"{host}:{os.getppid()}:abcd", LABEL_BOX: "box-3"}),
        BoxInfo("other-host", {LABEL_OWNER: "elsewhere.example:1:abcd", LABEL_BOX: "box-4"}),
        BoxInfo("unlabelled-owner", {LABEL_OWNER: "", LABEL_BOX: "box-5"}),
    ]
    assert sorted(await pool.reap()) == ["dead-owner", "mine-unknown"]
    assert sorted(engine.removed) == ["dead-owner", "mine-unknown"]


async def test_a_lease_whose_thread_object_is_gone_is_released_by_the_next_pass() -> None:
    engine = FakeEngine([])
    pool = BoxPool("box", engine, BoxRequest(), PoolSettings())

    class Thread:
        pass

    thread = Thread()
    launch = BoxLaunch("http://127.0.0.1:1", "box-9", "t", "box", pool.owner)
    lease = Lease(Box("box-9", launch), FakeEnvironment(), FakeConnector())  # type: ignore[arg-type]
    lease.owner = weakref.ref(thread)
    pool._leases["box-9"] = lease
    engine.boxes = [BoxInfo("pycodex-box-box-9", {LABEL_OWNER: pool.owner, LABEL_BOX: "box-9"})]
    assert await pool.reap() == []  # its thread still exists
    del thread
    gc.collect()
    assert await pool.reap() == ["box-9", "pycodex-box-box-9"]
    assert engine.stopped == ["box-9"] and lease.released
