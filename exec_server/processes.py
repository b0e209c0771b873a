"""One managed process: its state machine, output pumps, exit/close sequencing and teardown.

States: running → exited (leader gone; ``process/exited``) → closed (all output drained;
``process/closed``). Output is pumped in reads of up to ``READ_BYTES``, each delivered as
``process/output`` notifications of at most 8192 raw bytes (Codex's chunk size, so the wire looks the
same) before the next read, so backpressure from the connection reaches the child's pipe. Bigger
reads amortise the per-read, per-lock and per-socket-write cost over several notifications: the
notifications of one read go to the edge together (one socket write on the websocket).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence

from exec_client.wire import b64
from exec_client.wire.protocol import MAX_CHUNK_BYTES, Method
from exec_server.output_log import OutputLog, RetentionBudget
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.codec import encode
from pycodex.platform.spawn import SpawnedProcess

__all__ = ["Deliver", "DeliverEncoded", "ManagedProcess", "ProcessState", "output_head", "output_message"]

log = logging.getLogger(__name__)

#: Send one notification (method, params, raw byte count); may block for backpressure.
Deliver = Callable[[str, JsonObj, int], Awaitable[None]]
#: The same for notifications already encoded (encoded messages, raw byte count), sent together.
DeliverEncoded = Callable[[Sequence[bytes], int], Awaitable[None]]

#: After the leader exits, how long to let already-written output reach the log before ``exited``.
EXIT_DRAIN_GRACE_S = 0.1
#: One pipe read; split into ``MAX_CHUNK_BYTES`` notifications.
READ_BYTES = 64 * 1024


def output_head(process_id: str) -> bytes:
    """A ``process/output`` notification up to its seq, encoded once per process by the shared codec
    (escaping stays its business); per chunk only seq, stream and base64 are joined on."""
    head = encode({"method": Method.PROCESS_OUTPUT, "params": {"processId": process_id}})
    return head[: -len(b"}}")] + b',"seq":'


def output_message(head: bytes, seq: int, stream: str, data: bytes | memoryview) -> bytes:
    """The encoded notification, byte for byte what ``RpcPeer.notify`` writes for these params (and the
    key order Codex uses). Base64 needs no JSON escaping."""
    chunk = b64.encode(data)
    return b"".join(
        (head, b"%d" % seq, b',"stream":"', stream.encode("ascii"), b'","chunk":"', chunk, b'"}}')
    )


class ProcessState(enum.Enum):
    """Where a process is: running, exited (leader gone) or closed (all output drained)."""

    RUNNING = "running"
    EXITED = "exited"
    CLOSED = "closed"


class ManagedProcess:
    """A started process: pumps its output into the log and notifications, sequences exit and close."""

    def __init__(
        self,
        process_id: str,
        spawned: SpawnedProcess,
        *,
        tty: bool,
        deliver: Deliver,
        deliver_encoded: DeliverEncoded,
        emit_lock: asyncio.Lock,
        retain_bytes: int,
        budget: RetentionBudget | None = None,
    ) -> None:
        self.process_id = process_id
        self.tty = tty
        self._spawned = spawned
        self._deliver = deliver
        self._deliver_encoded = deliver_encoded
        self._output_head = output_head(process_id)
        self._emit_lock = emit_lock
        self.log = OutputLog(retain_bytes, budget)
        self.state = ProcessState.RUNNING
        self._changed = asyncio.Event()
        self._waiting = 0  # long-polls waiting on ``_changed``; without any, no new Event per chunk
        self._task: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        """The leader's process id."""
        return self._spawned.pid

    def start(self) -> None:
        """Start pumping output and waiting for the exit."""
        self._task = asyncio.create_task(self._run(), name=f"exec-process-{self.process_id}")

    # -- events ---------------------------------------------------------------------------------
    def _bump(self) -> None:
        if self._waiting:
            self._changed.set()
            self._changed = asyncio.Event()

    async def wait_for_news(self, after_seq: int, timeout_s: float) -> None:
        """Return once the log has an event after ``after_seq``, or the timeout passes.

        A closed process (exited, output drained) will never have news: answer at once, as Codex does.
        """
        if self.log.has_news(after_seq) or timeout_s <= 0 or self.state is ProcessState.CLOSED:
            return
        self._waiting += 1
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout_s)
        finally:
            self._waiting -= 1

    async def _emit_output(self, stream: str, data: bytes) -> None:
        """Log one read and deliver it, as notifications of at most ``MAX_CHUNK_BYTES`` sent together."""
        view = memoryview(data)
        head = self._output_head
        async with self._emit_lock:
            seq = self.log.append_read(stream, view, MAX_CHUNK_BYTES)
            messages = [
                output_message(head, seq + i, stream, view[start : start + MAX_CHUNK_BYTES])
                for i, start in enumerate(range(0, len(view), MAX_CHUNK_BYTES))
            ]
            self._bump()
            await self._deliver_encoded(messages, len(view))

    async def _emit_exited(self, code: int) -> None:
        async with self._emit_lock:
            seq = self.log.mark_exited(code)
            self.state = ProcessState.EXITED
            self._bump()
            params = {"processId": self.process_id, "seq": seq, "exitCode": code, "sandboxDenied": False}
            await self._deliver(Method.PROCESS_EXITED, params, 0)

    async def _emit_closed(self) -> None:
        async with self._emit_lock:
            seq = self.log.mark_closed()
            self.state = ProcessState.CLOSED
            self._bump()
            await self._deliver(Method.PROCESS_CLOSED, {"processId": self.process_id, "seq": seq}, 0)

    # -- lifecycle ------------------------------------------------------------------------------
    async def _pump(self, stream: str) -> None:
        while True:
            data = await self._spawned.read_chunk(stream, READ_BYTES)
            if not data:
                return
            await self._emit_output(stream, data)

    async def _run(self) -> None:
        pumps = [asyncio.create_task(self._pump(s)) for s in self._spawned.streams]
        try:
            code = await self._spawned.wait()
            await asyncio.wait(pumps, timeout=EXIT_DRAIN_GRACE_S)
            await self._emit_exited(code)
            if self.tty:
                # The terminal stays open while background children hold it; stop reading.
                self._spawned.close_pty()
            for outcome in await asyncio.gather(*pumps, return_exceptions=True):
                if isinstance(outcome, Exception):
                    log.warning("output pump of process %s failed: %r", self.process_id, outcome)
            await self._emit_closed()
        finally:
            for pump in pumps:
                pump.cancel()

    async def wait_closed(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the close; True if the process is closed."""
        if self._task is None:
            return True
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(self._task), timeout_s)
        return self._task.done()

    # -- control --------------------------------------------------------------------------------
    def terminate(self) -> bool:
        """Kill the whole process group; returns whether the leader was still running."""
        running = self.state is ProcessState.RUNNING
        if self.state is not ProcessState.CLOSED:
            self._spawned.signal_group(signal.SIGKILL)
        return running

    def interrupt(self) -> None:
        """Send SIGINT to the process group while it runs."""
        if self.state is ProcessState.RUNNING:
            self._spawned.signal_group(signal.SIGINT)

    async def write(self, data: bytes) -> str:
        """Write ``data`` to stdin; the wire status (``accepted``, or ``stdinClosed`` without a stdin)."""
        if not self._spawned.has_stdin:
            return "stdinClosed"
        # Codex answers "accepted" even when the child already exited, so a failed write is silent.
        await self._spawned.write_stdin(data)
        return "accepted"

    async def kill_and_forget(self) -> None:
        """Teardown at session end: kill the group and stop the pumps."""
        self._spawned.signal_group(signal.SIGKILL)
        self._spawned.close_pty()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, 2.0)
