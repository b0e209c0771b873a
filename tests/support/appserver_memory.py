"""The app-server under test in the test's own event loop, over the in-memory edge (no process).

Same API as the stdio `AppServerClient`: every message is validated against the Codex schema; `stderr_text`
is what the server's loggers wrote while serving this client, formatted as the process would print it.
The server gets its environment and working directory as arguments (`AppServer(environ=, cwd=)`), so
tests never touch `os.environ` or the process's cwd and several servers can share one interpreter.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from app_server.app import AppServer
from pycodex.log_context import TurnContextFilter
from pycodex.logging_setup import JsonFormatter, TextFormatter, log_level
from pycodex.transport import memory_pair, serve_transport

from .appserver import JsonObj, ValidatingClient
from .appserver_process import app_server_env
from .schema import SchemaPair

__all__ = ["MemoryAppServerClient", "UnsupportedInMemory"]

#: Which client's server a log record came from: set in the server task's context, inherited by every task
#: and thread the server starts from there.
_SERVING: contextvars.ContextVar[object | None] = contextvars.ContextVar("pycodex_test_serving", default=None)


class UnsupportedInMemory(Exception):
    """Arguments only a real process understands (`--listen`, another binary): use the subprocess mode."""


def _parse_args(extra_args: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="app-server", add_help=False, exit_on_error=False)
    parser.add_argument("-c", "--config", action="append", default=[])
    parser.add_argument("--strict-config", action="store_true")
    args, unknown = parser.parse_known_args(list(extra_args))
    if unknown:
        raise UnsupportedInMemory(f"app-server arguments the in-memory harness does not take: {unknown}")
    return args


class _LogCapture(logging.Handler):
    """Collects the formatted records logged inside one server's context."""

    def __init__(self, owner: object, level: int, *, json_format: bool = False) -> None:
        super().__init__(level)
        self.owner = owner
        self.lines: list[str] = []
        self.root_level = logging.getLogger().level  # restored when the client closes
        self.setFormatter(JsonFormatter() if json_format else TextFormatter())  # as configure_logging does
        self.addFilter(TurnContextFilter())

    def filter(self, record: logging.LogRecord) -> bool:
        return _SERVING.get() is self.owner and super().filter(record)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


class MemoryAppServerClient(ValidatingClient):
    """One `AppServer` and one connection to it over `memory_pair`, all in the running event loop."""

    def __init__(
        self, app: AppServer, schemas: SchemaPair | None, *, label: str, log_capture: _LogCapture
    ) -> None:
        super().__init__(schemas, label=label)
        self.app = app
        self.process = None  # no process: tests that need one ask for the subprocess mode
        self._log = log_capture
        self._end, server_end = memory_pair()
        self._partial = ""
        context = contextvars.copy_context()
        context.run(_SERVING.set, log_capture.owner)
        self._server = asyncio.get_running_loop().create_task(
            serve_transport(app.connection, server_end), name=f"{label}-serve", context=context
        )
        self._reader = asyncio.create_task(self._read(), name=f"{label}-read")
        self._exit_code: int | None = None

    @classmethod
    async def spawn(
        cls,
        schemas: SchemaPair | None,
        *,
        codex_home: Path,
        cwd: Path,
        argv: Sequence[str] | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str | None] | None = None,
        label: str = "app-server",
    ) -> MemoryAppServerClient:
        """Build the server as `pycodex app-server` would (same environment rules as the subprocess)."""
        if argv is not None:
            raise UnsupportedInMemory(f"the in-memory harness runs our AppServer, not {list(argv)[:2]}")
        args = _parse_args(extra_args)
        environ = app_server_env(codex_home, env)
        owner = object()
        json_format = environ.get("PYCODEX_LOG_FORMAT", "").strip().lower() == "json"
        capture = _LogCapture(owner, log_level(environ), json_format=json_format)
        root = logging.getLogger()
        root.addHandler(capture)
        if root.level > capture.level:  # records below the root's level never reach a handler
            root.setLevel(capture.level)
        token = _SERVING.set(owner)  # constructor logs (config warnings) belong to this client too
        try:
            app = AppServer(
                codex_home=codex_home,
                config_overrides=args.config,
                strict_config=args.strict_config,
                environ=environ,
                cwd=cwd,
            )
        except BaseException:
            root.removeHandler(capture)
            raise
        finally:
            _SERVING.reset(token)
        return cls(app, schemas, label=label, log_capture=capture)

    async def _read(self) -> None:
        try:
            while (raw := await self._end.recv()) is not None:
                text = raw.decode("utf-8", "replace")
                self._on_message(text.removesuffix("\n"))
        finally:
            self._on_eof()

    def _frame(self, msg: JsonObj) -> str:
        return json.dumps(msg, separators=(",", ":")) + "\n"

    async def _write(self, data: bytes | str) -> None:
        """Split what a stdio client would write into the lines the stdio edge would read."""
        text = self._partial + (data.decode("utf-8", "replace") if isinstance(data, bytes) else data)
        *lines, self._partial = text.split("\n")
        for line in lines:
            try:
                await asyncio.wait_for(self._end.send(line.encode()), 10.0)
            except ConnectionError as exc:
                raise AssertionError(f"[{self.label}] cannot write to the server ({exc!r})") from None

    def _diagnostics(self) -> str:
        return f"; server log tail:\n{self.stderr_text[-3000:]}"

    @property
    def stderr_text(self) -> str:
        return "".join(line + "\n" for line in self._log.lines)

    async def close_stdin(self) -> None:
        """End the client's side, as stdin EOF does for the process."""
        await self._end.close()

    async def wait_exit(self, timeout: float = 10.0) -> int:
        """The connection ended and the server shut down: 0, as `pycodex app-server` exits after EOF."""
        await asyncio.wait_for(asyncio.shield(self._server), timeout)
        await self._shutdown()
        return 0

    async def _shutdown(self) -> None:
        if self._exit_code is None:
            self._exit_code = 0
            context = contextvars.copy_context()
            context.run(_SERVING.set, self._log.owner)
            await asyncio.get_running_loop().create_task(self.app.shutdown(), context=context)

    async def close(self, timeout: float = 5.0) -> int:
        """Close the connection, shut the server down, stop capturing its log, raise pending violations."""
        if not self._closed:
            self._closed = True
            try:
                await self._end.close()
                await asyncio.wait_for(asyncio.gather(self._server, self._reader), timeout)
                await asyncio.wait_for(self._shutdown(), timeout)
            finally:
                for task in (self._server, self._reader):
                    task.cancel()
                root = logging.getLogger()
                root.removeHandler(self._log)
                root.setLevel(self._log.root_level)
        self.raise_violations()
        return 0
