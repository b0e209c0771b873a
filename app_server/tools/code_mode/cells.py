"""Where exec scripts run: one ``node`` subprocess per cell, driven over a JSON-lines pipe.

A cell is one exec call's script. ``harness.mjs`` evaluates it in a fresh vm context (no process, require,
console, imports), under Node's permission model (no file system access beyond the harness, no child
processes, workers or addons) in its own process group. Unlike Codex's bare V8 isolate, that context refuses
code generation from strings (``eval``, ``Function``): the host here is Node, which a script must not reach. Each line the harness writes is an event: output
items, stored values, a tool call (answered by the cell's ``bridge``), a yield request, the end.

Cells belong to a thread (``CodeCells``, one per loaded thread): IDs count up from 1 per thread, values a
script ``store``s are kept for the thread's later scripts, and unloading the thread kills what still runs.
Every cell is killed after ``CELL_MAX_S`` at the latest. Without ``node`` on PATH nothing runs
(``CodeModeUnavailable``): there is no fallback interpreter.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Literal

from pycodex.json_types import JsonObj, JsonValue

__all__ = ["CELL_MAX_S", "Cell", "CellOutput", "CodeCells", "CodeModeUnavailable", "NestedCall", "NestedToolError"]

logger = logging.getLogger(__name__)

#: The longest a cell may run (yielded or not) before it is killed.
CELL_MAX_S = 3600.0
#: V8 heap cap of one cell, in MiB.
HEAP_MB = 512
#: Output a cell holds between two looks; more is dropped (and counted): the model sees at most
#: ``max_output_tokens`` of it anyway.
HELD_BYTES = 1 << 20
#: The longest line the harness may write (one ``text()`` or tool call).
LINE_BYTES = 1 << 24
_STDERR_TAIL = 2000


class CodeModeUnavailable(Exception):
    """No JavaScript runtime here: scripts cannot run (the message says why)."""


class NestedToolError(Exception):
    """A nested tool call failed: the script's promise rejects with this text."""


#: Runs one nested tool call of a script: (tool name, input) -> result, or raises ``NestedToolError``.
NestedCall = Callable[[str, JsonValue], Awaitable[JsonValue]]

Status = Literal["completed", "failed", "running", "terminated"]


@dataclass(frozen=True, slots=True)
class CellOutput:
    """What a cell produced since it was last asked, and where it stands."""

    status: Status
    items: list[JsonObj]
    error: str | None = None
    #: Texts the script sent with ``notify`` since it was last asked.
    notices: list[str] = field(default_factory=list)


def _node_argv(node: str) -> list[str]:
    harness = str(resources.files("app_server.tools.code_mode").joinpath("harness.mjs"))
    return [node, "--experimental-vm-modules", "--no-warnings", "--experimental-permission",
            f"--allow-fs-read={harness}", f"--max-old-space-size={HEAP_MB}", harness]


class Cell:
    """One running script: its process, its output since the last look, and its end."""

    def __init__(self, cell_id: str, proc: asyncio.subprocess.Process, stored: dict[str, JsonValue]) -> None:
        self.id = cell_id
        self._proc = proc
        self._stored = stored
        self._items: list[JsonObj] = []
        self._held = 0
        self._dropped = 0
        self._notices: list[str] = []
        self._wake = asyncio.Event()
        self._yielded = False
        self._done = False
        self._error: str | None = None
        self._terminated = False
        self._calls: set[asyncio.Task[None]] = set()
        self._stderr = b""
        #: Answers the script's tool calls; the latest exec or wait call sets it (its turn's router).
        self.bridge: NestedCall | None = None
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read(), name=f"code-cell-{cell_id}")
        self._err_reader = loop.create_task(self._read_stderr(), name=f"code-cell-{cell_id}-stderr")
        self._deadline = loop.call_later(CELL_MAX_S, self._expire)

    @property
    def done(self) -> bool:
        """Whether the script has ended (completed, failed or terminated)."""
        return self._done

    async def send(self, message: JsonObj) -> None:
        """Write one line to the harness (ignored once the process is gone)."""
        stdin = self._proc.stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(ConnectionError):
            stdin.write(json.dumps(message).encode() + b"\n")
            await stdin.drain()

    async def next_output(self, timeout_s: float) -> CellOutput:
        """Wait up to ``timeout_s`` for the end or a yield, then hand over the output gathered since last time."""
        if not self._done and not self._yielded:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(timeout_s, 0.0))
        self._wake.clear()
        self._yielded = False
        items, self._items = self._items, []
        if self._dropped:  # pycodex's own text: Codex's limit here is not recorded
            items.append({"type": "input_text", "text": f"[{self._dropped} more output items were dropped: "
                          f"a script keeps at most {HELD_BYTES} bytes of output between two results]"})
        self._held = self._dropped = 0
        notices, self._notices = self._notices, []
        if not self._done:
            return CellOutput("running", items, notices=notices)
        if self._terminated:
            return CellOutput("terminated", items, notices=notices)
        return CellOutput("failed" if self._error is not None else "completed", items, self._error, notices)

    async def terminate(self) -> None:
        """Stop the script (its process group is killed) and wait until its process and pipes are gone."""
        if not self._done:
            self._terminated = True
        self._kill()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(self._reader)
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._err_reader), 5)

    def _finish(self, error: str | None) -> None:
        if not self._done:
            self._done, self._error = True, error
        self._deadline.cancel()
        self._wake.set()

    def _kill(self) -> None:
        for task in self._calls:
            task.cancel()
        if self._proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)

    def _expire(self) -> None:
        self._finish(f"exec cell {self.id} ran longer than {CELL_MAX_S:.0f} seconds and was stopped")
        self._kill()

    async def _read_stderr(self) -> None:
        stream = self._proc.stderr
        while stream is not None and (chunk := await stream.read(4096)):
            self._stderr = (self._stderr + chunk)[-_STDERR_TAIL:]

    async def _read(self) -> None:
        stream = self._proc.stdout
        try:
            while stream is not None and (line := await stream.readline()):
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if isinstance(event, dict):
                    self._on_event(event)
                if self._done:
                    break
        except ValueError:  # a line longer than the stream's limit
            self._finish(f"a single script output exceeded {LINE_BYTES} bytes")
        finally:
            self._kill()
            if not self._done:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._err_reader, 5)
                detail = self._stderr.decode("utf-8", "replace").strip()
                self._finish(f"the JavaScript runtime exited unexpectedly{': ' + detail if detail else ''}")
            with contextlib.suppress(ProcessLookupError):
                await self._proc.wait()
            if self._proc.stdin is not None:
                self._proc.stdin.close()

    def _hold(self, item: JsonObj, size: int) -> None:
        if self._held + size > HELD_BYTES:
            self._dropped += 1
            return
        self._held += size
        self._items.append(item)

    def _on_event(self, event: JsonObj) -> None:
        kind = event.get("t")
        if kind == "text":
            text = str(event.get("text", ""))
            self._hold({"type": "input_text", "text": text}, len(text))
        elif kind == "image":
            url = str(event.get("image_url", ""))
            self._hold({"type": "input_image", "image_url": url}, len(url))
        elif kind == "notify":
            self._notices.append(str(event.get("text", "")))
        elif kind == "store":
            self._stored[str(event.get("key"))] = event.get("value")
        elif kind == "yield":
            self._yielded = True
            self._wake.set()
        elif kind == "call":
            task = asyncio.get_running_loop().create_task(self._call(event), name=f"code-cell-{self.id}-call")
            self._calls.add(task)
            task.add_done_callback(self._calls.discard)
        elif kind == "done":
            error = event.get("error")
            self._finish(None if error is None else str(error))

    async def _call(self, event: JsonObj) -> None:
        reply: JsonObj = {"t": "reply", "id": event.get("id")}
        bridge = self.bridge
        try:
            if bridge is None:
                raise NestedToolError("no tool router is attached to this cell")
            reply.update(ok=True, value=await bridge(str(event.get("tool")), event.get("input")))
        except NestedToolError as exc:
            reply.update(ok=False, error=str(exc))
        except Exception as exc:  # a tool's bug must reject the script's promise, not hang it
            logger.exception("nested tool call %s of cell %s failed", event.get("tool"), self.id)
            reply.update(ok=False, error=f"tool `{event.get('tool')}` failed: {exc}")
        await self.send(reply)


class CodeCells:
    """The exec cells of one thread: their IDs, their stored values, the ones still running."""

    def __init__(self, node: str | None = None) -> None:
        self._node = node
        self._next = 0
        self._cells: dict[str, Cell] = {}
        self.stored: dict[str, JsonValue] = {}

    def node(self) -> str:
        """The ``node`` binary scripts run on (raises ``CodeModeUnavailable`` without one)."""
        found = self._node or shutil.which("node")
        if found is None:
            raise CodeModeUnavailable("exec cannot run scripts here: Node.js (`node`) was not found on PATH")
        return found

    async def start(self, source: str, tools: list[JsonObj], bridge: NestedCall) -> Cell:
        """Start ``source`` as a new cell that may call ``tools`` (``[{name, description}]``) via ``bridge``."""
        node = self.node()
        try:
            proc = await asyncio.create_subprocess_exec(
                *_node_argv(node), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True, limit=LINE_BYTES,
            )
        except OSError as exc:
            raise CodeModeUnavailable(f"exec cannot run scripts here: starting `{node}` failed: {exc}") from exc
        self._next += 1
        cell = Cell(str(self._next), proc, self.stored)
        cell.bridge = bridge
        self._cells[cell.id] = cell
        await cell.send({"source": source, "stored": self.stored, "tools": list(tools)})
        return cell

    def get(self, cell_id: str) -> Cell | None:
        """The cell with ``cell_id`` while it is known (until its end has been reported)."""
        return self._cells.get(cell_id)

    def forget(self, cell: Cell) -> None:
        """The cell's end has been reported: it is no longer known."""
        self._cells.pop(cell.id, None)

    async def close_all(self) -> None:
        """Kill every cell still running (the thread is unloading)."""
        cells, self._cells = list(self._cells.values()), {}
        for cell in cells:
            await cell.terminate()
