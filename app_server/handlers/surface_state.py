"""Connection-scoped state of the surface methods: fs watches and command/exec + process/spawn children.

One ``SurfaceState`` per server; each connection gets a ``ConnState`` on first use, torn down (watches
stopped, children killed) when the connection closes, as Codex does."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app_server.connection import Session
    from app_server.handlers.environments import AddedEnvironment
    from pycodex.platform.spawn import SpawnedProcess

__all__ = ["ConnState", "RunningProcess", "SurfaceState"]


@dataclass
class RunningProcess:
    spawned: SpawnedProcess
    stream_stdin: bool
    tty: bool
    task: asyncio.Task[None] | None = None


@dataclass
class ConnState:
    watches: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    commands: dict[str, RunningProcess] = field(default_factory=dict)  # command/exec by processId
    processes: dict[str, RunningProcess] = field(default_factory=dict)  # process/spawn by handle

    async def close(self) -> None:
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
        state = self._conns.get(session.id)
        if state is None:
            state = self._conns[session.id] = ConnState()

            async def drop() -> None:
                self._conns.pop(session.id, None)
                await state.close()

            session.on_close.append(drop)
        return state

    async def close(self) -> None:
        conns, self._conns = list(self._conns.values()), {}
        for state in conns:
            await state.close()
        for env in self.environments.values():
            if env.client is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(env.client.close(), 2.0)
        self.environments.clear()
