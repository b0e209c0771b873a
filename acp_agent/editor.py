"""The ``editor`` execution environment: a thread's reads, writes, patches and commands through the ACP client.

When the client advertises ``fs.readTextFile``, ``fs.writeTextFile`` and ``terminal``, a session may run its
tools in the editor: files are read with ``fs/read_text_file`` (unsaved buffers included) and written with
``fs/write_text_file``, commands run in ``terminal/create`` terminals (``terminal/output``,
``terminal/wait_for_exit``, ``terminal/kill``, ``terminal/release``). It is chosen by ``[acp] environment =
"editor"`` in config.toml or per session with ``_meta: {"pycodex": {"environment": "editor"|"local"}}``.

The tools' checks do not move: approvals and patch safety are decided before the environment is called,
and the editor runs on this machine, so the thread's environment counts as local for the sandbox (a
sandboxed command's argv is wrapped as it is locally). ACP has no directory calls: listing, metadata,
``mkdir``, removal and ``realpath`` use the local filesystem. A terminal has no stdin.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.interfaces import Client
from acp.schema import ClientCapabilities, EnvVariable

from app_server.environments import EnvironmentChoice, EnvironmentHub
from app_server.tools.processes import EnvironmentSpawner
from exec_client.environment import (
    DirEntry,
    ExecProcess,
    ExecutionEnvironment,
    FileMetadata,
    OutputChunk,
    ProcessExit,
    ProcessSpec,
    QueuedProcess,
)
from exec_client.local_environment import LocalEnvironment

__all__ = ["EditorChoice", "EditorEnvironment", "EditorHub"]

logger = logging.getLogger(__name__)

#: How often a running terminal's output is fetched (ACP has no output notification).
POLL_S = 0.2
#: What a terminal keeps of its output (the client truncates from the start beyond it).
OUTPUT_BYTE_LIMIT = 1 << 20
ENVIRONMENTS = ("editor", "local")


def _signal_code(name: str | None) -> int:
    """128+N for a terminal ended by signal ``name`` (``SIGKILL`` or ``KILL``), as local processes report it."""
    if not name:
        return 1
    key = name.upper() if name.upper().startswith("SIG") else f"SIG{name.upper()}"
    try:
        return 128 + signal.Signals[key].value
    except KeyError:
        return 128 + signal.SIGKILL.value


class _Terminal(QueuedProcess):
    """One ``terminal/create`` terminal as an ``ExecProcess``: its output polled, then its exit."""

    def __init__(self, client: Client, session_id: str, terminal_id: str) -> None:
        super().__init__(terminal_id)
        self._client = client
        self._session = session_id
        self._running = True
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        seen = ""
        exit_task = asyncio.ensure_future(
            self._client.wait_for_terminal_exit(session_id=self._session, terminal_id=self.process_id))
        try:
            while True:
                await asyncio.wait({exit_task}, timeout=POLL_S)
                output = (await self._client.terminal_output(session_id=self._session, terminal_id=self.process_id)).output
                new = output[len(seen):] if output.startswith(seen) else output  # truncated at the start: all of it
                seen = output
                if new:
                    await self._events.put(OutputChunk("stdout", new.encode("utf-8")))
                if exit_task.done():
                    break
            status = exit_task.result()
            code = status.exit_code if status.exit_code is not None else _signal_code(status.signal)
            self._running = False
            await self._events.put(ProcessExit(code))
        except Exception as exc:  # the editor failed the terminal: the command ends as failed
            logger.warning("editor terminal %s failed: %s", self.process_id, exc)
            self._running = False
            await self._events.put(OutputChunk("stderr", f"editor terminal failed: {exc}\n".encode()))
            await self._events.put(ProcessExit(1))
        finally:
            exit_task.cancel()
            await self._events.put(None)
            with contextlib.suppress(Exception):
                await self._client.release_terminal(session_id=self._session, terminal_id=self.process_id)

    async def write_stdin(self, data: bytes) -> bool:
        return False  # ACP terminals take no input

    async def interrupt(self) -> None:
        await self.terminate()  # ACP has only kill

    async def terminate(self) -> bool:
        running = self._running
        if running:
            with contextlib.suppress(Exception):
                await self._client.kill_terminal(session_id=self._session, terminal_id=self.process_id)
        return running


def _not_found(exc: RequestError, path: Path) -> OSError:
    if exc.code == -32002 or "not found" in str(exc).lower() or "no such file" in str(exc).lower():
        return FileNotFoundError(errno.ENOENT, str(exc), str(path))
    return OSError(errno.EIO, f"the editor could not access {path}: {exc}", str(path))


class EditorEnvironment(ExecutionEnvironment):
    """An ``ExecutionEnvironment`` over one ACP session's ``fs/*`` and ``terminal/*`` methods."""

    def __init__(self, client: Client, session_id: str) -> None:
        self.client = client
        self.session_id = session_id
        self._local = LocalEnvironment()
        self._terminals: list[_Terminal] = []

    async def start(self, spec: ProcessSpec) -> ExecProcess:
        """Run ``spec.argv`` in an editor terminal."""
        argv = list(spec.argv)
        env = [EnvVariable(name=k, value=v) for k, v in spec.env.items()] if spec.env is not None else None
        created = await self.client.create_terminal(session_id=self.session_id, command=argv[0], args=argv[1:],
                                                    cwd=str(spec.cwd), env=env, output_byte_limit=OUTPUT_BYTE_LIMIT)
        terminal = _Terminal(self.client, self.session_id, created.terminal_id)
        self._terminals.append(terminal)
        return terminal

    async def read_file(self, path: Path) -> bytes:
        """The editor's text of ``path`` (its buffer when open)."""
        try:
            answer = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except RequestError as exc:
            raise _not_found(exc, path) from None
        return answer.content.encode("utf-8")

    async def write_file(self, path: Path, data: bytes) -> None:
        """Hand ``data`` to the editor to write (text only: ACP writes text)."""
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise OSError(errno.EINVAL, "the editor environment writes text files only", str(path)) from None
        try:
            await self.client.write_text_file(session_id=self.session_id, path=str(path), content=text)
        except RequestError as exc:
            raise _not_found(exc, path) from None

    async def list_dir(self, path: Path) -> list[DirEntry]:
        """Local: ACP has no directory listing."""
        return await self._local.list_dir(path)

    async def metadata(self, path: Path) -> FileMetadata:
        """Local: ACP has no stat."""
        return await self._local.metadata(path)

    async def create_directory(self, path: Path, *, recursive: bool = False) -> None:
        """Local: ACP has no mkdir (an editor's write creates the file only)."""
        await self._local.create_directory(path, recursive=recursive)

    async def remove(self, path: Path, *, recursive: bool = False, force: bool = False) -> None:
        """Local: ACP has no delete."""
        await self._local.remove(path, recursive=recursive, force=force)

    async def canonicalize(self, path: Path) -> Path:
        """Local: ACP has no realpath."""
        return await self._local.canonicalize(path)

    async def close(self) -> None:
        """Kill the terminals still running."""
        for terminal in self._terminals:
            await terminal.terminate()
        await self._local.close()


class EditorHub(EnvironmentHub):
    """The environment hub of one editor thread: always its ``EditorEnvironment`` (kind local: same machine)."""

    def __init__(self, environment: EditorEnvironment) -> None:
        super().__init__(EnvironmentChoice("none", "editor"), {})
        self.choice = EnvironmentChoice("local", "editor")  # the sandbox wraps argv as on this machine
        self.editor = environment
        self._editor_spawner = EnvironmentSpawner(environment)

    async def get(self) -> tuple[EnvironmentSpawner | None, str | None]:
        """The editor's spawner (it needs no connecting)."""
        return self._editor_spawner, None

    async def close(self) -> None:
        """Kill the editor terminals still running."""
        await self.editor.close()


class EditorChoice:
    """Which environment the next thread opened by the agent gets, and the hubs of editor threads."""

    def __init__(self, default: str) -> None:
        self.default = default if default in ENVIRONMENTS else "local"
        self.client: Client | None = None
        self.capabilities: ClientCapabilities | None = None
        self.hubs: list[EditorHub] = []
        self._lock = asyncio.Lock()
        self._next: str | None = None

    def supported(self) -> bool:
        """The client offers everything the environment uses."""
        caps = self.capabilities
        return bool(caps and caps.fs and caps.fs.read_text_file and caps.fs.write_text_file and caps.terminal)

    @contextlib.asynccontextmanager
    async def choosing(self, meta: Any) -> AsyncIterator[str]:
        """While opening one thread: the environment it gets (``meta`` is the session's ``_meta.pycodex``)."""
        wanted = meta.get("environment") if isinstance(meta, dict) else None
        if wanted is not None and wanted not in ENVIRONMENTS:
            raise RequestError.invalid_params({"message": f"_meta.pycodex.environment must be one of {ENVIRONMENTS}"})
        kind = wanted or self.default
        if kind == "editor" and not self.supported():
            reason = "the client does not offer fs.readTextFile, fs.writeTextFile and terminal"
            if wanted:
                raise RequestError.invalid_params({"message": f"editor environment: {reason}"})
            logger.warning("[acp] environment = \"editor\": %s; the session runs locally", reason)
            kind = "local"
        async with self._lock:  # one thread opens at a time, so the choice reaches the right one
            self._next = kind
            try:
                yield kind
            finally:
                self._next = None

    def hub_for(self, thread_id: str) -> EnvironmentHub | None:
        """``AppServer.environment_for_thread``: the editor hub for a thread opened as an editor session."""
        if self._next != "editor" or self.client is None:
            return None
        hub = EditorHub(EditorEnvironment(self.client, thread_id))
        self.hubs.append(hub)
        return hub

    async def close(self) -> None:
        """Kill what the editor threads still run."""
        for hub in self.hubs:
            await hub.close()
