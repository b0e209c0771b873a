"""The app-server process: shared state (home, config, store, threads) and the route table.

One ``AppServer`` per process; every connection gets an ``AppConnection`` bound to it. Handlers reach
the services through ``HandlerContext.services`` (app_server/context.py), which ``AppServer`` satisfies.
This module wires the pieces together and holds no protocol logic.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from app_server.config import ConfigError, ConfigWarning, LoadedConfig, load_config
from app_server.config.mcp_servers import optional_startup_grace_s
from app_server.connection import AppConnection
from app_server.environments import (
    EnvironmentHub,
    EnvironmentsConfigError,
    ThreadEnvironment,
    choose_environment,
)
from app_server.handlers import register_all
from app_server.lazy import LazyModule
from app_server.loading import AFTER_FIRST_THREAD, prewarm
from app_server.model.auth import stored_api_key
from app_server.model.provider import ScriptError
from app_server.protocol import notices
from app_server.protocol.method_names import CODEX_CLIENT_METHODS, EXPERIMENTAL_METHODS
from app_server.router import Router
from app_server.session import Session
from app_server.startup import StartupError, default_codex_home, user_agent
from app_server.store import ThreadStore
from app_server.surface_state import SurfaceState
from app_server.threads.manager import ThreadManager
from app_server.threads.services import ClientIdentity, ThreadServices, TurnServices
from app_server.threads.state import ThreadRuntime, ThreadSettings
from app_server.tools.sandbox import landlock_abi
from app_server.tools.shell_snapshot import DEFAULT_SHELL, ShellSnapshot, capture_login_env
from pycodex import __version__, otel
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InternalError, InvalidRequest
from pycodex.transport.base import Outbox

if TYPE_CHECKING:
    import app_server.skills as skills_catalog
    from app_server import notify as turn_notify
    from app_server.mcp import service as mcp_service
    from app_server.mcp.service import McpService
    from app_server.model import clients as model_clients
    from app_server.model import scripted as model_scripted
    from app_server.model.clients import ModelClients
    from app_server.protocol.declarations import MethodDecl
    from app_server.search.fuzzy import FuzzySessions
    from app_server.skills import SkillsCatalog
    from app_server.skills import bundled as skills_bundled
    from app_server.store import thread_state as store_thread_state
    from app_server.store.thread_state import ThreadStateDb
    from app_server.threads import agents as threads_agents
    from app_server.threads import skills_glue as threads_skills_glue
    from app_server.threads import tool_policy as threads_tool_policy
    from app_server.threads.agents import AgentControl
    from app_server.tools import router as tools_router
    from app_server.tools import unified_exec as tools_unified_exec
    from pycodex.otel.sdk import Telemetry
else:
    mcp_service = LazyModule("app_server.mcp.service")
    model_clients = LazyModule("app_server.model.clients")
    model_scripted = LazyModule("app_server.model.scripted")
    skills_bundled = LazyModule("app_server.skills.bundled")
    skills_catalog = LazyModule("app_server.skills")
    store_thread_state = LazyModule("app_server.store.thread_state")
    threads_agents = LazyModule("app_server.threads.agents")
    threads_skills_glue = LazyModule("app_server.threads.skills_glue")
    threads_tool_policy = LazyModule("app_server.threads.tool_policy")
    tools_router = LazyModule("app_server.tools.router")
    tools_unified_exec = LazyModule("app_server.tools.unified_exec")
    turn_notify = LazyModule("app_server.notify")

__all__ = ["AppServer", "StartupError", "default_codex_home"]

logger = logging.getLogger(__name__)

CONFIG_LOAD_FAILED = "failed to load configuration"
SCRIPT_UNUSABLE = "The scripted model cannot run: its model script is unusable."
SANDBOX_UNAVAILABLE = (
    "pycodex could not find Landlock or bubblewrap on this system: commands run without a filesystem "
    "sandbox, whatever sandbox_mode says."
)


class AppServer:
    """Process-wide state of the app-server."""

    def __init__(
        self,
        *,
        codex_home: Path,
        config_overrides: Sequence[str] = (),
        strict_config: bool = False,
        max_queued_requests: int | None = None,
        profile: str | None = None,
        environ: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        declarations: Iterable[MethodDecl] | None = None,
    ) -> None:
        # `declarations`: the methods served (default: app_server/protocol/method_table.py's); a test adds a
        # toy one.
        # `environ` and `cwd` default to the process's; an in-process host (the tests' in-memory harness)
        # passes its own so several servers can share one interpreter without touching os.environ.
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.cwd = cwd
        self.codex_home = codex_home
        self.strict_config = strict_config
        self.config_overrides = list(config_overrides)
        self.profile = profile  # `--profile NAME`: CODEX_HOME/NAME.config.toml over config.toml
        try:
            codex_home.mkdir(parents=True, exist_ok=True)
            self.config: LoadedConfig = load_config(
                codex_home, self.config_overrides, strict=strict_config, profile=profile, env=self.environ
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
        self.telemetry = self._start_telemetry()
        self.max_queued_requests = max_queued_requests or int(
            self.environ.get("PYCODEX_MAX_QUEUED_REQUESTS", "256")
        )
        self.router = Router(known_methods=CODEX_CLIENT_METHODS, experimental_methods=EXPERIMENTAL_METHODS)
        self.experimental_notifications: frozenset[str] = frozenset(notices.EXPERIMENTAL)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._prewarm: asyncio.Task[None] | None = None
        self._prewarm_turns: asyncio.Task[None] | None = None
        #: The login-shell environment of the server's own directory, captured ahead for the first thread
        #: started there (its first command would otherwise wait for that shell): (cwd, capture).
        self._login_env_ahead: tuple[Path, asyncio.Task[bytes | None]] | None = None
        try:
            self.environments = EnvironmentHub(choose_environment(self.environ, codex_home), self.environ)
        except EnvironmentsConfigError as exc:
            raise StartupError(str(exc)) from None
        #: Another environment for a thread about to load, or None for the default (``pycodex acp`` hands its
        #: editor threads the ACP client's fs/terminal this way); the thread's tool checks stay as they are.
        self.environment_for_thread: Callable[[str], EnvironmentHub | None] | None = None
        self.store = ThreadStore(codex_home, fsync=self.environ.get("PYCODEX_FSYNC", "1") != "0")
        self.threads = ThreadManager(self.store, services=self.thread_services, connections=self._connections)
        self._skill_root_markers = self.config.project_root_markers
        self.surface = SurfaceState(codex_home)
        # Every initialized connection, for notifications that belong to no one thread's subscribers.
        self._sessions: set[Session] = set()
        self._broadcasts: asyncio.Queue[notices.Notice] = asyncio.Queue()
        self._broadcaster: asyncio.Task[None] | None = None
        self._mcp: McpService | None = None
        # fuzzyFileSearch sessions per connection id (handlers/search.py drops them on close)
        self.fuzzy_sessions: dict[int, FuzzySessions] = {}
        if declarations is None:
            register_all(self.router, self)
        else:
            register_all(self.router, self, declarations)

    # Turn-only machinery (model clients, skills, tools) is built on first use and imported with the prewarm
    # (app_server/loading.py says what loads when): serving `initialize` must not pay for it.
    @cached_property
    def models(self) -> ModelClients:
        """The model clients; built on first use."""
        return model_clients.ModelClients(lambda: self.config.model_providers, self.environ,
                                          lambda: stored_api_key(self.codex_home))

    @cached_property
    def skills_catalog(self) -> SkillsCatalog:
        """The skills catalog; pycodex's system skills are copied into CODEX_HOME just before it first lists."""
        skills_bundled.install_system_skills(self.codex_home)
        return skills_catalog.SkillsCatalog(self.codex_home, self._skill_root_markers)

    @cached_property
    def agents(self) -> AgentControl:
        """The server's sub-agents (the multi_agent_v1 tools), built for the first thread."""
        return threads_agents.AgentControl(self.threads, turn_services=self.turn_services, spawn=self.spawn,
                                           config=lambda: self.config.raw)

    @cached_property
    def thread_state(self) -> ThreadStateDb:
        """Read states, goals and sections (thread_state.sqlite), opened on first use."""
        return store_thread_state.ThreadStateDb(self.codex_home)

    # -- connections and tasks ---------------------------------------------------------------------
    def connection(self, outbox: Outbox, *, early_answer: bytes | None = None) -> AppConnection:
        """A new client connection; ``early_answer``: see AppConnection."""
        connection = AppConnection(
            outbox,
            self.router,
            max_queued_requests=self.max_queued_requests,
            experimental_notifications=self.experimental_notifications,
            on_initialized=self.prewarm,
            early_answer=early_answer,
            telemetry=self.telemetry,
        )
        session = connection.session
        self._sessions.add(session)
        session.on_close.append(lambda: self._sessions.discard(session))
        return connection

    def _connections(self) -> list[Session]:
        """Every initialized connection (what Codex broadcasts a thread's lifecycle changes to)."""
        return [s for s in self._sessions if s.initialized]

    @property
    def mcp(self) -> McpService:
        """Every thread's MCP servers; built on first use, so start-up does not load the MCP SDK."""
        if self._mcp is None:
            self._mcp = mcp_service.McpService(lambda: self.config.mcp_servers, self._broadcast)
        return self._mcp

    def _broadcast(self, method: str, params: JsonObj) -> None:
        """Queue a notification for every initialized client (MCP startup status); one task sends them, so
        they keep their order."""
        self._broadcasts.put_nowait(notices.Notice(cast("notices.NoticeMethod", method), params))
        if self._broadcaster is None or self._broadcaster.done():
            self._broadcaster = self.spawn(self._send_broadcasts(), name="broadcasts")

    async def _send_broadcasts(self) -> None:
        while not self._broadcasts.empty():
            notice = self._broadcasts.get_nowait()
            for session in [s for s in self._sessions if s.initialized]:
                await notices.send(session, notice)

    def prewarm(self) -> None:
        """Once a client has finished its handshake, import what its first thread needs in a worker thread
        while it is idle (and begin the login-shell capture its first thread will want): `initialize`
        stays fast and the first thread does not pay for the imports."""
        if self._prewarm is None:
            self._prewarm = self.spawn(asyncio.to_thread(prewarm, _prewarm_failed), name="prewarm")
            if self.environments.choice.kind == "local":
                cwd = self.working_dir()
                capture = capture_login_env(DEFAULT_SHELL, cwd)
                self._login_env_ahead = (cwd, self.spawn(capture, name="login-env"))

    def prewarm_turns(self) -> None:
        """Once a thread has been handed out, import what its first turn needs besides (the turn family,
        the HTTP client, the tools) in a worker thread, after the first prewarm: the client is composing
        its first prompt, and `thread/start` was not kept waiting for these."""
        if self._prewarm_turns is None:
            self.prewarm()
            first = self._prewarm
            assert first is not None

            async def after_the_thread_modules() -> None:
                await asyncio.wait({first})
                await asyncio.to_thread(prewarm, _prewarm_failed, AFTER_FIRST_THREAD)

            self._prewarm_turns = self.spawn(after_the_thread_modules(), name="prewarm-turns")

    async def thread_machinery(self) -> None:
        """Wait until the prewarm has imported what a thread's services need, so building them neither
        waits on import locks nor shares the GIL with the importing thread."""
        self.prewarm()
        assert self._prewarm is not None
        await asyncio.wait({self._prewarm})  # its failures are logged there; the thread reports its own

    async def turn_machinery(self) -> None:
        """Wait until both prewarms have imported the turn machinery, so a first turn (often started at
        once) neither waits on import locks nor shares the GIL with the importing thread."""
        self.prewarm_turns()
        assert self._prewarm_turns is not None
        await asyncio.wait({self._prewarm_turns})  # its failures are logged there; the turn reports its own

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Start a background task owned by the server (cancelled at shutdown)."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def shutdown(self, timeout: float = 0.5) -> None:
        """Stop background tasks, threads, environments and MCP servers, each bounded."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        if "models" in self.__dict__:  # built only once a thread needed a model
            await self.models.aclose()
        await self.environments.close()
        await self.surface.close()
        try:
            await asyncio.wait_for(self.threads.shutdown(), timeout)
        except TimeoutError:
            logger.warning("thread shutdown timed out")
        if self._mcp is not None:
            await self._mcp.shutdown()  # bounded by each connection's stop (which kills what will not stop)
        # After the threads (a turn ending at shutdown still records its read state); opened only on first use.
        if "thread_state" in self.__dict__:
            self.thread_state.close()
        if self.telemetry is not None:  # last: the turns interrupted above end their spans first
            await asyncio.to_thread(self.telemetry.shutdown)

    # -- config -------------------------------------------------------------------------------------
    def _start_telemetry(self) -> Telemetry | None:
        """OpenTelemetry as `[otel]` and the OTEL_* variables ask (None: nothing exported, no SDK loaded)."""
        try:
            return otel.start(self.config.otel, self.environ, version=__version__)
        except ImportError as exc:  # configured, but the `otel` extra is not installed: run without it
            logger.error("%s", exc)
            self.startup_warnings.append(ConfigWarning(summary=str(exc)))
            return None

    def _script_warnings(self) -> list[ConfigWarning]:
        """Check the scripted model's script at start-up, so a bad one is reported before any turn."""
        provider = self.config.provider
        if self.config.load_error is not None or not provider.is_scripted:
            return []
        try:
            model_scripted.resolve_script(provider, self.environ)
        except ScriptError as exc:
            return [ConfigWarning(summary=SCRIPT_UNUSABLE, details=str(exc))]
        return []

    def _load_current(self) -> LoadedConfig:
        """config.toml and `-c` flags as they are now; raises ConfigError while they are unusable. A good
        load becomes the server's config, so fixing the file needs no restart."""
        config = load_config(self.codex_home, self.config_overrides, strict=self.strict_config, profile=self.profile,
                             env=self.environ)
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

    def thread_defaults(self, overrides: JsonObj | None, *, reload: bool = True,
                        cwd: Path | None = None) -> ThreadSettings:
        """Settings for a thread about to be created or loaded in `cwd` (default: the working directory):
        config.toml (read again unless `reload` is false), `-c` flags, then the request's `config`
        overrides; with no sandbox or approval policy configured, the project's trust decides them
        (`config.trust`). Raises InvalidRequest."""
        config = self.reload_config() if reload else self.config
        if overrides:
            try:
                config = config.with_overrides(overrides)
            except ConfigError as exc:
                raise InvalidRequest(f"{CONFIG_LOAD_FAILED}: {exc.message}") from None
        # imported here: the trust lookup (and the config-layer code it shares) is not start-up's to pay for
        from app_server.config.trust import trust_defaults

        cwd = cwd or self.working_dir()
        trust = trust_defaults(config.raw, cwd, sandbox_mode=config.sandbox_mode,
                               approval_policy=config.approval_policy, markers=config.project_root_markers)
        return ThreadSettings(
            model=config.model,
            model_provider=config.model_provider_id,
            cwd=cwd,
            approval_policy=trust.approval_policy,
            sandbox_mode=trust.sandbox_mode,
            permission_profile=trust.permission_profile,
            base_instructions=config.instructions,
            developer_instructions=config.developer_instructions,
            effort=config.model_reasoning_effort,
            summary=config.model_reasoning_summary,
        )

    def working_dir(self) -> Path:
        """Where requests without a cwd run: the host's (in-process tests) or the process's directory."""
        return self.cwd or Path(os.getcwd())

    def check_model(self, provider_id: str) -> None:
        """Make sure a thread on `provider_id` can reach its model: the provider exists and, for the
        scripted one, its script loads. Raises InvalidRequest naming the cause (and the script file)."""
        if provider_id not in self.config.model_providers:
            raise InvalidRequest(f"{CONFIG_LOAD_FAILED}: Model provider `{provider_id}` not found")
        try:
            self.models.check(provider_id)
        except ScriptError as exc:
            raise InvalidRequest(f"{CONFIG_LOAD_FAILED}: {exc}") from None

    # -- threads and turns: their services are built here and nowhere else ----------------------------
    async def thread_services(self, thread_id: str, settings: ThreadSettings) -> ThreadServices:
        """A thread's environment (connected if it can be), skills and exec sessions."""
        await self.thread_machinery()
        snapshot = None
        chosen = self.environment_for_thread(thread_id) if self.environment_for_thread is not None else None
        hub = chosen or self.environments
        if chosen is None and hub.choice.kind == "local":
            snapshot = ShellSnapshot(self.codex_home / "shell_snapshots" / f"{thread_id}.sh")
            captured = None
            ahead = self._login_env_ahead
            if ahead is not None and ahead[0] == settings.cwd and snapshot.shell == DEFAULT_SHELL:
                captured, self._login_env_ahead = ahead[1], None  # one thread's worth: later ones capture their own
            task = snapshot.start(settings.cwd, captured)
            self._tasks.add(task)  # cancelled at shutdown, which kills a shell still capturing
            task.add_done_callback(self._tasks.discard)
        environment = ThreadEnvironment(hub, snapshot=snapshot, thread_id=thread_id, settings=settings)
        await environment.refresh()
        return ThreadServices(environment=environment, skills=threads_skills_glue.ThreadSkills(lambda: self.skills_catalog),
                              exec_sessions=tools_unified_exec.UnifiedExec(),
                              mcp=self.mcp.open_thread(thread_id, lambda: settings.approval_policy),
                              read_states=self.thread_state, agents=self.agents)

    async def turn_services(self, thread: ThreadRuntime, session: Session) -> TurnServices:
        """What a new turn of ``thread``, started by ``session``, runs with."""
        await self.turn_machinery()
        skills = thread.services.skills
        await skills.refresh(thread)
        name = session.client_name or "pycodex"
        mcp = thread.services.mcp
        grace_s = optional_startup_grace_s(self.config.raw)

        async def mcp_tools() -> tuple[JsonObj, ...]:  # Codex leaves a server still starting after the grace out
            manager = mcp.manager if mcp is not None else None
            if manager is None or thread.services.environment.disabled:  # a thread with no tools gets none
                return ()
            await manager.wait_for_turn(grace_s)
            if threads_tool_policy.defers_mcp_tools(thread, self.config.raw):  # found through tool_search
                return ()
            return tuple(manager.tool_specs())

        code_mode = threads_tool_policy.code_mode_for(thread, self.config.raw)
        return TurnServices(
            model=self.models,
            run_tool=tools_router.tool_router(
                ask_user=threads_tool_policy.default_mode_asks_user(thread, self.config.raw), code_mode=code_mode),
            tool_specs=threads_tool_policy.tools_for(thread, self.config.raw, skills.tools()),
            additional_tools=code_mode.item if code_mode is not None else None,
            late_tool_specs=mcp_tools,
            client=ClientIdentity(originator=name, user_agent=user_agent(name, session.client_version or "")),
            project_root_markers=self.config.project_root_markers, origin=session,
            on_turn_completed=turn_notify.TurnNotifier(self.config.notify, lambda wait: self.spawn(wait, name="notify"))
            if self.config.notify else None,
        )



def _prewarm_failed(name: str) -> None:
    logger.exception("prewarming %s failed", name)
