"""Boxes as Podman (or Docker) containers, driven through the engine's own CLI.

Each box is ``<engine> run -i --rm`` of the local image (``app_server.providers.image``) or a configured
one, labelled with pycodex's labels, with a hostname, filesystem, PID and IPC namespace of its own, and
the network its thread's sandbox policy allows (``none``, or the configured ``host``/``bridge``); it
reaches the relay through the relay's unix socket, mounted read-only. The interpreter, virtualenv and source tree are
mounted read-only, the thread's workspace read-write at its own path. The attached ``run`` process is kept:
its stdin carries the registration token and then stays open as the box's dead man's switch
(``box_main``), and its exit is how the provider learns that the container died.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app_server.providers import image as box_image
from app_server.providers.base import (
    BOX_RELAY_DIR,
    LABEL_BOX,
    LABEL_ENVIRONMENT,
    LABEL_OWNER,
    LABEL_THREAD,
    Box,
    BoxInfo,
    BoxLaunch,
    BoxProvider,
    BoxRequest,
    EngineUnavailable,
    ProviderError,
)

__all__ = ["PodmanProvider", "PodmanSettings"]

logger = logging.getLogger(__name__)

CLI_TIMEOUT_S = 60.0
BUILD_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 10.0
_NAME_PREFIX = "pycodex-box-"


@dataclass(frozen=True)
class PodmanSettings:
    """How to call the engine: which CLI, where its service is, and the options this host needs."""

    engine: str = "podman"  # or "docker", or a path to either
    #: A remote Podman service (``unix:///run/podman/podman.sock``); None: the local engine.
    url: str | None = None
    #: OCI runtime (``runc`` where crun refuses a hybrid cgroup layout); None: the engine's default.
    runtime: str | None = "runc"
    #: Explicit ulimits (the engine's defaults may exceed the host's hard limits).
    ulimits: tuple[str, ...] = ("nofile=1024:1024", "nproc=1024:1024")
    extra_args: tuple[str, ...] = field(default=())

    @property
    def is_docker(self) -> bool:
        """Docker's CLI, which lacks a few Podman options (``--uts private`` with the host network)."""
        return Path(self.engine).name.startswith("docker")


class PodmanProvider(BoxProvider):
    """Starts, watches, lists and removes pycodex's containers."""

    def __init__(self, settings: PodmanSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or PodmanSettings()
        self.engine = Path(self.settings.engine).name
        self._image_lock = asyncio.Lock()
        self._built: str | None = None

    # -- the engine CLI ---------------------------------------------------------------------------
    def _base(self) -> list[str]:
        binary = shutil.which(self.settings.engine)
        if binary is None:
            raise EngineUnavailable(f"{self.engine} is not installed: no `{self.settings.engine}` on PATH")
        if self.settings.url and not self.settings.is_docker:
            return [binary, "--remote", "--url", self.settings.url]
        if self.settings.url:
            return [binary, "--host", self.settings.url]
        return [binary]

    async def _cli(self, *args: str, timeout: float = CLI_TIMEOUT_S, stdin: bytes | None = None) -> str:
        argv = [*self._base(), *args]
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise ProviderError(f"`{self.engine} {args[0]}` did not finish within {timeout:.0f}s") from None
        if proc.returncode != 0:  # the engine's last line says it best ("Error: unable to connect ...")
            lines = [line for line in err.decode(errors="replace").splitlines() if line.strip()]
            raise ProviderError(f"`{self.engine} {args[0]}` failed: {lines[-1].strip() if lines else proc.returncode}")
        return out.decode(errors="replace")

    async def check(self) -> None:
        """Raise ``EngineUnavailable`` unless the engine answers (``info``), saying what it said."""
        try:
            await self._cli("info", "--format", "{{json .}}", timeout=30)
        except EngineUnavailable:
            raise
        except ProviderError as exc:
            where = f" at {self.settings.url}" if self.settings.url else ""
            raise EngineUnavailable(f"{self.engine}{where} is not running or not usable: {exc}") from None

    # -- the image --------------------------------------------------------------------------------
    async def ensure_image(self) -> str:
        """The local box image's tag, building and importing it first when its content key is new."""
        async with self._image_lock:
            if self._built is not None:
                return self._built
            runtime = box_image.host_runtime()
            tag = f"{box_image.IMAGE_REPOSITORY}:{await asyncio.to_thread(box_image.image_key, runtime)}"
            try:
                await self._cli("image", "exists", tag)
            except ProviderError:
                await self._import(runtime, tag)
            self._built = tag
            return tag

    async def _import(self, runtime: box_image.HostRuntime, tag: str) -> None:
        with tempfile.TemporaryDirectory(prefix="pycodex-box-image-") as tmp:
            tar = await asyncio.to_thread(box_image.build_rootfs_tar, runtime, Path(tmp) / "rootfs.tar")
            logger.info("importing the box image %s (%d bytes)", tag, tar.stat().st_size)
            await self._cli("import", str(tar), tag, timeout=BUILD_TIMEOUT_S)

    # -- boxes ------------------------------------------------------------------------------------
    def _run_args(self, request: BoxRequest, launch: BoxLaunch, box_id: str, image: str) -> list[str]:
        runtime = box_image.host_runtime()
        args = ["run", "-i", "--rm", "--name", _NAME_PREFIX + box_id, "--network", request.network]
        if self.settings.runtime and not self.settings.is_docker:
            args += ["--runtime", self.settings.runtime]
        for ulimit in self.settings.ulimits:
            args += ["--ulimit", ulimit]
        if request.network == "host" and not self.settings.is_docker:
            args += ["--uts", "private"]  # the host network, but a hostname of its own
        if not (request.network == "host" and self.settings.is_docker):
            args += ["--hostname", box_id]
        labels = {LABEL_OWNER: launch.owner, LABEL_BOX: box_id, LABEL_ENVIRONMENT: launch.environment_name,
                  LABEL_THREAD: launch.thread_id}
        for key, value in labels.items():
            args += ["--label", f"{key}={value}"]
        if request.cpus is not None:
            args += ["--cpus", str(request.cpus)]
        if request.memory is not None:
            args += ["--memory", request.memory]
        if request.pids is not None:
            args += ["--pids-limit", str(request.pids)]
        mounts = list(runtime.mounts()) + list(request.mounts)
        for mount in mounts:
            args += ["-v", f"{mount.source}:{mount.target}:{'ro' if mount.read_only else 'rw'}"]
        if launch.relay_dir is not None:  # the relay's unix socket: reachable with no network at all
            args += ["-v", f"{launch.relay_dir}:{BOX_RELAY_DIR}:ro"]
        if request.workspace is not None:
            mode = "ro" if request.workspace_read_only else "rw"
            args += ["-v", f"{request.workspace}:{request.workspace}:{mode}", "-w", str(request.workspace)]
        env = {"PYTHONPATH": str(runtime.source), "HOME": "/root", "PATH": "/usr/local/bin:/usr/bin:/bin"}
        env.update(dict(request.env))
        for key, value in env.items():
            args += ["-e", f"{key}={value}"]
        args += [*self.settings.extra_args, image, str(runtime.python),
                 str(runtime.source / "app_server" / "providers" / "box_main.py"),
                 launch.registry_url, launch.environment_id]  # fmt: skip
        return args

    async def start(self, request: BoxRequest, launch: BoxLaunch) -> Box:
        """Run the container attached, hand it its token on stdin, and watch it until it exits."""
        if request.network == "none" and launch.relay_dir is None:
            raise ProviderError(f"a box without a network cannot reach the relay at {launch.registry_url} "
                                "(the thread's sandbox gives no network access; the local relay, without "
                                "relay_url, is reached through its unix socket)")
        image = request.image or await self.ensure_image()
        box_id = launch.environment_id
        argv = [*self._base(), *self._run_args(request, launch, box_id, image)]
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert proc.stdin is not None
        proc.stdin.write(launch.token.encode() + b"\n")
        with contextlib.suppress(ConnectionError):
            await proc.stdin.drain()
        box = Box(box_id, launch, handle=proc)
        self._watch_in_background(self._watch(box, proc), f"box-watch-{box_id}")
        return box

    async def _watch(self, box: Box, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        tail = b""
        while chunk := await proc.stderr.read(4096):
            tail = (tail + chunk)[-2000:]
        code = await proc.wait()
        last = tail.decode(errors="replace").strip().splitlines()[-3:]
        box.why = f"the {self.engine} container {_NAME_PREFIX}{box.box_id} exited ({code})" + (
            f": {' / '.join(last)}" if last else "")
        box.exited.set()

    async def stop(self, box: Box) -> None:
        """Close the box's stdin (its exec-server stops), then remove the container, each bounded."""
        proc = box.handle
        if isinstance(proc, asyncio.subprocess.Process) and proc.stdin is not None:
            proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(box.exited.wait(), 2)
        if not box.exited.is_set():
            await self.remove(_NAME_PREFIX + box.box_id)
        if isinstance(proc, asyncio.subprocess.Process) and proc.returncode is None:
            try:
                await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_S)
            except TimeoutError:
                proc.kill()
                await proc.wait()

    async def kill(self, box: Box) -> None:
        """Kill the container at once, as a crash would (tests and the reaper's last resort)."""
        with contextlib.suppress(ProviderError):
            await self._cli("kill", _NAME_PREFIX + box.box_id)

    async def list_boxes(self) -> list[BoxInfo]:
        """Every container carrying the owner label (running or not)."""
        out = await self._cli("ps", "-a", "--filter", f"label={LABEL_OWNER}", "--format", "json")
        return _parse_ps(out)

    async def remove(self, name: str) -> None:
        """``rm -f`` the container ``name`` (gone already is fine)."""
        try:
            await self._cli("rm", "-f", "-t", "0", name, timeout=STOP_TIMEOUT_S * 3)
        except ProviderError as exc:
            if "no such container" not in str(exc).lower():
                logger.warning("removing container %s failed: %s", name, exc)


def _parse_ps(out: str) -> list[BoxInfo]:
    """``ps --format json`` of Podman (one JSON array) or Docker (one object per line)."""
    text = out.strip()
    if not text:
        return []
    rows: Sequence[object]
    if text.startswith("["):
        rows = json.loads(text)
    else:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    boxes: list[BoxInfo] = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        names = row.get("Names")
        name = names[0] if isinstance(names, list) and names else str(names or "")
        labels = row.get("Labels") or {}
        if isinstance(labels, str):  # docker: "k=v,k=v"
            labels = dict(part.partition("=")[::2] for part in labels.split(",") if part)
        boxes.append(BoxInfo(name, {str(k): str(v) for k, v in labels.items()}))
    return boxes
