"""A user shell command turn (``thread/shellCommand``): the user's command string runs through the login
shell in the thread's cwd, unsandboxed (the method's documented contract), as one ``commandExecution`` item
with ``source: userShell``; its output streams as deltas. The model sees the command and its result in the
history on its next turn. Notification order follows Codex 0.169: status active, ``turn/started``, the item,
its output, status idle, ``turn/completed`` with no items shown."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time

from app_server.protocol import notices
from app_server.store import new_uuid7
from app_server.threads import items as it
from app_server.threads.lifecycle import TurnEvent
from app_server.threads.prompt import user_message_item
from app_server.threads.runner import TurnCancelled, TurnRunner
from app_server.threads.services import TurnServices
from app_server.threads.state import ThreadRuntime, TurnState
from pycodex.log_context import bind_turn

__all__ = ["DEFAULT_TIMEOUT_MS", "UserShellRunner"]

#: The method's documented default: one hour.
DEFAULT_TIMEOUT_MS = 3_600_000
#: What the model is shown of a long output (the item itself keeps all of it).
HISTORY_OUTPUT_CHARS = 16_000


class UserShellRunner(TurnRunner):
    """Runs a ``thread/shellCommand`` turn: one user shell command, no model request."""

    reports_read_state = False
    completed_view = "notLoaded"

    def __init__(self, *, thread: ThreadRuntime, turn: TurnState, services: TurnServices, command: str,
                 timeout_ms: int | None) -> None:
        super().__init__(thread=thread, turn=turn, services=services)
        self.command = command
        self.timeout_ms = DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms

    async def run(self) -> None:
        """Run the command as the turn's one item, record it for the model's next turn, then end the turn."""
        thread, turn = self.thread, self.turn
        bind_turn(thread.id, turn.id)
        outcome = TurnEvent.COMPLETE
        try:
            await thread.record_turn_start(turn)
            await thread.emit_status()
            await thread.emit(notices.turn_started(thread.id, turn.wire(view="notLoaded")))
            await self._run_command()
        except (asyncio.CancelledError, TurnCancelled):
            outcome = TurnEvent.ABORT
        await asyncio.shield(self._end(outcome, None))

    async def _run_command(self) -> None:
        thread, turn = self.thread, self.turn
        shell = os.environ.get("SHELL") or "/bin/bash"
        argv = [shell, "-lc", self.command]
        cwd = str(thread.settings.cwd)
        item = it.command_execution(new_uuid7(), argv=argv, user_cmd=self.command, cwd=cwd, process_id=None,
                                    source="userShell", started_at_ms=it.now_ms())
        await thread.emit(notices.item_started(item, thread.id, turn.id))
        started = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        chunks: list[str] = []

        async def pump() -> None:
            assert proc.stdout is not None
            while data := await proc.stdout.read(8192):
                text = data.decode("utf-8", "replace")
                chunks.append(text)
                await thread.emit(notices.command_output_delta(thread.id, turn.id, item["id"], text))
            await proc.wait()

        timed_out = False
        try:
            await asyncio.wait_for(pump(), self.timeout_ms / 1000)
        except TimeoutError:
            timed_out = True
        finally:
            if proc.returncode is None:  # timed out or cancelled: the whole group goes
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        output = "".join(chunks)
        exit_code = 124 if timed_out else (proc.returncode if proc.returncode is not None else -1)
        duration_ms = int((time.monotonic() - started) * 1000)
        await self._record_history([user_message_item([_history_text(self.command, exit_code, duration_ms, output)])])
        await self.complete_item(dict(
            item, status="completed" if exit_code == 0 else "failed", aggregatedOutput=output, exitCode=exit_code,
            durationMs=duration_ms, completedAtMs=it.now_ms()))


def _history_text(command: str, exit_code: int, duration_ms: int, output: str) -> str:
    if len(output) > HISTORY_OUTPUT_CHARS:
        output = output[:HISTORY_OUTPUT_CHARS // 2] + "\n[... output shortened ...]\n" + output[-HISTORY_OUTPUT_CHARS // 2:]
    return (f"<user_shell_command>\nThe user ran this command themselves:\n{command}\n"
            f"Exit code: {exit_code}, took {duration_ms / 1000:.1f}s. Output:\n{output}\n</user_shell_command>")
