"""The environment provider interface: what a thread asks for, what a provider hands back, how it fails.

A *box* is one isolated place a thread's tools run in (a Podman/Docker container, a Kubernetes pod). A
provider starts a box that runs ``pycodex exec-server --remote`` against a relay with a token minted for
that box alone, tells when the box died, stops it, and lists the boxes it owns (by label) so a reaper can
remove the ones whose thread is gone. It knows nothing of threads or of the relay's protocol: the pool
(``app_server.providers.pool``) does that.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BOX_RELAY_DIR",
    "LABEL_BOX",
    "LABEL_ENVIRONMENT",
    "LABEL_OWNER",
    "LABEL_THREAD",
    "Box",
    "BoxInfo",
    "BoxLaunch",
    "BoxProvider",
    "BoxRequest",
    "EngineUnavailable",
    "Mount",
    "ProviderError",
]

#: Labels every box carries, so reaping and test teardown find exactly ours and never anyone else's.
LABEL_OWNER = "pycodex.owner"  # "<host>:<pid>" of the app-server that started it
#: The thread a cold box was started for ("" for a warm-pool box: engines cannot relabel a running
#: container, so the pool's own lease table says which thread took it).
LABEL_THREAD = "pycodex.thread"
LABEL_ENVIRONMENT = "pycodex.environment"  # the configured environment name (`[environments.NAME]`)
LABEL_BOX = "pycodex.box"  # the box's own id, which is also its relay environment id
#: Where a box sees the directory of the relay's unix socket (``BoxLaunch.relay_dir``), read-only.
BOX_RELAY_DIR = Path("/run/pycodex-relay")


class ProviderError(Exception):
    """A box could not be started or used; the message says which engine and why."""


class EngineUnavailable(ProviderError):
    """The engine itself is not there or not running (no binary, no daemon, no cluster)."""


@dataclass(frozen=True)
class Mount:
    """A host path seen inside the box (read-only unless said otherwise)."""

    source: Path
    target: Path
    read_only: bool = True


@dataclass(frozen=True)
class BoxRequest:
    """What a thread's environment asks for: image, resources, mounts and variables."""

    image: str | None = None  # None: the provider's own recipe (podman: the local pycodex image)
    cpus: float | None = None
    memory: str | None = None  # engine syntax: "512m", "2g"
    pids: int | None = None
    mounts: tuple[Mount, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    #: The thread's workspace, mounted read-write at the same path (None: the box has none).
    workspace: Path | None = None
    #: The thread's sandbox is read-only: its workspace is mounted read-only.
    workspace_read_only: bool = False
    #: "host": share the host's network; "bridge": the engine's own network; "none": no network at all
    #: (the relay's unix socket is still mounted). The pool picks it from the thread's sandbox policy.
    network: str = "host"


@dataclass(frozen=True)
class BoxLaunch:
    """How the box reaches the relay: registry URL, its environment id and its own token."""

    registry_url: str
    environment_id: str
    token: str = field(repr=False)
    environment_name: str
    owner: str
    #: The thread a cold box is started for ("" for a warm-pool box).
    thread_id: str = ""
    #: The host directory holding the relay's unix socket, mounted at ``BOX_RELAY_DIR`` (``registry_url``
    #: is then ``unix://…`` inside it): how a box without a network reaches the relay. None: a relay
    #: elsewhere, reached over the box's network.
    relay_dir: Path | None = None


@dataclass
class Box:
    """A started box. ``exited`` is set when it stops, whoever stopped it; ``why`` says why if known."""

    box_id: str
    launch: BoxLaunch
    exited: asyncio.Event = field(default_factory=asyncio.Event)
    why: str | None = None
    #: The provider's own handle (a process, a pod name); opaque to everyone else.
    handle: object = None

    @property
    def environment_id(self) -> str:
        """The relay environment id the box's exec-server registered as."""
        return self.launch.environment_id


@dataclass(frozen=True)
class BoxInfo:
    """A box as the engine lists it: its name and labels."""

    name: str
    labels: dict[str, str]


class BoxProvider(ABC):
    """An engine that starts, watches, stops and lists boxes."""

    #: Shown in messages ("podman", "docker", "kubernetes").
    engine: str = "engine"

    def __init__(self) -> None:
        self._watchers: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks

    def _watch_in_background(self, watch: Coroutine[object, object, None], name: str) -> None:
        """Run a box's watcher (which sets its ``exited``) as a task the provider holds until it ends."""
        watcher = asyncio.get_running_loop().create_task(watch, name=name)
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)

    @abstractmethod
    async def check(self) -> None:
        """Raise ``EngineUnavailable`` (saying what is missing) unless the engine can start a box."""

    @abstractmethod
    async def start(self, request: BoxRequest, launch: BoxLaunch) -> Box:
        """Start a box running the exec-server for ``launch``; returns once the engine started it."""

    @abstractmethod
    async def stop(self, box: Box) -> None:
        """Stop and remove ``box`` (bounded; a box already gone is fine)."""

    @abstractmethod
    async def list_boxes(self) -> list[BoxInfo]:
        """Every box carrying pycodex's owner label, whoever owns it."""

    @abstractmethod
    async def remove(self, name: str) -> None:
        """Remove the listed box ``name`` (the reaper's way to stop a box it holds no handle of)."""
