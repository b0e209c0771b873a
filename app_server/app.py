"""The app-server process: shared state (home, config, threads) and the route table.

One ``AppServer`` per process; every connection gets an ``AppConnection`` bound to it. Handlers reach
the state through ``session.app``.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from app_server.connection import AppConnection
from app_server.router import Router
from pycodex.transport.base import Outbox

__all__ = ["AppServer", "default_codex_home"]

logger = logging.getLogger(__name__)


def default_codex_home() -> Path:
    raw = os.environ.get("CODEX_HOME")
    home = Path(raw) if raw else Path.home() / ".pycodex"
    return home.absolute()


class AppServer:
    """Process-wide state of the app-server."""

    def __init__(
        self,
        *,
        codex_home: Path,
        config_overrides: Sequence[str] = (),
        strict_config: bool = False,
        max_queued_requests: int | None = None,
    ) -> None:
        self.codex_home = codex_home
        self.config_overrides = list(config_overrides)
        self.strict_config = strict_config
        self.max_queued_requests = max_queued_requests or int(
            os.environ.get("PYCODEX_MAX_QUEUED_REQUESTS", "256")
        )
        self.startup_warnings: list[str] = []
        self.router = Router(known_methods=_codex_method_names())
        self.experimental_notifications: frozenset[str] = frozenset({"thread/readState/changed"})
        self._tasks: set[asyncio.Task[object]] = set()
        from app_server.handlers import register_all

        register_all(self)

    def connection(self, outbox: Outbox) -> AppConnection:
        return AppConnection(
            outbox,
            self.router,
            app=self,
            max_queued_requests=self.max_queued_requests,
            experimental_notifications=self.experimental_notifications,
        )

    def spawn(self, coro: object, *, name: str) -> asyncio.Task[object]:
        """Start a background task owned by the server (cancelled at shutdown)."""
        task: asyncio.Task[object] = asyncio.get_running_loop().create_task(coro, name=name)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def shutdown(self, timeout: float = 0.5) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)


def _codex_method_names() -> list[str]:
    try:
        from app_server.protocol.method_names import CODEX_CLIENT_METHODS as CODEX_METHOD_NAMES
    except ImportError:
        return []
    return list(CODEX_METHOD_NAMES)
