"""Websocket variant of the validating test client (`app-server --listen ws://127.0.0.1:PORT`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from pycodex.json_types import JsonObj

from .appserver import ValidatingClient
from .appserver_process import ServerProcess, app_server_env, default_argv, free_port
from .schema import SchemaPair

PORT_ATTEMPTS = 3


class WsAppServerClient(ValidatingClient):
    """A websocket connection to an app-server (`--listen ws://...`): one JSON message per text frame."""

    def __init__(
        self, ws: ClientConnection, schemas: SchemaPair | None, *, label: str, owned: ServerProcess | None
    ) -> None:
        super().__init__(schemas, label=label)
        self.ws = ws
        self.close_error: ConnectionClosed | None = None
        self.process = owned
        self._reader = asyncio.create_task(self._read_frames())

    @classmethod
    async def connect(
        cls,
        url: str,
        schemas: SchemaPair | None,
        *,
        timeout: float = 15.0,
        headers: Mapping[str, str] | None = None,
        owned: ServerProcess | None = None,
        label: str = "app-server-ws",
    ) -> WsAppServerClient:
        """Connect, retrying refused connections until `timeout` (the server may still be starting)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if owned is not None and owned.returncode is not None:
                raise AssertionError(
                    f"server exited ({owned.returncode}) before listening: {owned.stderr_text[-2000:]}"
                )
            try:
                ws = await connect(
                    url, max_size=None, open_timeout=timeout, additional_headers=headers, ping_interval=None
                )
                return cls(ws, schemas, label=label, owned=owned)
            except OSError:
                if loop.time() >= deadline:
                    raise
                await asyncio.sleep(0.05)

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
        timeout: float = 15.0,
    ) -> WsAppServerClient:
        """Spawn a server with `--listen ws://127.0.0.1:<free port>` and connect to it; close() stops it.

        The free port is only free when probed: another xdist worker may take it first, so a server that
        cannot bind it is started again on another port (a few times).
        """
        base = list(argv) if argv is not None else default_argv()
        for attempt in range(PORT_ATTEMPTS):
            url = f"ws://127.0.0.1:{free_port()}"
            process = await ServerProcess.spawn(
                [*base, *extra_args, "--listen", url], env=app_server_env(codex_home, env), cwd=cwd,
                protocol_stdio=False,
            )  # fmt: skip
            try:
                return await cls.connect(url, schemas, timeout=timeout, owned=process)
            except AssertionError:
                await process.stop(2.0, eof_first=False)
                if attempt + 1 == PORT_ATTEMPTS or "in use" not in process.stderr_text:
                    raise
            except BaseException:
                await process.stop(2.0, eof_first=False)
                raise
        raise AssertionError("unreachable")

    async def _read_frames(self) -> None:
        try:
            async for frame in self.ws:
                if isinstance(frame, bytes):
                    self._violation(f"binary frame (Codex sends text frames): {frame[:100]!r}")
                    continue
                self._on_message(frame)
        except ConnectionClosed as exc:  # an abrupt close ends the stream like EOF; tests may inspect why
            self.close_error = exc
        finally:
            self._on_eof()

    def _diagnostics(self) -> str:
        if self.process is None:
            return ""
        return f"; exit code {self.process.returncode}; stderr tail:\n{self.process.stderr_text[-3000:]}"

    def _frame(self, msg: JsonObj) -> str:
        return json.dumps(msg, separators=(",", ":"))

    async def _write(self, data: bytes | str) -> None:
        await asyncio.wait_for(self.ws.send(data), 10.0)

    @property
    def stderr_text(self) -> str:
        return self.process.stderr_text if self.process else ""

    async def close(self, timeout: float = 5.0) -> int | None:
        """Close the connection, stop the owned server if any, raise pending violations."""
        if not self._closed:
            self._closed = True
            try:
                await asyncio.wait_for(self.ws.close(), timeout)
            except TimeoutError:
                pass
            try:
                await asyncio.wait_for(self._reader, 3.0)
            except TimeoutError:
                self._reader.cancel()
            if self.process is not None:
                await self.process.stop(timeout, eof_first=False)
        self.raise_violations()
        return self.process.returncode if self.process else None
