"""Which execution environment the app-server's tools use, chosen as Codex chooses it.

Order: the Noise relay variables (``CODEX_EXEC_SERVER_NOISE_REGISTRY_URL`` with ``_ENVIRONMENT_ID`` and
``_AUTH_TOKEN``) select a remote executor behind the relay; else ``CODEX_HOME/environments.toml`` when
present; else ``CODEX_EXEC_SERVER_URL``: unset or empty = the in-process local environment, ``none`` =
no environment, ``ws://…`` = an exec-server over WebSocket (environment id ``remote``). An
environments.toml table with a ``provider`` (``[environments.NAME] provider = "podman"``) gives every thread
a box of its own (``app_server.providers``): obtained at thread start, released when the thread unloads.

A remote environment that cannot be reached does not stop a thread or a turn: the model is told the
environment failed and ``exec_command`` answers that no environment is usable. The connection is
retried on the next use.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from app_server.lazy import LazyModule
from app_server.threads.prompt import EnvironmentStatus
from app_server.tools.processes import EnvironmentSpawner
from app_server.tools.sandbox import Sandbox, make_sandbox
from app_server.tools.shell_snapshot import ShellSnapshot
from exec_client.environment import ExecServerEnvironment, ExecutionEnvironment
from exec_client.local_environment import LocalEnvironment
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

if TYPE_CHECKING:
    from app_server import providers
    from app_server.providers import BoxPool, Lease
    from exec_client import client as exec_client_client
    from exec_client import remote as exec_client_remote
    from exec_client.remote import RemoteEnvironmentConnector
else:
    exec_client_client = LazyModule("exec_client.client")
    exec_client_remote = LazyModule("exec_client.remote")
    providers = LazyModule("app_server.providers")

__all__ = ["BoxPolicy", "EnvironmentChoice", "EnvironmentHub", "EnvironmentsConfigError", "ThreadEnvironment", "choose_environment"]

logger = logging.getLogger(__name__)


URL_ENV_VAR = "CODEX_EXEC_SERVER_URL"
#: The client name Codex's app-server gives its exec-server sessions.
CLIENT_NAME = "codex-environment"
CONNECT_TIMEOUT_S = 5.0
#: How long a lost box's connection waits for the engine to report the container's exit (and why).
BOX_EXIT_WAIT_S = 5.0


class BoxPolicy(Protocol):
    """What of a thread's settings decides its box (``threads.contracts.ThreadSettings`` is one)."""

    cwd: Path
    sandbox_mode: str
    network_access: bool


class EnvironmentsConfigError(Exception):
    """environments.toml could not be used; the message names the file and the problem."""


@dataclass(frozen=True)
class EnvironmentChoice:
    """Which default execution environment the process uses (local, none, or a remote exec-server)."""

    kind: str  # local | none | websocket | noise | provider
    environment_id: str | None
    url: str | None = None
    #: A provided environment's ``[environments.NAME]`` table (kind ``provider``).
    table: JsonObj | None = None


def _from_toml(path: Path) -> EnvironmentChoice:
    try:
        table = tomllib.loads(path.read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise EnvironmentsConfigError(f"{path}: {exc}") from None
    envs: JsonObj = {}
    raw = table.get("environments", {})
    if isinstance(raw, dict):
        envs = {k: v for k, v in raw.items() if isinstance(v, dict)}
    elif isinstance(raw, list):
        envs = {str(e.get("id")): e for e in raw if isinstance(e, dict) and e.get("id")}
    default = table.get("default") or table.get("default_environment") or (next(iter(envs), None))
    if default in (None, "local"):
        return EnvironmentChoice("local", "local")
    if default == "none":
        return EnvironmentChoice("none", None)
    spec = envs.get(str(default))
    if spec is None:
        raise EnvironmentsConfigError(f"{path}: default environment `{default}` is not defined")
    if "provider" in spec:
        return EnvironmentChoice("provider", str(default), table=spec)
    url = spec.get("url")
    if not isinstance(url, str) or not url:
        raise EnvironmentsConfigError(f"{path}: environment `{default}`: url cannot be empty")
    return EnvironmentChoice("websocket", str(default), url)


def choose_environment(env: Mapping[str, str], codex_home: Path) -> EnvironmentChoice:
    """The default environment: Noise registry, else environments.toml, else the URL variable, else local."""
    if env.get("CODEX_EXEC_SERVER_NOISE_REGISTRY_URL"):
        return EnvironmentChoice("noise", "remote")
    toml_path = codex_home / "environments.toml"
    if toml_path.exists():
        return _from_toml(toml_path)
    url = env.get(URL_ENV_VAR, "").strip()
    if not url:
        return EnvironmentChoice("local", "local")
    if url == "none":
        return EnvironmentChoice("none", None)
    return EnvironmentChoice("websocket", "remote", url)


class EnvironmentHub:
    """Owns the default environment of the process and its (re)connection."""

    def __init__(self, choice: EnvironmentChoice, env: Mapping[str, str]) -> None:
        self.choice = choice
        self._env = dict(env)
        self._spawner: EnvironmentSpawner | None = None
        self._environment: ExecServerEnvironment | LocalEnvironment | None = None
        self._lock = asyncio.Lock()
        #: One Noise connector per process: a stable key, resumable sessions.
        self._connector: RemoteEnvironmentConnector | None = None
        #: A provided environment's boxes, one per thread (kind ``provider``).
        self.pool: BoxPool | None = None
        if choice.kind == "local":
            self._environment = LocalEnvironment()
            self._spawner = EnvironmentSpawner(self._environment)
        if choice.kind == "provider":
            assert choice.table is not None and choice.environment_id is not None
            try:
                self.pool = providers.make_pool(choice.environment_id, choice.table, env)
            except providers.ProviderConfigError as exc:
                raise EnvironmentsConfigError(f"environments.toml: {exc}") from None
            with contextlib.suppress(RuntimeError):  # no loop yet: the first thread starts the pool
                asyncio.get_running_loop()
                self.pool.start()  # warm boxes get ready while the server waits for its first thread

    @property
    def environment_id(self) -> str | None:
        """The id threads show for the default environment (None when there is none)."""
        return self.choice.environment_id

    def _alive(self) -> bool:
        environment = self._environment
        if isinstance(environment, ExecServerEnvironment):
            return not environment.client.closed.is_set()
        return environment is not None

    async def lease(self, thread: ThreadEnvironment) -> Lease:
        """A ready box for ``thread`` (a provided environment); raises ``ProviderError`` saying why not."""
        assert self.pool is not None
        return await self.pool.acquire(thread.thread_id, thread, thread.cwd, read_only=thread.workspace_read_only,
                                       network=thread.network_allowed)

    def fits(self, thread: ThreadEnvironment, lease: Lease) -> bool:
        """Whether ``thread``'s box still suits its policy and workspace (a turn may have changed them)."""
        assert self.pool is not None
        return self.pool.fits(lease, thread.cwd, read_only=thread.workspace_read_only,
                              network=thread.network_allowed)

    async def get(self) -> tuple[EnvironmentSpawner | None, str | None]:
        """The spawner to use now, or None with the reason the environment is unusable."""
        if self.choice.kind == "none":
            return None, None
        async with self._lock:
            if self._spawner is not None and self._alive():
                return self._spawner, None
            try:
                environment = await asyncio.wait_for(self._connect(), CONNECT_TIMEOUT_S)
            except Exception as exc:
                logger.warning("execution environment %s is unavailable: %s", self.environment_id, exc)
                return None, str(exc) or type(exc).__name__
            self._environment = environment
            self._spawner = EnvironmentSpawner(environment)
            return self._spawner, None

    async def _connect(self) -> ExecServerEnvironment:
        if self.choice.kind == "websocket":
            assert self.choice.url is not None
            client = await exec_client_client.ExecServerClient.connect_websocket(self.choice.url, connect_timeout=CONNECT_TIMEOUT_S)
            await client.initialize(CLIENT_NAME)
            return ExecServerEnvironment(client)
        if self._connector is None:
            config = exec_client_remote.NoiseRemoteConfig.from_env(self._env)
            if config is None:
                raise EnvironmentsConfigError("the Noise relay environment variables are incomplete")
            self._connector = exec_client_remote.RemoteEnvironmentConnector(config)
        remote_client = await self._connector.open_client(CLIENT_NAME)
        return ExecServerEnvironment(remote_client)

    async def close(self) -> None:
        """Close the remote connection and the environment, release every box (the process is stopping)."""
        if self.pool is not None:
            await self.pool.close()
        if self._connector is not None:
            try:
                await asyncio.wait_for(self._connector.aclose(), 2)
            except Exception as exc:
                logger.info("closing the relay connector failed: %s", exc)
        if self._environment is not None:
            try:
                await asyncio.wait_for(self._environment.close(), 2)
            except Exception as exc:
                logger.info("closing the execution environment failed: %s", exc)


class ThreadEnvironment:
    """Where one thread's tools run, and how: the one place that decides it.

    Commands go to the process's default environment (``EnvironmentHub``); a remote one that failed is
    reconnected on the next use. A local environment adds the thread's filesystem sandbox and its
    login-shell snapshot; a remote executor applies its own policy, so neither applies there.
    """

    def __init__(self, hub: EnvironmentHub, *, snapshot: ShellSnapshot | None, thread_id: str = "",
                 settings: BoxPolicy | None = None) -> None:
        self._hub = hub
        #: The thread and its live settings a provided environment's box is made for (its label; its
        #: workspace mount, read-only under the ``read-only`` sandbox; its network, see ``network_allowed``).
        self.thread_id, self._settings = thread_id, settings
        self._lease: Lease | None = None
        self._box_lock = asyncio.Lock()  # parallel tool calls after a box died start one new box, not two
        self.id = hub.environment_id or "local"
        #: False when the server runs with no environment at all (``CODEX_EXEC_SERVER_URL=none``).
        self.available = hub.choice.kind != "none"
        self.is_local = hub.choice.kind == "local"
        self.snapshot = snapshot
        self._spawner: EnvironmentSpawner | None = None
        #: Why the environment was unusable at the last attempt (told to the model), or None.
        self.error: str | None = None
        #: thread/start asked for no environment (``environments: []``, the TUI's title threads): no tools.
        self.disabled = False

    @property
    def cwd(self) -> Path | None:
        """The thread's working directory now (a provided environment's box mounts it)."""
        return self._settings.cwd if self._settings is not None else None

    @property
    def sandbox_mode(self) -> str:
        """The thread's sandbox mode now."""
        return self._settings.sandbox_mode if self._settings is not None else "workspace-write"

    @property
    def workspace_read_only(self) -> bool:
        """Whether the thread's box mounts its workspace read-only (the ``read-only`` sandbox)."""
        return self.sandbox_mode == "read-only"

    @property
    def network_allowed(self) -> bool:
        """Whether the thread's policy gives its commands the network: full access, or workspace-write
        with network access; read-only and plain workspace-write do not."""
        mode = self.sandbox_mode
        return mode == "danger-full-access" or (
            mode == "workspace-write" and self._settings is not None and self._settings.network_access)

    def disable(self) -> None:
        """Give the thread no environment at all, whatever the server's default is."""
        self.disabled, self.available, self._spawner = True, False, None
        if self._lease is not None and self._hub.pool is not None:  # its box serves no one now
            lease, self._lease = self._lease, None
            self._hub.pool.release_soon(lease)

    async def refresh(self) -> None:
        """Ask the hub again for the environment's spawner (it may have reconnected).

        A provided environment gets its box here, at thread start: a box that cannot be had (the engine
        is not running, the image is missing) fails the request with the reason.
        """
        if self._hub.pool is None:
            self._spawner, self.error = await self._hub.get()
            return
        try:
            await self._new_box()
        except providers.ProviderError as exc:
            raise InvalidRequest(f"environment `{self.id}` is unavailable: {exc}") from None

    async def _new_box(self) -> None:
        async with self._box_lock:
            lease = self._lease
            if lease is not None and not lease.dead and self._spawner is not None and self._hub.fits(self, lease):
                return  # another call got one while this one waited
            await self.close()
            self._lease = await self._hub.lease(self)
            self._spawner, self.error = EnvironmentSpawner(self._lease.environment), None

    async def spawner(self) -> EnvironmentSpawner | None:
        """The spawner to run a command with now (reconnecting if needed), or None when there is none."""
        if self._hub.pool is not None and self.available:
            if self._lease is None or self._lease.dead or not self._hub.fits(self, self._lease):
                try:  # the box died, was never had, or a turn changed the policy: the thread gets a new one
                    await self._new_box()
                except providers.ProviderError as exc:
                    logger.warning("environment %s: no box for thread %s: %s", self.id, self.thread_id, exc)
                    self._spawner, self.error = None, str(exc)
            return self._spawner
        if self._spawner is None and self.available:
            await self.refresh()
        return self._spawner

    async def lost_error(self) -> JsonObj | None:
        """The ``TurnError`` ending a turn whose command the thread's box took with it, or None.

        Only a provided environment's box counts (a local or plain exec-server loss is told to the model
        and the turn goes on). The connection may close a moment before the engine reports the exit: that
        is waited for, briefly. The next command gets a new box (``spawner``).
        """
        lease = self._lease
        if lease is None or lease.released or not lease.dead:
            return None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(lease.box.exited.wait(), BOX_EXIT_WAIT_S)
        why = lease.box.why if lease.box.exited.is_set() else "its connection through the relay closed"
        return {"message": f"environment `{self.id}` was lost mid-command: {why}", "codexErrorInfo": "other",
                "additionalDetails": None, "misalignment": None}

    async def close(self) -> None:
        """Release the thread's box, if it has one (the thread unloads, or its box died)."""
        lease, self._lease, self._spawner = self._lease, None, None
        if lease is not None and self._hub.pool is not None:
            await self._hub.pool.release(lease)

    @property
    def execution_environment(self) -> ExecutionEnvironment | None:
        """The environment behind the current spawner (file methods for skills), if connected."""
        return self._spawner.environment if self._spawner is not None else None

    def sandbox(self, mode: str, cwd: Path, writable_roots: list[str]) -> Sandbox | None:
        """A local command's sandbox under ``mode`` (None remotely, for full access, without Landlock)."""
        return make_sandbox(mode, cwd, writable_roots) if self.is_local else None

    async def command_argv(self, argv: list[str], *, shell: str, cmd: str, login: bool) -> list[str]:
        """``argv``, or the cheaper form that sources the login-shell snapshot when one is ready."""
        if self.snapshot is not None and shell == self.snapshot.shell:
            return await self.snapshot.argv_for(cmd, login=login) or argv
        return argv

    def status(self) -> EnvironmentStatus:
        """How the environment looks to the model: none, local, or remote (with why it failed)."""
        if not self.available:
            return EnvironmentStatus(kind="none")
        return EnvironmentStatus(kind="local" if self.id == "local" else "remote", failed_reason=self.error)

    def wire(self, cwd: Path) -> list[JsonObj]:
        """The thread's ``environments`` list on the wire."""
        if not self.available:
            return []
        return [{"environmentId": self.id, "cwd": str(cwd), "runtimeWorkspaceRoots": [str(cwd)]}]
