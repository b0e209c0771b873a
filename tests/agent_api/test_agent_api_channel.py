"""The bounded hand-off behind every hop of agent_api (capacity, end of stream, consumer leaving)."""

from __future__ import annotations

import asyncio

import pytest

from agent_api.channel import BoundedChannel


async def test_send_waits_for_room_and_items_keep_order() -> None:
    channel: BoundedChannel[int] = BoundedChannel(2)
    assert await channel.send(1) and await channel.send(2)
    blocked = asyncio.ensure_future(channel.send(3))
    done, _ = await asyncio.wait({blocked}, timeout=0.05)
    assert not done and len(channel) == 2  # full: the third send waits
    assert await channel.recv() == 1
    assert await asyncio.wait_for(blocked, 5) is True
    channel.close_sender()
    assert [await channel.recv(), await channel.recv(), await channel.recv()] == [2, 3, None]
    await asyncio.wait_for(channel.wait_consumer_done(), 5)


async def test_consumer_leaving_releases_a_blocked_sender() -> None:
    channel: BoundedChannel[int] = BoundedChannel(1)
    await channel.send(1)
    blocked = asyncio.ensure_future(channel.send(2))
    await asyncio.sleep(0)
    channel.close_receiver()
    assert await asyncio.wait_for(blocked, 5) is False
    assert await channel.send(3) is False  # discarded from now on
    assert await channel.recv() is None
    await asyncio.wait_for(channel.wait_consumer_done(), 5)


async def test_consumer_done_waits_for_the_end_to_be_seen() -> None:
    channel: BoundedChannel[int] = BoundedChannel(4)
    await channel.send(1)
    channel.close_sender()
    waiter = asyncio.ensure_future(channel.wait_consumer_done())
    done, _ = await asyncio.wait({waiter}, timeout=0.05)
    assert not done  # an item is still unread
    assert await channel.recv() == 1 and await channel.recv() is None
    await asyncio.wait_for(waiter, 5)


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        BoundedChannel(0)
