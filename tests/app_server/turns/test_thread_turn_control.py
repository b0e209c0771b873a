"""ThreadRuntime's turn control (start_turn, steer, interrupt) drives the lifecycle table, in memory."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from app_server.threads.lifecycle import TurnEvent, TurnStatus
from app_server.threads.state import ThreadRuntime, ThreadSettings, TurnState


class Driver:
    """Stands in for the runner: runs until cancelled or told to finish, then ends the turn once."""

    def __init__(self, thread: ThreadRuntime, turn: TurnState) -> None:
        self.thread, self.turn = thread, turn
        self.steered = 0
        self.started = asyncio.Event()
        self.finish = asyncio.Event()

    async def run(self) -> None:
        outcome = TurnEvent.COMPLETE
        try:
            self.started.set()
            await self.finish.wait()
        except asyncio.CancelledError:
            outcome = TurnEvent.ABORT
        self.thread.end_turn(self.turn, outcome, None)

    def steer(self) -> None:
        self.steered += 1


def spawn(coro: Any, *, name: str) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(coro, name=name)


def make_thread() -> ThreadRuntime:
    settings = ThreadSettings(model="m", model_provider="p", cwd=Path("/"))
    services: Any = None  # turn control touches neither the writer nor the services
    return ThreadRuntime(thread_id="th", meta={}, settings=settings, writer=services, services=services)


def status_of(turn: TurnState) -> TurnStatus:
    return turn.status  # read through a call, so mypy does not narrow it between awaits


def run(coro: Any) -> None:
    asyncio.run(asyncio.wait_for(coro, 10))


def test_start_launch_interrupt_ends_the_turn_interrupted() -> None:
    async def body() -> None:
        thread = make_thread()
        turn = TurnState("t1", inputs=[])
        driver = Driver(thread, turn)
        launch = thread.start_turn(turn, driver, spawn)
        assert thread.active is turn and status_of(turn) is TurnStatus.ACCEPTED
        await launch()
        assert status_of(turn) is TurnStatus.RUNNING
        await driver.started.wait()
        task = thread.interrupt()
        assert task is not None and status_of(turn) is TurnStatus.INTERRUPTING
        await asyncio.wait({task})
        assert status_of(turn) is TurnStatus.INTERRUPTED and thread.active is None
        assert thread.turns[-1]["status"] == "interrupted"
        assert thread.interrupt() is None  # nothing left to interrupt

    run(body())


def test_an_interrupt_before_the_launch_still_ends_the_turn_once() -> None:
    async def body() -> None:
        thread = make_thread()
        turn = TurnState("t2", inputs=[])
        driver = Driver(thread, turn)
        launch = thread.start_turn(turn, driver, spawn)
        assert thread.interrupt() is None and status_of(turn) is TurnStatus.INTERRUPTING
        await launch()
        assert turn.task is not None
        await asyncio.wait({turn.task})
        assert driver.started.is_set()  # the runner got to start, so it could end the turn properly
        assert status_of(turn) is TurnStatus.INTERRUPTED and len(thread.turns) == 1

    run(body())


def test_steer_reaches_the_driver_and_a_second_start_is_refused() -> None:
    async def body() -> None:
        thread = make_thread()
        turn = TurnState("t3", inputs=[])
        driver = Driver(thread, turn)
        launch = thread.start_turn(turn, driver, spawn)
        with pytest.raises(RuntimeError, match="already runs turn t3"):
            thread.start_turn(TurnState("t4", inputs=[]), driver, spawn)
        assert thread.steer([{"type": "text", "text": "more"}]) is turn
        assert driver.steered == 1 and turn.pending_inputs == [[{"type": "text", "text": "more"}]]
        await launch()
        driver.finish.set()
        assert turn.task is not None
        await asyncio.wait({turn.task})
        assert status_of(turn) is TurnStatus.COMPLETED and thread.active is None
        with pytest.raises(RuntimeError, match="no active turn"):
            thread.steer([])

    run(body())


def test_interrupt_and_wait_returns_once_the_turn_has_ended() -> None:
    async def body() -> None:
        thread = make_thread()
        turn = TurnState("t5", inputs=[])
        driver = Driver(thread, turn)
        await thread.start_turn(turn, driver, spawn)()
        await driver.started.wait()
        await thread.interrupt_and_wait(timeout=5)
        assert turn.ended and status_of(turn) is TurnStatus.INTERRUPTED

    run(body())
