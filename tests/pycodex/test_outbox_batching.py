"""The outbox hands everything queued since its last write to ``write_many`` at once, in order."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pycodex.transport import Outbox

WAIT = 10.0


async def test_messages_queued_before_the_writer_runs_go_out_in_one_write_many() -> None:
    singles: list[bytes] = []
    batches: list[list[bytes]] = []
    done = asyncio.Event()

    async def write(data: bytes) -> None:
        singles.append(data)

    async def write_many(messages: Sequence[bytes]) -> None:
        batches.append(list(messages))
        done.set()

    outbox = Outbox(write, write_many=write_many)
    outbox.start()
    for data in (b"a", b"b", b"c"):  # no await yields here: the writer has not run yet
        await outbox.send(data)
    await asyncio.wait_for(done.wait(), WAIT)
    await outbox.send(b"d")
    await outbox.close(flush_timeout=WAIT)
    assert batches == [[b"a", b"b", b"c"]]
    assert singles == [b"d"]  # alone in the queue: the plain write


async def test_has_room_says_whether_a_send_would_wait() -> None:
    async def write(data: bytes) -> None:
        pass

    outbox = Outbox(write, max_queued=1)  # not started: nothing drains
    assert outbox.has_room(10)
    await outbox.send(b"x")
    assert not outbox.has_room(10)
    await outbox.close(flush_timeout=0.1)
    assert outbox.has_room(10)  # closed: a send is dropped, never waits


async def test_offer_queues_without_waiting_or_says_it_would_wait() -> None:
    written: list[bytes] = []
    done = asyncio.Event()

    async def write(data: bytes) -> None:
        written.append(data)
        done.set()

    outbox = Outbox(write, max_queued=1)
    assert outbox.offer(b"x")
    assert not outbox.offer(b"y")  # full: the caller must wait with send
    outbox.start()
    await asyncio.wait_for(done.wait(), WAIT)
    await outbox.close(flush_timeout=WAIT)
    assert outbox.offer(b"z")  # closed: taken and dropped, as send drops it
    assert written == [b"x"]
