"""Server state of the surface methods: fs watches, command/exec + process/spawn children, added environments.

One ``SurfaceState`` per server; each connection gets a ``ConnState`` on first use, torn down (watches
stopped, children killed) when the connection closes, as Codex does. A service, not a handler: it lives
beside the server so that neither ``app.py`` nor the handler context has to import ``handlers/``."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app_server.session import Session
    from exec_client.client import ExecServerClient
    from pycodex.platform.spawn import SpawnedProcess

__all__ = ["AddedEnvironment", "ConnState", "RunningProcess", "SurfaceState"]


@dataclass
class AddedEnvironment:
    """An exec-server added by environment/add: its URL and what the connection attempt observed."""

    url: str
    client: ExecServerClient | None = None
    error: str | None = None
    attempt: asyncio.Task[None] | None = None


@dataclass
class RunningProcess:
    """A command/exec or process/spawn child and the task that pumps its output."""

    spawned: SpawnedProcess
    stream_stdin: bool
    tty: bool
    task: asyncio.Task[None] | None = None


@dataclass
class ConnState:
    """One connection's watches and children."""

    watches: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    commands: dict[str, RunningProcess] = field(default_factory=dict)  # command/exec by processId
    processes: dict[str, RunningProcess] = field(default_factory=dict)  # process/spawn by handle

    async def close(self) -> None:
        """Kill the children (their whole process group) and stop the watches, each bounded."""
        tasks = list(self.watches.values())
        for running in [*self.commands.values(), *self.processes.values()]:
            running.spawned.signal_group(9)
            if running.task is not None:
                tasks.append(running.task)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, 2.0)


class SurfaceState:
    """Process-wide surface state; per-connection parts through ``conn(session)``."""

    def __init__(self, codex_home: Path) -> None:
        self.codex_home = codex_home
        self._conns: dict[int, ConnState] = {}
        #: experimentalFeature/enablement/set: runtime overrides, process-wide as in Codex.
        self.feature_overrides: dict[str, bool] = {}
        #: externalAgentConfig/import/recordHistory entries (Codex keeps them in its state db).
        self.import_histories: list[dict[str, object]] = []
        #: environment/add: exec-servers added at runtime, by id.
        self.environments: dict[str, AddedEnvironment] = {}

    def conn(self, session: Session) -> ConnState:
        """The connection's state, made on first use and torn down when the connection closes."""
        state = self._conns.get(session.id)
        if state is None:
            state = self._conns[session.id] = ConnState()

            async def drop() -> None:
                self._conns.pop(session.id, None)
                await state.close()

            session.on_close.append(drop)
        return state

    async def close(self) -> None:
        """Server shutdown: end every connection's watches and children, close added environments."""
        conns, self._conns = list(self._conns.values()), {}
        for state in conns:
            await state.close()
        for env in self.environments.values():
            if env.client is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(env.client.close(), 2.0)
        self.environments.clear()
