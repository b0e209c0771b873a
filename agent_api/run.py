"""The caller's side of a run: the event stream, the completion and the cancel handle, plus the gate
that ties them together (agent_wrapper.md §4: completion gating, drain on drop, explicit cancel)."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from agent_api.channel import BoundedChannel
from agent_api.errors import BackendError
from agent_api.values import Completion, Event, EventKind

__all__ = ["CancelHandle", "EventStream", "RunCore", "RunHandle"]


def _close_after_drop(channel: BoundedChannel[Event], loop: asyncio.AbstractEventLoop) -> None:
    # Garbage collection may run this from any thread; the channel belongs to the loop.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(channel.close_receiver)


class EventStream(AsyncIterator[Event]):
    """The run's events, in order. Closing it (``aclose``/``close``) or dropping it does not stop the
    child: the run keeps reading and classifying its output without forwarding it."""

    def __init__(self, channel: BoundedChannel[Event]) -> None:
        self._channel = channel
        self._finalizer = weakref.finalize(self, _close_after_drop, channel, asyncio.get_running_loop())

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        event = await self._channel.recv()
        if event is None:
            raise StopAsyncIteration
        return event

    def close(self) -> None:
        """Stop observing: buffered events are discarded and the producer is released."""
        self._finalizer.detach()
        self._channel.close_receiver()

    async def aclose(self) -> None:
        """Stop reading the stream (the async-generator protocol's name for ``close``)."""
        self.close()

    async def collect(self) -> list[Event]:
        """Every remaining event, until the end of the stream."""
        return [event async for event in self]


class CancelHandle:
    """Ask the run to stop: idempotent, cheap, safe to call after the run has finished."""

    def __init__(self, hook: Callable[[], None]) -> None:
        self._hook: Callable[[], None] | None = hook

    def cancel(self) -> None:
        """Ask the run to stop; idempotent, and a no-op after the first call."""
        hook, self._hook = self._hook, None
        if hook is not None:
            hook()

    @property
    def requested(self) -> bool:
        """``cancel`` was called."""
        return self._hook is None


@dataclass(frozen=True)
class RunHandle:
    """``events``: async iterator of Event; ``completion``: awaitable Completion (raises BackendError);
    ``cancel``: CancelHandle. ``completion`` does not resolve while ``events`` is open and not drained."""

    events: EventStream
    completion: asyncio.Future[Completion]
    cancel: CancelHandle


class RunCore:
    """The state every flow shares: the bounded consumer hop, forwarding, cancel and the completion."""

    def __init__(self, agent_kind: str) -> None:
        self.agent_kind = agent_kind
        self.out: BoundedChannel[Event] = BoundedChannel()
        self.completion: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self.cancelled = asyncio.Event()
        self._forwarding = True
        self._tasks: list[asyncio.Task[None]] = []  # strong references: the loop keeps only weak ones

    def track(self, task: asyncio.Task[None]) -> None:
        """Keep a strong reference to one of the run's tasks until the run ends."""
        self._tasks.append(task)

    def handle(self) -> RunHandle:
        """The caller's view of the run: its events, its completion and its cancel handle."""
        return RunHandle(EventStream(self.out), self.completion, CancelHandle(self._request_cancel))

    def _request_cancel(self) -> None:
        if self.completion.done():
            return
        self.cancelled.set()
        # Stop forwarding at once: the consumer sees the end after what is already buffered.
        self._forwarding = False
        self.out.close_sender()

    async def emit(self, event: Event) -> None:
        """Forward one event with an awaited send (the backpressure); after the consumer has gone the
        event is discarded and the caller keeps draining."""
        if self._forwarding and not await self.out.send(event):
            self._forwarding = False

    def error_event(self, message: str) -> Event:
        """An error event of this run's backend."""
        return Event(self.agent_kind, EventKind.ERROR, "error", message=message)

    async def finish(self, result: Completion | BackendError, tail: Event | None = None) -> None:
        """Send the terminal event, end the stream, wait until the consumer has seen the end (or left),
        then resolve the completion exactly once."""
        if self.cancelled.is_set():
            result, tail = BackendError("cancelled"), None
        if tail is not None:
            await self.emit(tail)
        self.out.close_sender()
        await self.out.wait_consumer_done()
        if self.completion.done():
            return
        if self.cancelled.is_set():  # cancellation wins ties, up to the moment the completion resolves
            result = BackendError("cancelled")
        if isinstance(result, BackendError):
            self.completion.set_exception(result)
        else:
            self.completion.set_result(result)

    def spawn_failed(self, message: str) -> asyncio.Task[None]:
        """End a run that never started: one Error event, then a Backend completion (still gated)."""
        task = asyncio.get_running_loop().create_task(self.finish(BackendError(message), self.error_event(message)))
        self.track(task)
        return task
