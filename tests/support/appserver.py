"""Asyncio test client for an app-server under test (ours or the reference Codex) over stdio.

Every server->client message is checked as it arrives (one JSON object per line, then the Codex schema);
violations are recorded and raised at the next client call or at close, so no test can ignore them.
The transport-independent part (`ValidatingClient`) is shared with the websocket client in `appserver_ws`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pycodex.json_types import JsonObj

from .appserver_process import ServerProcess, app_server_env, default_argv
from .schema import SchemaPair, SchemaValidator

T = TypeVar("T")
OMIT: Any = type("_Omit", (), {"__repr__": lambda self: "OMIT"})()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class ProtocolViolation(AssertionError):
    """The server sent something a Codex 0.169.0 client would not accept."""


@dataclass(frozen=True)
class Arrival:
    seq: int
    t: float  # seconds since the client started
    kind: str  # response | error | notification | server_request | invalid
    msg: JsonObj | None
    raw: str


class ValidatingClient:
    """Transport-independent part: ids, routing, schema validation, waiting with deadlines."""

    def __init__(self, schemas: SchemaPair | None, *, label: str) -> None:
        self.label = label
        self.schemas = schemas
        self.validator: SchemaValidator | None = schemas.stable if schemas else None
        self.messages: list[JsonObj] = []
        self.arrivals: list[Arrival] = []
        self.violations: list[str] = []
        self.request_methods: dict[int | str, str] = {}
        self.server_requests: dict[int, JsonObj] = {}
        self._reported = 0
        self._inbox: list[JsonObj] = []
        self._awaited: dict[int | str, JsonObj | None] = {}
        self._next_id = 1
        self._waiters: set[asyncio.Event] = set()
        self.sent: list[tuple[float, str]] = []  # (seconds since start, text) of everything written
        self._t0 = time.monotonic()
        self._eof = False
        self._closed = False

    # -- transport hooks -----------------------------------------------------------------------------------

    async def _write(self, data: bytes | str) -> None:
        raise NotImplementedError

    def _frame(self, msg: JsonObj) -> str:
        raise NotImplementedError

    def _diagnostics(self) -> str:
        """Context for failure messages (the server's stderr tail)."""
        return ""

    async def close(self, timeout: float = 5.0) -> int | None:
        raise NotImplementedError

    # -- inbound -------------------------------------------------------------------------------------------

    def _violation(self, text: str) -> None:
        self.violations.append(f"[{self.label}] {text}")

    def _on_message(self, raw: str) -> None:
        seq = len(self.arrivals)
        kind = "invalid"
        msg: JsonObj | None = None
        try:
            parsed = json.loads(raw, parse_constant=_reject_constant)
        except ValueError as exc:
            self._violation(f"message #{seq} is not JSON ({exc}): {raw[:300]!r}")
        else:
            if isinstance(parsed, dict):
                msg = parsed
            else:
                self._violation(f"message #{seq} is not a JSON object: {raw[:300]!r}")
        if msg is not None:
            kind = self._classify(seq, msg)
            self.messages.append(msg)
            self._route(kind, msg)
        self.arrivals.append(Arrival(seq, time.monotonic() - self._t0, kind, msg, raw))
        self._wake()

    def _classify(self, seq: int, msg: JsonObj) -> str:
        if "method" in msg:
            guess = "server_request" if "id" in msg else "notification"
        else:
            guess = "error" if "error" in msg else "response"
        if self.validator is None:
            return guess
        try:
            return self.validator.check_server_line(msg, self.request_methods)
        except AssertionError as exc:
            self._violation(f"message #{seq}: {exc}")
            return guess

    def _route(self, kind: str, msg: JsonObj) -> None:
        msg_id = msg.get("id")
        if kind in ("response", "error") and isinstance(msg_id, int | str) and msg_id in self._awaited:
            if self._awaited[msg_id] is not None:
                self._violation(f"second response for id {msg_id!r}: {json.dumps(msg)[:300]}")
            self._awaited[msg_id] = msg
            return
        if kind == "server_request" and isinstance(msg_id, int):
            if msg_id in self.server_requests:
                self._violation(f"server request id {msg_id} reused while earlier one is known")
            self.server_requests[msg_id] = msg
        self._inbox.append(msg)

    def _on_eof(self, trailing: str = "") -> None:
        if trailing:
            self._violation(f"stream ended inside a line (no newline): {trailing[:300]!r}")
        self._eof = True
        self._wake()

    def _wake(self) -> None:
        for event in self._waiters:
            event.set()

    def raise_violations(self) -> None:
        """Raise every violation not raised yet (each is raised once)."""
        fresh = self.violations[self._reported :]
        if fresh:
            self._reported = len(self.violations)
            raise ProtocolViolation("protocol violations:\n" + "\n".join(fresh))

    async def _wait_for(self, pick: Callable[[], T | None], timeout: float, what: str) -> T:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        event = asyncio.Event()
        self._waiters.add(event)
        try:
            while True:
                self.raise_violations()
                found = pick()
                if found is not None:
                    return found
                if self._eof:
                    raise AssertionError(
                        f"[{self.label}] server closed the stream while waiting for {what}{self._diagnostics()}"
                    )
                remaining = deadline - loop.time()
                if remaining <= 0:
                    tail = [json.dumps(m)[:200] for m in self.messages[-5:]]
                    raise TimeoutError(f"[{self.label}] no {what} within {timeout}s; last messages: {tail}")
                event.clear()
                try:
                    await asyncio.wait_for(event.wait(), remaining)
                except TimeoutError:
                    pass
        finally:
            self._waiters.discard(event)

    def _take(self, match: Callable[[JsonObj], bool]) -> JsonObj | None:
        for index, msg in enumerate(self._inbox):
            if match(msg):
                return self._inbox.pop(index)
        return None

    # -- outbound and waiting ------------------------------------------------------------------------------

    def _alloc_id(self) -> int:
        while self._next_id in self.request_methods:
            self._next_id += 1
        self._next_id += 1
        return self._next_id - 1

    def _note_outgoing(self, obj: object) -> None:
        """Remember request ids, and follow the capability of any `initialize` to pick the schema bundle."""
        if not isinstance(obj, dict) or not isinstance(obj.get("method"), str):
            return
        if isinstance(obj.get("id"), int | str):
            self.request_methods[obj["id"]] = obj["method"]
        if obj["method"] == "initialize" and self.schemas is not None:
            capabilities = (obj.get("params") or {}).get("capabilities") or {}
            self.validator = self.schemas.for_capability(bool(capabilities.get("experimentalApi")))

    async def _send_text(self, data: bytes | str) -> None:
        self.raise_violations()
        self.sent.append(
            (
                time.monotonic() - self._t0,
                data.decode("utf-8", "replace") if isinstance(data, bytes) else data,
            )
        )
        await self._write(data)

    async def send(self, msg: JsonObj) -> None:
        """Send one message object as its own line/frame."""
        self._note_outgoing(msg)
        await self._send_text(self._frame(msg))

    async def send_raw(self, data: bytes | str) -> None:
        """Send bytes exactly as given; JSON requests inside are noted (ids for validation, initialize)."""
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        for line in text.splitlines():
            try:
                self._note_outgoing(json.loads(line))
            except ValueError:
                continue
        await self._send_text(data)

    async def request(
        self, method: str, params: Any = OMIT, id: int | str | None = None, timeout: float = 10.0
    ) -> JsonObj:
        """Send a request and return the whole response object (`result` or `error`). `OMIT` leaves out params."""
        rid = self._alloc_id() if id is None else id
        if rid in self._awaited and self._awaited[rid] is None:
            raise ValueError(f"request id {rid!r} is already awaiting a response")
        msg: JsonObj = {"id": rid, "method": method}
        if params is not OMIT:
            msg["params"] = params
        self._awaited[rid] = None
        await self.send(msg)
        try:
            return await self._wait_for(
                lambda: self._awaited[rid], timeout, f"response to {method} (id {rid!r})"
            )
        finally:
            self._awaited.pop(rid, None)

    async def call(self, method: str, params: Any = OMIT, timeout: float = 10.0) -> Any:
        """`request` that insists on success and returns `result`."""
        response = await self.request(method, params, timeout=timeout)
        if "error" in response:
            raise AssertionError(f"[{self.label}] {method} failed: {response['error']}")
        return response["result"]

    async def notify(self, method: str, params: Any = OMIT) -> None:
        msg: JsonObj = {"method": method}
        if params is not OMIT:
            msg["params"] = params
        await self.send(msg)

    async def respond(self, server_request_id: int, result: Any) -> None:
        await self.send({"id": server_request_id, "result": result})

    async def respond_error(self, server_request_id: int, code: int, message: str) -> None:
        await self.send({"id": server_request_id, "error": {"code": code, "message": message}})

    async def initialize(
        self,
        name: str = "pycodex_tests",
        *,
        version: str = "0.0.1",
        experimental: bool = False,
        opt_out: Sequence[str] | None = None,
        send_initialized: bool = True,
        timeout: float = 60.0,
    ) -> JsonObj:
        """The handshake; picks the stable or experimental schema to match the capability sent.

        The bound is generous: a healthy server answers at once, but the Codex binary has been seen to take
        over 15 s to start on a busy 2-core machine, and a flaky bound would fail an unrelated test.
        """
        capabilities: JsonObj = {"experimentalApi": experimental}
        if opt_out is not None:
            capabilities["optOutNotificationMethods"] = list(opt_out)
        params = {"clientInfo": {"name": name, "version": version}, "capabilities": capabilities}
        response = await self.request("initialize", params, timeout=timeout)
        if "error" in response:
            raise AssertionError(f"[{self.label}] initialize failed: {response['error']}")
        if send_initialized:
            await self.notify("initialized")
        result: JsonObj = response["result"]
        return result

    async def next_message(self, timeout: float = 10.0) -> JsonObj:
        """The oldest message not yet consumed (responses to `request` are consumed by it)."""
        return await self._wait_for(lambda: self._take(lambda m: True), timeout, "message")

    async def wait_notification(
        self, method: str, predicate: Callable[[Any], bool] | None = None, timeout: float = 10.0
    ) -> JsonObj:
        """Consume and return the first unconsumed `method` notification whose params satisfy `predicate`."""

        def match(m: JsonObj) -> bool:
            return (
                m.get("method") == method
                and "id" not in m
                and (predicate is None or predicate(m.get("params")))
            )

        return await self._wait_for(lambda: self._take(match), timeout, f"notification {method}")

    async def wait_server_request(self, method: str | None = None, timeout: float = 10.0) -> JsonObj:
        def match(m: JsonObj) -> bool:
            return "id" in m and "method" in m and (method is None or m["method"] == method)

        return await self._wait_for(lambda: self._take(match), timeout, f"server request {method or ''}")

    async def wait_response(self, request_id: int | str, timeout: float = 10.0) -> JsonObj:
        """A response to a request sent with `send_raw`/`send`."""

        def match(m: JsonObj) -> bool:
            return "method" not in m and m.get("id") == request_id

        return await self._wait_for(lambda: self._take(match), timeout, f"response id {request_id!r}")

    async def expect_silence(self, seconds: float) -> None:
        """Assert nothing new (consumable) arrives for `seconds`."""
        before = len(self._inbox)
        await asyncio.sleep(seconds)
        self.raise_violations()
        if len(self._inbox) > before:
            raise AssertionError(f"[{self.label}] unexpected messages: {self._inbox[before:]}")

    def notifications(self, method: str | None = None) -> list[JsonObj]:
        """Every notification received so far (consumed or not), in arrival order."""
        return [m for m in self.messages if "method" in m and "id" not in m and method in (None, m["method"])]


class AppServerClient(ValidatingClient):
    """An app-server spawned as a subprocess speaking newline-delimited JSON on stdio."""

    def __init__(self, process: ServerProcess, schemas: SchemaPair | None, *, label: str) -> None:
        super().__init__(schemas, label=label)
        self.process = process
        self._reader = asyncio.create_task(self._read_stdout())

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
    ) -> AppServerClient:
        full_argv = list(argv) + list(extra_args) if argv is not None else default_argv(*extra_args)
        process = await ServerProcess.spawn(
            full_argv, env=app_server_env(codex_home, env), cwd=cwd, protocol_stdio=True
        )
        return cls(process, schemas, label=label)

    async def _read_stdout(self) -> None:
        stream = self.process.proc.stdout
        assert stream is not None
        while True:
            try:
                line = await stream.readline()
            except ValueError as exc:  # a line longer than LINE_LIMIT
                self._violation(f"stdout line too long: {exc}")
                self._on_eof()
                return
            if not line.endswith(b"\n"):
                self._on_eof(line.decode("utf-8", "replace"))
                return
            self._on_message(line[:-1].decode("utf-8", "replace"))

    def _frame(self, msg: JsonObj) -> str:
        return json.dumps(msg, separators=(",", ":")) + "\n"

    async def _write(self, data: bytes | str) -> None:
        stdin = self.process.proc.stdin
        assert stdin is not None
        try:
            stdin.write(data.encode() if isinstance(data, str) else data)
            await asyncio.wait_for(stdin.drain(), 10.0)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise AssertionError(
                f"[{self.label}] cannot write to the server ({exc!r}){self._diagnostics()}"
            ) from None

    def _diagnostics(self) -> str:
        rc = self.process.returncode
        return f"; exit code {rc}; stderr tail:\n{self.process.stderr_text[-3000:]}"

    async def close_stdin(self) -> None:
        stdin = self.process.proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    async def wait_exit(self, timeout: float = 10.0) -> int:
        return await self.process.wait_exit(timeout)

    @property
    def stderr_text(self) -> str:
        return self.process.stderr_text

    async def close(self, timeout: float = 5.0) -> int:
        """Stop the process (stdin EOF, then TERM/KILL), finish reading, raise pending violations."""
        if not self._closed:
            self._closed = True
            await self.process.stop(timeout)
            try:
                await asyncio.wait_for(self._reader, 3.0)
            except TimeoutError:
                self._reader.cancel()
        self.raise_violations()
        return self.process.proc.returncode if self.process.proc.returncode is not None else -9
