"""``fan_out`` queues a broadcast at once on every connection with room, and waits only on full ones.

A connection whose outbox is full must not hold the notice back from the others: they have it before the
full one is waited on, and one that stays full past ``SLOW_SUBSCRIBER_S`` is returned as stalled.
"""

from __future__ import annotations

import asyncio
from typing import Any

from app_server.threads import state
from app_server.threads.state import fan_out

WAIT = 10.0


class FakeSubscriber:
    """What ``fan_out`` uses of a connection: room or not, and the bytes it was handed."""

    def __init__(self, *, room: bool, log: list[str], name: str, release: asyncio.Event | None = None) -> None:
        self.closed = asyncio.Event()
        self.room, self.log, self.name, self.release = room, log, name, release
        self.got: list[bytes] = []

    def wants(self, method: str) -> bool:
        return True

    def encode_notification(self, method: str, params: Any) -> bytes:
        return method.encode()

    def offer(self, data: bytes) -> bool:
        if self.room:
            self.got.append(data)
            self.log.append(f"offer {self.name}")
        return self.room

    async def send_within(self, data: bytes, timeout: float) -> bool:
        self.log.append(f"wait {self.name}")
        assert self.release is not None
        try:
            async with asyncio.timeout(timeout):
                await self.release.wait()
        except TimeoutError:
            return False
        self.got.append(data)
        return True


async def test_a_full_connection_is_waited_on_after_the_others_have_the_notice() -> None:
    log: list[str] = []
    release = asyncio.Event()
    full = FakeSubscriber(room=False, log=log, name="full", release=release)
    free = FakeSubscriber(room=True, log=log, name="free")
    asyncio.get_running_loop().call_soon(release.set)
    stalled = await asyncio.wait_for(fan_out([full, free], "m", {}), WAIT)
    assert stalled == []
    assert log == ["offer free", "wait full"]
    assert full.got == free.got == [b"m"]
    assert full.got[0] is free.got[0]  # encoded once


async def test_a_connection_that_stays_full_is_returned_as_stalled(monkeypatch: Any) -> None:
    monkeypatch.setattr(state, "SLOW_SUBSCRIBER_S", 0.01)
    log: list[str] = []
    full = FakeSubscriber(room=False, log=log, name="full", release=asyncio.Event())
    free = FakeSubscriber(room=True, log=log, name="free")
    stalled = await asyncio.wait_for(fan_out([full, free], "m", {}), WAIT)
    assert stalled == [full]
    assert free.got == [b"m"] and full.got == []
