"""The app-server process: shared state (home, config, store, threads) and the route table.

One ``AppServer`` per process; every connection gets an ``AppConnection`` bound to it. Handlers reach
the state through ``session.app``. This module wires the pieces together and holds no protocol logic.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app_server.config import ConfigError, ConfigWarning, LoadedConfig, load_config
from app_server.connection import AppConnection, Session
from app_server.environments import EnvironmentHub, EnvironmentsConfigError, choose_environment
from app_server.model.client import ModelClient
from app_server.model.errors import ModelError, RetryNotice, RetryScope, TurnErrorPayload
from app_server.model.events import ResponseEvent
from app_server.model.provider import ProviderConfig, RequestContext
from app_server.model.script import ScriptError
from app_server.model.scripted import ScriptedModelClient, resolve_script
from app_server.protocol.method_names import CODEX_CLIENT_METHODS, EXPERIMENTAL_METHODS
from app_server.protocol.methods import experimental_fields_present
from app_server.router import Router
from app_server.skills import SkillsCatalog
from app_server.store import ThreadStore
from app_server.threads.manager import ThreadManager
from app_server.threads.prompt import ContextInputs, EnvironmentStatus, initial_context
from app_server.threads.runner import TurnRunner
from app_server.threads.skills_glue import ThreadSkills
from app_server.threads.state import ThreadRuntime, ThreadSettings, TurnState
from app_server.tools.exec_tool import handle_tool_call
from app_server.tools.sandbox import landlock_abi, make_sandbox
from app_server.tools.shell_snapshot import ShellSnapshot
from app_server.tools.specs import tool_specs
from pycodex.jsonrpc.errors import InternalError, InvalidRequest
from pycodex.transport.base import Outbox

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["AppServer", "StartupError", "default_codex_home"]

logger = logging.getLogger(__name__)

JsonObj = dict[str, Any]
CONFIG_LOAD_FAILED = "failed to load configuration"
SCRIPT_UNUSABLE = "The scripted model cannot run: its model script is unusable."
SANDBOX_UNAVAILABLE = (
    "pycodex could not find Landlock or bubblewrap on this system: commands run without a filesystem "
    "sandbox, whatever sandbox_mode says."
)


class StartupError(Exception):
    """A fatal configuration problem; reported on stderr as ``Error: ...`` with exit status 1."""


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
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        # `environ` and `cwd` default to the process's; an in-process host (the tests' in-memory harness)
        # passes its own so several servers can share one interpreter without touching os.environ.
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.cwd = cwd
        self.codex_home = codex_home
        self.strict_config = strict_config
        self.config_overrides = list(config_overrides)
        try:
            codex_home.mkdir(parents=True, exist_ok=True)
            self.config: LoadedConfig = load_config(
                codex_home, self.config_overrides, strict=strict_config, env=self.environ
            )
        except ConfigError as exc:
            raise StartupError(str(exc).strip()) from None
        except OSError as exc:
            raise StartupError(f"cannot use CODEX_HOME {codex_home}: {exc.strerror or exc}") from None
        self.startup_warnings: list[ConfigWarning] = list(self.config.warnings)
        self.startup_warnings += self._script_warnings()
        for warning in self.startup_warnings:
            if warning.details:  # an unusable config: say why on stderr too, as Codex does
                logger.error("%s %s", warning.summary, warning.details)
        if landlock_abi() == 0:
            self.startup_warnings.append(ConfigWarning(summary=SANDBOX_UNAVAILABLE))
        self.max_queued_requests = max_queued_requests or int(
            self.environ.get("PYCODEX_MAX_QUEUED_REQUESTS", "256")
        )
        self.router = Router(known_methods=CODEX_CLIENT_METHODS, experimental_methods=EXPERIMENTAL_METHODS)
        self.experimental_notifications: frozenset[str] = frozenset({"thread/readState/changed"})
        self._tasks: set[asyncio.Task[Any]] = set()
        self._clients: dict[str, ModelClient | ScriptedModelClient] = {}
        self._retired_clients: list[ModelClient | ScriptedModelClient] = []
        try:
            self.environments = EnvironmentHub(choose_environment(self.environ, codex_home), self.environ)
        except EnvironmentsConfigError as exc:
            raise StartupError(str(exc)) from None
        self.store = ThreadStore(codex_home, fsync=self.environ.get("PYCODEX_FSYNC", "1") != "0")
        self.threads = ThreadManager(self.store, attach=self._attach)
        self.skills_catalog = SkillsCatalog(codex_home, self.config.project_root_markers)
        from app_server.handlers import register_all

        register_all(self)

    # -- connections and tasks ---------------------------------------------------------------------
    def connection(self, outbox: Outbox) -> AppConnection:
        return AppConnection(
            outbox,
            self.router,
            app=self,
            max_queued_requests=self.max_queued_requests,
            experimental_notifications=self.experimental_notifications,
        )

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Start a background task owned by the server (cancelled at shutdown)."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def shutdown(self, timeout: float = 0.5) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        for client in [*self._clients.values(), *self._retired_clients]:
            await client.aclose()
        await self.environments.close()
        try:
            await asyncio.wait_for(self.threads.shutdown(), timeout)
        except TimeoutError:
            logger.warning("thread shutdown timed out")

    # -- config -------------------------------------------------------------------------------------
    def experimental_probe(self, model: type[BaseModel]) -> Callable[[Any], str | None]:
        return lambda raw: experimental_fields_present(model, raw)

    def _script_warnings(self) -> list[ConfigWarning]:
        """Check the scripted model's script at start-up, so a bad one is reported before any turn."""
        provider = self.config.provider
        if self.config.load_error is not None or not provider.is_scripted:
            return []
        try:
            resolve_script(provider, self.environ)
        except ScriptError as exc:
            return [ConfigWarning(summary=SCRIPT_UNUSABLE, details=str(exc))]
        return []

    def _load_current(self) -> LoadedConfig:
        """config.toml and `-c` flags as they are now; raises ConfigError while they are unusable. A good
        load becomes the server's config, so fixing the file needs no restart."""
        config = load_config(self.codex_home, self.config_overrides, strict=self.strict_config, env=self.environ)
        if config.load_error is not None:
            raise config.load_error
        self.config = config
        return config

    def reload_config(self) -> LoadedConfig:
        """Read config.toml again (Codex does so for every thread/start, thread/fork and cold resume).

        Raises InvalidRequest "failed to load configuration: <cause>" while the file is unusable.
        """
        try:
            return self._load_current()
        except ConfigError as exc:
            raise InvalidRequest(f"{CONFIG_LOAD_FAILED}: {exc.message.strip()}") from None

    def read_config(self) -> LoadedConfig:
        """The config for `config/read`, read again; an unusable one is -32603 worded as Codex words it."""
        try:
            return self._load_current()
        except ConfigError as exc:
            raise InternalError(exc.config_read_message()) from None

    def thread_defaults(self, overrides: JsonObj | None, *, reload: bool = True) -> ThreadSettings:
        """Settings for a thread about to be created or loaded: config.toml (read again unless `reload` is
        false), `-c` flags, then the request's `config` overrides. Raises InvalidRequest."""
        config = self.reload_config() if reload else self.config
        if overrides:
            try:
                config = config.with_overrides(overrides)
            except ConfigError as exc:
                raise InvalidRequest(f"{CONFIG_LOAD_FAILED}: {exc.message}") from None
        return ThreadSettings(
            model=config.model,
            model_provider=config.model_provider_id,
            cwd=self.cwd or Path(os.getcwd()),
            approval_policy=config.approval_policy or "on-request",
            sandbox_mode=config.sandbox_mode or "workspace-write",
            base_instructions=config.instructions,
            developer_instructions=config.developer_instructions,
            effort=config.model_reasoning_effort,
            summary=config.model_reasoning_summary,
        )

    def check_model(self, provider_id: str) -> None:
        """Make sure a thread on `provider_id` can reach its model: the provider exists and, for the
        scripted one, its script loads. Raises InvalidRequest naming the cause (and the script file)."""
        if provider_id not in self.config.model_providers:
            raise InvalidRequest(f"{CONFIG_LOAD_FAILED}: Model provider `{provider_id}` not found")
        try:
            self._client(provider_id)
        except ScriptError as exc:
            raise InvalidRequest(f"{CONFIG_LOAD_FAILED}: {exc}") from None

    def provider(self, provider_id: str) -> ProviderConfig:
        provider = self.config.model_providers.get(provider_id)
        if provider is None:
            raise InvalidRequest(f"unknown model provider `{provider_id}`")
        return provider

    # -- turns ----------------------------------------------------------------------------------------
    async def _attach(self, thread: ThreadRuntime) -> None:
        """Give a newly loaded thread its environment (connecting it if needed) and sandbox."""
        await self.refresh_environment(thread)
        thread.skills = ThreadSkills(self.skills_catalog)
        thread.reconnect = lambda: self.refresh_environment(thread)
        if self.environments.choice.kind == "local":
            snapshot = ShellSnapshot(self.codex_home / "shell_snapshots" / f"{thread.id}.sh")
            task = snapshot.start(thread.settings.cwd)
            self._tasks.add(task)  # cancelled at shutdown, which kills a shell still capturing
            task.add_done_callback(self._tasks.discard)
            thread.shell_snapshot = snapshot
            thread.sandbox_factory = lambda settings, cwd: make_sandbox(
                settings.sandbox_mode, Path(cwd), settings.writable_roots
            )

    async def refresh_environment(self, thread: ThreadRuntime) -> None:
        spawner, error = await self.environments.get()
        thread.environment = spawner
        thread.environment_id = self.environments.environment_id or "local"
        thread.environment_error = error
        thread.has_environment = self.environments.choice.kind != "none"

    def _client(self, provider_id: str) -> ModelClient | ScriptedModelClient:
        """The client of a provider; a new one when a config reload changed the provider's settings (the old
        one may still serve a running turn, so it is closed only at shutdown)."""
        provider = self.provider(provider_id)
        client = self._clients.get(provider_id)
        if client is None or client.provider != provider:
            fresh = (
                ScriptedModelClient.from_provider(provider, self.environ)
                if provider.is_scripted
                else ModelClient(provider, env=self.environ)
            )
            if client is not None:
                self._retired_clients.append(client)
            self._clients[provider_id] = client = fresh
        return client

    def stream(
        self, thread: ThreadRuntime, body: JsonObj, ctx: RequestContext,
        on_retry: Callable[[RetryNotice], Awaitable[None]],
    ) -> AsyncIterator[ResponseEvent]:
        try:
            client = self._client(thread.settings.model_provider)
        except ScriptError as exc:  # the script broke after the thread started: fail the turn, say why
            raise ModelError(TurnErrorPayload(str(exc), "other"), RetryScope.NONE) from None
        return client.stream(body, ctx, on_retry)

    async def make_runner(self, thread: ThreadRuntime, turn: TurnState, session: Session) -> TurnRunner:
        await thread.skills.refresh(thread)

        def request_ctx(t: ThreadRuntime, tr: TurnState) -> RequestContext:
            from app_server.handlers.initialize import user_agent

            metadata = {
                "session_id": t.id, "thread_id": t.id, "turn_id": tr.id, "window_id": f"{t.id}:0",
                "request_kind": "turn", "history_initialization": t.history_initialization,
                "sandbox_mode": t.settings.sandbox_mode, "model": t.settings.model,
            }
            return RequestContext(
                thread_id=t.id, turn_id=tr.id, originator=session.client_name or "pycodex",
                user_agent=user_agent(session.client_name or "pycodex", session.client_version or ""),
                turn_metadata=metadata,
            )

        def build_context(t: ThreadRuntime) -> list[JsonObj]:
            s = t.settings
            if not t.has_environment:
                status = EnvironmentStatus(kind="none")
            else:
                status = EnvironmentStatus(kind="local" if t.environment_id == "local" else "remote",
                                           failed_reason=t.environment_error)
            return initial_context(ContextInputs(
                environment=status, skills_sections=t.skills.sections(),
                cwd=s.cwd, sandbox_mode=s.sandbox_mode, approval_policy=s.approval_policy,
                writable_roots=list(s.writable_roots), base_instructions=s.base_instructions,
                developer_instructions=s.developer_instructions,
                project_root_markers=self.config.project_root_markers,
            ))

        return TurnRunner(
            thread=thread, turn=turn, gateway=self, tools=tool_specs() + thread.skills.tools(),
            tool_handler=handle_tool_call, inject=thread.skills.injections,
            request_ctx=request_ctx, build_context=build_context, origin=session,
        )
