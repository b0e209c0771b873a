"""The server's sub-agents: child threads that a thread's model spawned with the ``multi_agent_v1`` tools.

One ``AgentControl`` per app-server (``AppServer.agents``), handed to every thread in
``ThreadServices.agents``. A child is a real thread of the same server: created through the
``ThreadManager`` (stored like any other, its ``source`` ``{"subAgent": {"thread_spawn": ...}}`` with the
parent's id and its depth, ``parentThreadId``, ``agentNickname``, threadSource ``subagent`` and the root's
``sessionId``). As in Codex 0.169 it is not announced with ``thread/started``: the parent's subscribers
get its ``thread/status/changed`` (idle) and then see its turns. Its turns run like a client's turns
(``TurnRunner``, spawned through the server so shutdown cancels them) but keep no read state.

A child's status is read from its thread: ``pending_init`` until its first turn starts, running while a
turn is active, else what its last turn ended as (completed with its last agent message, interrupted,
errored). close_agent unloads the child (``notLoaded``; it is then ``not_found``), resume_agent loads it
again (``pending_init`` until it gets input). When a child first settles (its first turn ends, other than
by an interrupt of ours, or it is closed), the parent's model is told with Codex's
``<subagent_notification>`` message (no item: it is context, not a user message).

Limits are Codex's: ``[agents] max_threads`` open children per root thread (closed ones do not count), and ``max_depth`` (a thread at the limit is not offered the
sub-agent tools: ``threads.tool_policy``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from app_server.lazy import LazyModule
from app_server.session import Session
from app_server.store import new_uuid7
from app_server.threads.agent_contracts import (
    AgentLimits,
    AgentStatus,
    CollabError,
    SpawnedAgent,
    SpawnRequest,
)
from app_server.threads.lifecycle import TurnStatus
from app_server.threads.manager import ThreadManager
from app_server.threads.prompt import user_message_item
from app_server.threads.services import TurnServices
from app_server.threads.state import Spawn, ThreadRuntime, TurnState
from pycodex.json_types import JsonObj, JsonValue
from pycodex.jsonrpc.errors import InvalidRequest

if TYPE_CHECKING:
    from app_server.threads import runner as threads_runner
else:  # a first thread builds its AgentControl; only a child's first turn needs the runner
    threads_runner = LazyModule("app_server.threads.runner")

__all__ = ["AgentControl"]

#: How long close_agent and an interrupting send_input wait for the child's turn to end.
STOP_TIMEOUT_S = 5.0

#: What the model is told when ``max_threads`` children are open (Codex 0.169 names no number).
LIMIT_REACHED = "collab spawn failed: agent thread limit reached"

#: Nicknames handed out in turn (Codex picks random names; ours are predictable, and unique while they last).
NICKNAMES = ("Ada", "Babbage", "Curie", "Darwin", "Euler", "Faraday", "Gauss", "Hopper", "Italo", "Joule",
             "Kepler", "Lovelace", "Maxwell", "Noether", "Ohm", "Pascal")


@dataclass(slots=True)
class _Agent:
    """One spawned child: where it hangs in the tree, and its latest turn (None before it has one)."""

    thread_id: str
    parent_id: str
    root_id: str
    depth: int
    nickname: str
    turn: TurnState | None = None
    closed: bool = False
    #: Set once the child has settled: a turn of it ended (not by an interrupt of ours) or it was closed.
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    #: An interrupt of ours (send_input with interrupt, close) is under way: that turn's end is no news.
    quiet: bool = False


class AgentControl:
    """Every sub-agent of this server (see the module docstring); satisfies ``agent_contracts.SubAgents``.

    ``turn_services`` builds a child turn's services for a connection (``AppServer.turn_services``),
    ``spawn`` starts a server-owned task, ``config`` is the current raw config (its ``[agents]`` table).
    """

    def __init__(self, threads: ThreadManager, *,
                 turn_services: Callable[[ThreadRuntime, Session], Awaitable[TurnServices]],
                 spawn: Spawn, config: Callable[[], Mapping[str, JsonValue]]) -> None:
        self._threads = threads
        self._turn_services = turn_services
        self._spawn = spawn
        self._config = config
        self._agents: dict[str, _Agent] = {}
        self._spawned = 0

    # -- lookups ---------------------------------------------------------------------------------
    def limits(self) -> AgentLimits:
        """The ``[agents]`` limits in force now."""
        return AgentLimits.from_config(self._config())

    def depth(self, thread_id: str) -> int:
        """How deep ``thread_id`` sits under its root (0 for a thread no agent spawned)."""
        agent = self._agents.get(thread_id)
        return agent.depth if agent is not None else 0

    def status(self, thread_id: str) -> AgentStatus:
        """What ``thread_id`` is doing now, read from its thread."""
        agent = self._agents.get(thread_id)
        thread = self._threads.loaded.get(thread_id)
        if agent is None or thread is None:
            return AgentStatus("not_found")
        if thread.active is not None:
            return AgentStatus("running")
        turn = agent.turn
        if turn is None:
            return AgentStatus("pending_init")
        if turn.status is TurnStatus.COMPLETED:
            last = turn.last_agent_message
            return AgentStatus("completed", str(last["text"]) if last is not None else None)
        if turn.status is TurnStatus.INTERRUPTED:
            return AgentStatus("interrupted")
        error = turn.error or {}
        return AgentStatus("errored", str(error.get("message") or "turn failed"))

    def _open_children(self, root_id: str) -> int:
        """How many sub-agents under root ``root_id`` are open (they count against ``max_threads``)."""
        return sum(1 for a in self._agents.values() if a.root_id == root_id and not a.closed)

    def _open(self, target: str) -> tuple[_Agent, ThreadRuntime]:
        agent = self._agents.get(target)
        thread = self._threads.loaded.get(target)
        if agent is None or thread is None or agent.closed:
            raise CollabError(f"agent with id {target} not found")
        return agent, thread

    # -- operations ------------------------------------------------------------------------------
    async def spawn(self, request: SpawnRequest) -> SpawnedAgent:
        """Create the child thread of ``request.parent_id`` and start its first turn with the inputs."""
        parent = self._threads.loaded.get(request.parent_id)
        if parent is None:
            raise CollabError("collab manager unavailable")
        limits = self.limits()
        parent_agent = self._agents.get(parent.id)
        root_id = parent_agent.root_id if parent_agent is not None else parent.id
        depth = (parent_agent.depth if parent_agent is not None else 0) + 1
        if self._open_children(root_id) >= limits.max_threads:
            raise CollabError(LIMIT_REACHED)
        session = _a_session(parent)
        if session is None:
            raise CollabError("collab manager unavailable")
        settings = replace(parent.settings, writable_roots=list(parent.settings.writable_roots))
        if request.model is not None:
            settings.model = request.model
        if request.reasoning_effort is not None:
            settings.effort = request.reasoning_effort
        nickname = NICKNAMES[self._spawned % len(NICKNAMES)]
        self._spawned += 1
        source: JsonObj = {"subAgent": {"thread_spawn": {
            "parent_thread_id": parent.id, "depth": depth, "agent_path": None, "agent_nickname": nickname,
            "agent_role": None}}}
        child = await self._threads.start(
            session, settings, ephemeral=parent.ephemeral, thread_source="subagent",
            meta={"source": source, "parentThreadId": parent.id, "agentNickname": nickname, "agentRole": None,
                  "originator": parent.meta.get("originator"),
                  "sessionId": parent.meta.get("sessionId", parent.id)})
        agent = _Agent(child.id, parent.id, root_id, depth, nickname)
        self._agents[child.id] = agent
        self._adopt(child, parent)
        forked = _history_before(parent.history, request.fork_call_id) if request.fork_call_id else []
        if forked:
            child.history.extend(forked)
            await asyncio.to_thread(child.writer.response_items, forked)
        await child.emit_status()
        status = self.status(child.id)  # what Codex reports: the child before its turn starts
        await self._start_turn(agent, child, request.inputs, session)
        self._spawn(self._notify_parent(agent), name=f"agent-watch-{child.id}")
        return SpawnedAgent(child.id, nickname, settings.model, settings.effort, status)

    async def _notify_parent(self, agent: _Agent) -> None:
        """Once the child first settles, tell the parent's model how (Codex's ``<subagent_notification>``:
        into the parent's running turn before its next request, or straight into its history while it is
        idle). Turns cut short by our own interrupts do not count; a closed child reports ``shutdown``."""
        await agent.settled.wait()  # a server task: shutdown cancels it
        parent = self._threads.loaded.get(agent.parent_id)
        status = AgentStatus("shutdown") if agent.closed else self.status(agent.thread_id)
        if parent is None:
            return
        payload = json.dumps({"agent_path": agent.thread_id, "status": status.model_json()},
                             separators=(",", ":"))
        entry = user_message_item([f"<subagent_notification>\n{payload}\n</subagent_notification>"])
        if parent.active is not None:
            parent.pending_context.append(entry)
        else:
            parent.history.append(entry)
            await asyncio.to_thread(parent.writer.response_items, [entry])

    def _adopt(self, child: ThreadRuntime, parent: ThreadRuntime) -> None:
        """Let the parent's subscribers see ``child``; it inherits the parent's tool switches."""
        for subscriber in parent.subscribers:
            self._threads.subscribe(child, subscriber)
        child.tool_config = dict(parent.tool_config)

    async def _start_turn(self, agent: _Agent, thread: ThreadRuntime, inputs: list[JsonObj],
                          session: Session) -> None:
        turn = TurnState(new_uuid7(), inputs=inputs)
        runner = threads_runner.TurnRunner(thread=thread, turn=turn, services=await self._turn_services(thread, session))
        runner.reports_read_state = False  # Codex keeps no read state for a sub-agent's thread
        agent.turn = turn
        await thread.start_turn(turn, runner, self._spawn)()
        if turn.task is not None:
            turn.task.add_done_callback(lambda _: None if agent.quiet else agent.settled.set())

    async def send_input(self, target: str, inputs: list[JsonObj], *, interrupt: bool) -> str:
        """Steer ``target``'s running turn with ``inputs``, or start a new turn (after interrupting the
        running one with ``interrupt``)."""
        agent, thread = self._open(target)
        if interrupt and thread.active is not None:
            await self._interrupt(agent, thread)
        parent = self._threads.loaded.get(agent.parent_id)
        session = _a_session(thread) or (_a_session(parent) if parent is not None else None)
        if session is None:
            raise CollabError("collab manager unavailable")
        running = thread.active
        if running is None:
            await self._start_turn(agent, thread, inputs, session)
        else:
            thread.steer(inputs)
            if running.task is not None:
                running.task.add_done_callback(
                    lambda _: self._spawn(self._unread(agent, thread, running, inputs, session),
                                          name=f"agent-input-{thread.id}"))
        return new_uuid7()

    async def _unread(self, agent: _Agent, thread: ThreadRuntime, turn: TurnState, inputs: list[JsonObj],
                      session: Session) -> None:
        """Input steered into a turn that was already ending is still pending when it ends: give it a turn
        of its own rather than lose it."""
        if agent.closed or not any(pending is inputs for pending in turn.pending_inputs):
            return
        if thread.active is not None:
            thread.steer(inputs)
        else:
            await self._start_turn(agent, thread, inputs, session)

    @staticmethod
    async def _interrupt(agent: _Agent, thread: ThreadRuntime) -> None:
        """Stop the child's running turn (bounded); its end does not count as the child settling."""
        agent.quiet = True
        try:
            await thread.interrupt_and_wait(STOP_TIMEOUT_S)
        finally:
            agent.quiet = False

    async def wait(self, targets: list[str], timeout_s: float) -> dict[str, AgentStatus]:
        """The final statuses among ``targets`` as soon as one is final (all that are then), {} on timeout."""
        final = {t: s for t in targets if (s := self.status(t)).final}
        if final:
            return final
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            tasks = {task for t in targets if (agent := self._agents.get(t)) is not None
                     and agent.turn is not None and (task := agent.turn.task) is not None and not task.done()}
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return {}
            if tasks:
                await asyncio.wait(tasks, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            else:  # a turn accepted but not launched yet: look again shortly (bounded by the deadline)
                await asyncio.sleep(min(0.01, left))
            final = {t: s for t in targets if (s := self.status(t)).final}
            if final:
                return final

    async def close(self, target: str) -> AgentStatus:
        """Interrupt ``target``'s running turn and unload its thread; returns its status before."""
        agent, thread = self._open(target)
        previous = self.status(target)
        if thread.active is not None:
            await self._interrupt(agent, thread)
        agent.closed = True
        agent.settled.set()
        await self._threads.unload(thread)
        return previous

    async def resume(self, target: str) -> AgentStatus:
        """Load closed ``target`` again (it counts against ``max_threads`` again); returns its status. A
        sub-agent this server did not spawn (before a restart) is found in the store by its source."""
        agent = self._agents.get(target) or await self._stored_agent(target)
        parent = self._threads.loaded.get(agent.parent_id) if agent is not None else None
        if agent is None or parent is None:
            raise CollabError(f"agent with id {target} not found")
        if not agent.closed:
            return self.status(target)
        if self._open_children(agent.root_id) >= self.limits().max_threads:
            raise CollabError(LIMIT_REACHED)
        session = _a_session(parent)
        if session is None:
            raise CollabError("collab manager unavailable")
        child = await self._threads.resume(session, target, replace(parent.settings), lambda settings: settings)
        agent.closed, agent.turn = False, None
        self._adopt(child, parent)
        await child.emit_status()
        return self.status(target)


    async def _stored_agent(self, thread_id: str) -> _Agent | None:
        """The stored sub-agent ``thread_id`` (its source names its parent and depth), registered closed."""
        try:
            stored = await self._threads.read_stored(thread_id)
        except InvalidRequest:
            return None
        source = stored.meta.get("source")
        spawn = source.get("subAgent") if isinstance(source, dict) else None
        spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
        if not isinstance(spawn, dict) or not isinstance(spawn.get("parent_thread_id"), str):
            return None
        parent_id = str(spawn["parent_thread_id"])
        parent_agent = self._agents.get(parent_id)
        depth = spawn.get("depth")
        agent = _Agent(thread_id, parent_id, parent_agent.root_id if parent_agent is not None else parent_id,
                       depth if isinstance(depth, int) else 1, str(stored.meta.get("agentNickname") or ""),
                       closed=True)
        self._agents[thread_id] = agent
        return agent


def _history_before(history: list[JsonObj], call_id: str) -> list[JsonObj]:
    """The parent's history up to the spawn call (as Codex forks it: the call itself has no output yet)."""
    for index, entry in enumerate(history):
        if entry.get("type") == "function_call" and entry.get("call_id") == call_id:
            return list(history[:index])
    return list(history)


def _a_session(thread: ThreadRuntime) -> Session | None:
    """A live connection subscribed to ``thread``: a child's turns introduce themselves as its client."""
    return next((s for s in thread.subscribers if isinstance(s, Session) and not s.closed.is_set()), None)
