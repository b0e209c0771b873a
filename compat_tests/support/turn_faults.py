"""Bookkeeping of the ``turns-end`` scenario: every started turn must end once, within a bounded wait.

A :class:`TurnSession` wraps one app-server's :class:`AppServerRpc` with request ids, deadline-bounded
reads and the turn ledger (``turn/started`` vs ``turn/completed`` per turn id). A build that leaves a
turn open fails with a cause line naming the fault, the thread, the turn and what was awaited, e.g.
``stream-cut: thread 019a.. turn 019b.. left open: no turn/completed within 10s after the stream was cut``.
A :class:`Case` holds one test case's processes, home, workspace and clients (a reconnect is a new
app-server on the same home); the module-level helpers are the checks and model-script pieces the cases
of compat_tests/test_turns_end.py share.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat_tests.support.builds import Build
from compat_tests.support.processes import ProcessGroup, clean_env
from compat_tests.support.rpc import AppServerRpc, ScenarioError
from compat_tests.support.scenario import write_config

__all__ = [
    "TURN_END_WAIT",
    "Case",
    "StoredTurn",
    "TurnSession",
    "exec_call",
    "expect_turn",
    "kill_command",
    "pid_alive",
    "reconnected_turn_state",
    "text_input",
    "turn_status",
    "write_fault_config",
]

#: How long a fault may take to end its turn (Codex's interrupt grace and retry backoff fit well inside).
TURN_END_WAIT = 10.0
Message = dict[str, Any]


def text_input(text: str) -> list[dict[str, Any]]:
    """A turn/start ``input`` of one text element."""
    return [{"type": "text", "text": text, "textElements": []}]


@dataclass(frozen=True)
class StoredTurn:
    """One turn as ``thread/read`` (``includeTurns``) reports it."""

    id: str
    status: str
    error: Any


def _params(message: Message) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _turn_of(message: Message) -> dict[str, Any]:
    turn = _params(message).get("turn")
    return turn if isinstance(turn, dict) else {}


class TurnSession:
    """One client connection to an app-server, counting turn starts and ends per thread."""

    def __init__(self, rpc: AppServerRpc, fault: str, first_id: int = 10) -> None:
        self.rpc = rpc
        self.fault = fault
        self._next_id = first_id
        #: (thread, turn) pairs turn/start answered: started even before their turn/started is read.
        self.requested: list[tuple[str, str]] = []

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        """One request with a fresh id; messages read meanwhile stay in ``rpc.messages``."""
        self._next_id += 1
        return await self.rpc.call(self._next_id, method, params)

    async def send(self, method: str, params: dict[str, Any]) -> int:
        """Send a request without waiting for its answer (it is read later like any message); its id."""
        self._next_id += 1
        await self.rpc._send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def answer(self, request_id: int) -> Message | None:
        """The response to ``request_id`` if it has been read."""
        for message in self.rpc.messages:
            if message.get("id") == request_id and "method" not in message:
                return message
        return None

    async def until(self, found: Callable[[Message], bool], seconds: float, awaited: str) -> Message:
        """The first message (already read or arriving within ``seconds``) for which ``found`` holds."""
        deadline = time.monotonic() + seconds
        seen = 0
        for _ in range(100_000):
            for message in self.rpc.messages[seen:]:
                if found(message):
                    return message
            seen = len(self.rpc.messages)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                message = await asyncio.wait_for(self.rpc._receive(awaited), remaining)
            except TimeoutError:
                break
            self.rpc.messages.append(message)
        raise ScenarioError(f"{self.fault}: no {awaited} within {seconds:.0f}s")

    async def poll(self, holds: Callable[[], bool], seconds: float, awaited: str) -> None:
        """Wait (reading messages meanwhile, in 50 ms slices) until ``holds()`` is true, at most ``seconds``."""
        deadline = time.monotonic() + seconds
        for _ in range(100_000):
            if holds():
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                message = await asyncio.wait_for(self.rpc._receive(awaited), min(remaining, 0.05))
            except TimeoutError:
                continue
            self.rpc.messages.append(message)
        raise ScenarioError(f"{self.fault}: no {awaited} within {seconds:.0f}s")

    async def method(self, method: str, seconds: float, awaited: str = "") -> Message:
        """The first ``method`` message within ``seconds``."""
        return await self.until(lambda m: m.get("method") == method, seconds, awaited or method)

    def started(self, thread_id: str) -> list[str]:
        """Ids of the turns of ``thread_id`` that turn/start answered or ``turn/started`` announced, in order."""
        ids = [turn for thread, turn in self.requested if thread == thread_id] + [
            str(_turn_of(m).get("id"))
            for m in self.rpc.messages
            if m.get("method") == "turn/started" and _params(m).get("threadId") == thread_id
        ]
        return list(dict.fromkeys(ids))

    def completions(self, thread_id: str) -> Counter[str]:
        """How often each turn of ``thread_id`` was completed."""
        return Counter(
            str(_turn_of(m).get("id"))
            for m in self.rpc.messages
            if m.get("method") == "turn/completed" and _params(m).get("threadId") == thread_id
        )

    def completed(self, turn_id: str) -> dict[str, Any]:
        """The ``turn`` of the (first) ``turn/completed`` of ``turn_id``."""
        for message in self.rpc.messages:
            if message.get("method") == "turn/completed" and _turn_of(message).get("id") == turn_id:
                return _turn_of(message)
        raise ScenarioError(f"{self.fault}: turn {turn_id} has no turn/completed")

    async def turns_end(self, thread_id: str, after: str, seconds: float = TURN_END_WAIT) -> None:
        """Wait until every started turn of ``thread_id`` has a ``turn/completed``; else name the open one."""
        deadline = time.monotonic() + seconds

        def open_turns() -> list[str]:
            done = self.completions(thread_id)
            return [t for t in self.started(thread_id) if not done[t]]

        def all_ended(_message: Message) -> bool:
            return bool(self.started(thread_id)) and not open_turns()

        try:
            await self.until(all_ended, max(deadline - time.monotonic(), 0.0), "turn/completed")
        except ScenarioError:
            still = open_turns() or ["(none started)"]
            raise ScenarioError(
                f"{self.fault}: thread {thread_id} turn {still[0]} left open: "
                f"no turn/completed within {seconds:.0f}s {after}"
            ) from None

    async def each_once(self, thread_id: str) -> list[StoredTurn]:
        """After a ``thread/read`` round trip (which flushes what was sent before it), no turn was completed
        twice and none is left open; returns the stored turns."""
        stored = await self.stored_turns(thread_id)
        done = self.completions(thread_id)
        for turn_id, count in done.items():
            if count > 1:
                raise ScenarioError(
                    f"{self.fault}: thread {thread_id} turn {turn_id} completed {count} times"
                )
        for turn_id in self.started(thread_id):
            if not done[turn_id]:
                raise ScenarioError(
                    f"{self.fault}: thread {thread_id} turn {turn_id} left open: no turn/completed "
                    "before the thread/read that followed"
                )
        stray = [t for t in done if t not in self.started(thread_id)]
        if stray:
            raise ScenarioError(f"{self.fault}: thread {thread_id} turn {stray[0]} completed, never started")
        return stored

    async def stored_turns(self, thread_id: str) -> list[StoredTurn]:
        """The thread's turns as ``thread/read`` with ``includeTurns`` reports them."""
        result = await self.call("thread/read", {"threadId": thread_id, "includeTurns": True})
        turns = result.get("thread", {}).get("turns", []) if isinstance(result, dict) else []
        return [StoredTurn(str(t.get("id")), str(t.get("status")), t.get("error")) for t in turns]

    def notifications(self, method: str) -> list[dict[str, Any]]:
        """The params of every ``method`` notification read so far."""
        return [_params(m) for m in self.rpc.messages if m.get("method") == method]

    def items(self, item_type: str) -> list[dict[str, Any]]:
        """Completed items of ``item_type``."""
        return [
            p["item"]
            for p in self.notifications("item/completed")
            if isinstance(p.get("item"), dict) and p["item"].get("type") == item_type
        ]

    def turn_lines(self) -> list[str]:
        """The turn lifecycle as this client saw it (turn/started, turn/completed, error, thread/read
        answers), one JSON line each: the findings table is made from these."""
        lines = []
        for direction, _t, message in self.rpc.transcript:
            method = message.get("method")
            if method in (
                "turn/started",
                "turn/completed",
                "error",
                "turn/interrupt",
                "thread/compact/start",
            ):
                lines.append(
                    json.dumps({"dir": direction, "method": method, "params": message.get("params")})
                )
            elif (
                direction == "<" and isinstance(message.get("result"), dict) and "thread" in message["result"]
            ):
                turns = message["result"]["thread"].get("turns") or []
                brief = [
                    {"id": t.get("id"), "status": t.get("status"), "error": t.get("error")} for t in turns
                ]
                lines.append(json.dumps({"dir": "<", "result.thread.turns": brief}))
        return lines

    def describe(self, thread_id: str) -> str:
        """The ledger in one line, for failure messages and the findings table."""
        return json.dumps(
            {"started": self.started(thread_id), "completed": dict(self.completions(thread_id))}
        )


# -- one case: its processes and clients, and the checks the cases share -------------------------------


@dataclass
class Case:
    """What one test case drives: its processes, home, workspace and the current client."""

    fault: str
    build: Build
    group: ProcessGroup
    tmp: Path
    home: Path
    workspace: Path
    sessions: list[TurnSession]

    @property
    def session(self) -> TurnSession:
        """The newest client."""
        return self.sessions[-1]

    async def connect(self, **extra_env: str) -> TurnSession:
        """Start an app-server of the build on the case's home and initialize it (a new client)."""
        name = "app-server" if not self.sessions else f"app-server-{len(self.sessions) + 1}"
        env = clean_env(
            CODEX_HOME=str(self.home),
            CODEX_API_KEY="compat-token",
            CODEX_APP_SERVER_MANAGED_CONFIG_PATH=str(self.home / "managed_config.toml"),
            **extra_env,
        )
        argv = self.build.command("app-server")
        proc = await self.group.start(name, argv, env=env, cwd=self.home, protocol_stdout=True, stdin=True)
        rpc = AppServerRpc(proc)
        info = {"name": "pycodex-compat", "version": "0.1.0"}
        await rpc.call(1, "initialize", {"clientInfo": info, "capabilities": {"experimentalApi": True}})
        await rpc.notify("initialized")
        self.sessions.append(TurnSession(rpc, self.fault))
        return self.session

    async def disconnect(self) -> int | None:
        """The client goes away: close the app-server's stdin (and stop it by PID); its exit code."""
        handle = self.session.rpc.handle
        result = await handle.stop()
        self.group.results[handle.name] = result
        return result.returncode

    async def thread(self, **params: Any) -> str:
        """thread/start in the workspace (``params`` are overrides); the thread id."""
        result = await self.session.call("thread/start", {"cwd": str(self.workspace), **params})
        return str(result["thread"]["id"])

    async def turn(self, thread_id: str, text: str) -> str:
        """turn/start with one text input, counted as started; the turn id."""
        result = await self.session.call("turn/start", {"threadId": thread_id, "input": text_input(text)})
        self.session.requested.append((thread_id, str(result["turn"]["id"])))
        return str(result["turn"]["id"])


def write_fault_config(home: Path, model_url: str, approval: str, request_retries: int) -> None:
    """The case's config.toml: the fake model as provider, ``approval``, ``request_retries`` request
    retries and no stream retries (so a cut stream fails the turn instead of being replayed).

    Only a case that needs an approval runs sandboxed: Codex's bubblewrap sandbox makes mount points such as
    ``/tmp/.git`` for the read-only folders of its writable roots (``/tmp`` is one), which would leave a
    repository marker above every other test's temp folder."""
    sandbox = "danger-full-access" if approval == "never" else "workspace-write"
    write_config(home, model_url, approval, sandbox_mode=sandbox, request_retries=request_retries)


def exec_call(call_id: str, cmd: str, workspace: Path, **extra: object) -> dict[str, object]:
    """An exec_command call that blocks up to 30 s (the tool returns only when the command ends, or then)."""
    arguments = {"cmd": cmd, "workdir": str(workspace), "yield_time_ms": 30_000, **extra}
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "exec_command",
        "arguments": json.dumps(arguments),
    }


def turn_status(session: TurnSession, turn_id: str) -> tuple[str, Any]:
    """(status, error) of the turn's turn/completed."""
    turn = session.completed(turn_id)
    return str(turn.get("status")), turn.get("error")


def expect_turn(session: TurnSession, turn_id: str, status: str, *, error: bool | None = None) -> None:
    """The turn ended ``status``; ``error``: a turn error (or error notification) must be / must not be there."""
    got, err = turn_status(session, turn_id)
    if got != status:
        raise ScenarioError(
            f"{session.fault}: turn {turn_id} ended {got!r}, expected {status!r} (error {err!r})"
        )
    if error is True and not err and not session.notifications("error"):
        raise ScenarioError(
            f"{session.fault}: turn {turn_id} failed with no turn error and no error notification"
        )
    if error is False and err:
        raise ScenarioError(f"{session.fault}: turn {turn_id} completed carrying error {err!r}")


async def reconnected_turn_state(case: Case, thread_id: str, turn_id: str, what: str) -> None:
    """After the client went away: a new app-server on the home must not show the turn in progress."""
    rc = await case.disconnect()
    session = await case.connect()
    stored = {t.id: t for t in await session.stored_turns(thread_id)}
    turn = stored.get(turn_id)
    if turn is None:
        raise ScenarioError(
            f"{case.fault}: thread {thread_id} turn {turn_id} not stored after {what} (rc={rc})"
        )
    if turn.status == "inProgress":
        raise ScenarioError(
            f"{case.fault}: thread {thread_id} turn {turn_id} left open: thread/read on a new app-server "
            f"shows it inProgress after {what} (old app-server rc={rc})"
        )
    if turn.status not in ("interrupted", "failed"):
        raise ScenarioError(f"{case.fault}: stored turn {turn_id} is {turn.status!r} after {what}")


def kill_command(pid_file: Path) -> None:
    """End the command a case's app-server started and may have left running (by its PID, if still ours)."""
    if pid_alive(pid_file):
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)


def pid_alive(pid_file: Path) -> bool:
    """Whether the command whose shell wrote ``pid_file`` still runs (a zombie, killed but unreaped, does not)."""
    try:
        stat = Path(f"/proc/{int(pid_file.read_text().strip())}/stat").read_text()
    except (OSError, ValueError):
        return False
    state = stat.rpartition(")")[2].split()[0]
    return state != "Z" and "sleep" in stat.partition("(")[2].partition(")")[0]
