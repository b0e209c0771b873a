"""Spawning and stopping an app-server process under test: argv, environment, config, stderr capture."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from .procs import GROUPS, NEW_GROUP, kill_group
from .schema import REPO_ROOT

STDERR_CAP = 32 * 1024 * 1024
LINE_LIMIT = 64 * 1024 * 1024


def default_argv(*extra_args: str) -> list[str]:
    return [sys.executable, "-m", "pycodex", "app-server", *extra_args]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def app_server_env(codex_home: Path, overrides: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The caller's environment without any CODEX_*/OPENAI_* value (no real key may leak in), plus test values."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    # Codex, and pycodex, refuse to start on a CODEX_HOME that does not exist: the harness makes it.
    codex_home.mkdir(parents=True, exist_ok=True)
    env["CODEX_HOME"] = str(codex_home)
    env["RUST_LOG"] = "warn"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    for key, value in (overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def write_codex_config(
    codex_home: Path, *, base_url: str, approval_policy: str = "never", sandbox_mode: str = "workspace-write"
) -> Path:
    """A config.toml in the shape the reference notes use: one mock Responses provider, no retries."""
    codex_home.mkdir(parents=True, exist_ok=True)
    path = codex_home / "config.toml"
    path.write_text(
        f'model = "mock-model"\napproval_policy = "{approval_policy}"\nsandbox_mode = "{sandbox_mode}"\n'
        f'model_provider = "mock_provider"\n\n[model_providers.mock_provider]\nname = "Mock provider"\n'
        f'base_url = "{base_url}"\nwire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n'
    )
    return path


class ServerProcess:
    """One spawned server process: collects stderr (and stdout when it is not the protocol channel)."""

    def __init__(
        self, proc: asyncio.subprocess.Process, argv: Sequence[str], *, collect_stdout: bool
    ) -> None:
        self.proc = proc
        self.argv = list(argv)
        self.stderr = bytearray()
        self.stdout = bytearray()
        self._tasks = [asyncio.create_task(self._drain(proc.stderr, self.stderr))]
        if collect_stdout:
            self._tasks.append(asyncio.create_task(self._drain(proc.stdout, self.stdout)))

    @classmethod
    async def spawn(
        cls, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, protocol_stdio: bool
    ) -> ServerProcess:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            cwd=str(cwd),
            limit=LINE_LIMIT,
            **NEW_GROUP,
        )
        GROUPS.add(proc.pid)
        return cls(proc, argv, collect_stdout=not protocol_stdio)

    @staticmethod
    async def _drain(stream: asyncio.StreamReader | None, sink: bytearray) -> None:
        while stream is not None:
            chunk = await stream.read(65536)
            if not chunk:
                return
            sink.extend(chunk)
            if len(sink) > STDERR_CAP:  # keep the tail: the end of a log explains a failure best
                del sink[: len(sink) - STDERR_CAP]

    @property
    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def wait_exit(self, timeout: float) -> int:
        return await asyncio.wait_for(self.proc.wait(), timeout)

    async def stop(self, timeout: float = 5.0, *, eof_first: bool = True) -> int:
        """Close stdin and wait (if `eof_first`); then SIGTERM this process, then SIGKILL its whole group.

        TERM goes to the server alone (its graceful stop is under test); whatever is left of its group
        afterwards (tool commands, helpers) is killed so nothing outlives the test.
        """
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        for step in ("wait", "terminate", "kill") if eof_first else ("terminate", "kill"):
            if step == "terminate" and self.proc.returncode is None:
                try:
                    self.proc.terminate()
                except ProcessLookupError:
                    pass
            elif step == "kill" and self.proc.returncode is None:
                kill_group(self.proc.pid)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout if step == "wait" else 3.0)
                break
            except TimeoutError:
                continue
        kill_group(self.proc.pid)
        GROUPS.discard(self.proc.pid)
        _done, pending = await asyncio.wait(self._tasks, timeout=3.0)
        for task in pending:  # a grandchild may still hold the pipe open
            task.cancel()
        return self.proc.returncode if self.proc.returncode is not None else -9
