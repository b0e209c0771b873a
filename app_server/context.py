"""What a request handler is handed: ``HandlerContext`` (the connection's session and the server's services).

A leaf contract. Handlers are ``async def h(ctx: HandlerContext, params: P) -> R``; they reach the
connection through ``ctx.session`` (notify, server requests, client identity) and the process-wide
services through ``ctx.services``, typed by the ``Services`` protocol below. ``AppServer`` satisfies
``Services`` structurally, but neither this module nor any handler imports ``app_server.app``: a handler
sees only the services listed here, and a test can hand it any object that provides them.

Everything named here is imported for type checking only, so importing this module costs nothing at
start-up and adds no edge to the runtime import graph.
"""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import asyncio
    from pathlib import Path

    from app_server.config import ConfigWarning, LoadedConfig
    from app_server.environments import EnvironmentHub
    from app_server.mcp.service import McpService
    from app_server.search.fuzzy import FuzzySessions
    from app_server.session import Session
    from app_server.skills import SkillsCatalog
    from app_server.store import ThreadStore
    from app_server.store.thread_state import ThreadStateDb
    from app_server.surface_state import SurfaceState
    from app_server.threads.manager import ThreadManager
    from app_server.threads.services import TurnServices
    from app_server.threads.state import ThreadRuntime, ThreadSettings
    from pycodex.json_types import JsonObj

__all__ = ["HandlerContext", "Services"]


class Services(Protocol):
    """The server's services a handler may use (read-only: handlers never rebind them)."""

    @property
    def codex_home(self) -> Path:
        """CODEX_HOME of this server."""

    @property
    def config(self) -> LoadedConfig:
        """The config as last loaded (``reload_config`` reads it again)."""

    @property
    def startup_warnings(self) -> list[ConfigWarning]:
        """Config and sandbox warnings found at start-up (sent after ``initialize``)."""

    @property
    def threads(self) -> ThreadManager:
        """The one owner of loaded threads."""

    @property
    def store(self) -> ThreadStore:
        """Stored threads (rollouts and their index)."""

    @property
    def thread_state(self) -> ThreadStateDb:
        """Read states, goals and sections (opened on first use)."""

    @property
    def environments(self) -> EnvironmentHub:
        """Where commands run (local or a remote exec-server)."""

    @property
    def mcp(self) -> McpService:
        """Every thread's MCP servers (built on first use)."""

    @property
    def skills_catalog(self) -> SkillsCatalog:
        """The skills catalog (built on first use)."""

    @property
    def surface(self) -> SurfaceState:
        """fs watches, command/exec and process/spawn children, added environments."""

    @property
    def fuzzy_sessions(self) -> dict[int, FuzzySessions]:
        """fuzzyFileSearch sessions by connection id."""

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Start a background task owned by the server (cancelled at shutdown)."""

    def reload_config(self) -> LoadedConfig:
        """Read config.toml again; InvalidRequest while it is unusable."""

    def read_config(self) -> LoadedConfig:
        """Read config.toml again for config/read; InternalError while it is unusable."""

    def thread_defaults(self, overrides: JsonObj | None, *, reload: bool = True,
                        cwd: Path | None = None) -> ThreadSettings:
        """Settings for a thread about to be created or loaded in ``cwd`` (default: the working directory)."""

    def working_dir(self) -> Path:
        """Where requests without a cwd run."""

    def check_model(self, provider_id: str) -> None:
        """Raise InvalidRequest unless a thread on ``provider_id`` can reach its model."""

    def prewarm_turns(self) -> None:
        """A thread has been handed out: begin importing what its first turn needs (in the background)."""

    async def turn_services(self, thread: ThreadRuntime, session: Session) -> TurnServices:
        """What a new turn of ``thread``, started by ``session``, runs with."""


@dataclass(frozen=True, slots=True)
class HandlerContext:
    """One request's view: the connection it came on and the services it may use."""

    session: Session
    services: Services
