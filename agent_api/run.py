"""The caller's side of a run: the event stream, the completion and the cancel handle, plus the gate
that ties them together (agent_wrapper.md §4: completion gating, drain on drop, explicit cancel)."""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from types import TracebackType

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
    ``cancel``: CancelHandle. ``completion`` does not resolve while ``events`` is open and not drained.

    Giving up on ``completion`` (``asyncio.timeout``, ``wait_for`` or ``completion.cancel()``) cancels the
    run: its child is killed as by ``cancel``. ``async with`` scopes a run: leaving the block cancels it
    if it has not finished and returns once its child is gone.
    """

    events: EventStream
    completion: asyncio.Future[Completion]
    cancel: CancelHandle
    #: Set once the run has ended: its child reaped and its completion settled (or given up on).
    ended: asyncio.Event = field(default_factory=asyncio.Event, repr=False, compare=False)

    async def __aenter__(self) -> RunHandle:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if not self.completion.done():
            self.cancel.cancel()
        self.events.close()
        await self.ended.wait()  # bounded by the kill: the child's process group gets SIGKILL
        if self.completion.done() and not self.completion.cancelled():
            self.completion.exception()  # retrieved: a "cancelled" the block never awaited is not an error


class RunCore:
    """The state every flow shares: the bounded consumer hop, forwarding, cancel and the completion."""

    def __init__(self, agent_kind: str) -> None:
        self.agent_kind = agent_kind
        self.out: BoundedChannel[Event] = BoundedChannel()
        self.completion: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self.cancelled = asyncio.Event()
        self._forwarding = True
        self._tasks: list[asyncio.Task[None]] = []  # strong references: the loop keeps only weak ones
        self.ended = asyncio.Event()
        #: The caller stopped waiting for the completion (its future was cancelled).
        self._abandoned = asyncio.Event()
        self.completion.add_done_callback(self._on_completion_done)

    def track(self, task: asyncio.Task[None]) -> None:
        """Keep a strong reference to one of the run's tasks until the run ends."""
        self._tasks.append(task)

    def handle(self) -> RunHandle:
        """The caller's view of the run: its events, its completion and its cancel handle."""
        return RunHandle(EventStream(self.out), self.completion, CancelHandle(self._request_cancel), self.ended)

    def _on_completion_done(self, completion: asyncio.Future[Completion]) -> None:
        # A timeout around ``await handle.completion`` cancels the future: the caller gave up on the
        # run, so the run stops too instead of leaving its child running with nobody to cancel it.
        if completion.cancelled():
            self._abandoned.set()
            self._request_cancel()

    def _request_cancel(self) -> None:
        if self.completion.done() and not self.completion.cancelled():
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
        try:
            await self._settle(result, tail)
        finally:
            self.ended.set()

    async def _settle(self, result: Completion | BackendError, tail: Event | None) -> None:
        if tail is not None:
            await self.emit(tail)
        self.out.close_sender()
        await self._consumer_done_or_abandoned()
        if self.completion.done():
            return
        if self.cancelled.is_set():  # cancellation wins ties, up to the moment the completion resolves
            result = BackendError("cancelled")
        if isinstance(result, BackendError):
            self.completion.set_exception(result)
        else:
            self.completion.set_result(result)

    async def _consumer_done_or_abandoned(self) -> None:
        """Until the consumer has seen the end of the events, or nobody awaits the completion any more."""
        if self._abandoned.is_set():
            return
        consumer = asyncio.ensure_future(self.out.wait_consumer_done())
        abandoned = asyncio.ensure_future(self._abandoned.wait())
        try:
            await asyncio.wait({consumer, abandoned}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            consumer.cancel()
            abandoned.cancel()

    def spawn_failed(self, message: str) -> asyncio.Task[None]:
        """End a run that never started: one Error event, then a Backend completion (still gated)."""
        task = asyncio.get_running_loop().create_task(self.finish(BackendError(message), self.error_event(message)))
        self.track(task)
        return task
