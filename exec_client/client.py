"""Typed async client for an exec-server (ours or Codex's), over a websocket URL or stdio streams.

One reader task turns incoming messages into resolved request futures and per-process event
subscriptions. Subscribe *before* ``process/start`` (``start_process`` does it for you): Codex may send
the first ``process/output`` before the start response. Subscription queues are bounded; when one is
full the reader waits, so an unread process throttles the connection (and the server then stops
reading the child's pipe) instead of growing memory. Events for processes nobody subscribed to are
dropped; ``read_process`` can fetch them from the server's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict, Unpack

from pydantic import ValidationError
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

from exec_client.output_fast import output_params
from exec_client.wire import protocol as p
from exec_client.wire.errors import ExecServerClosed, ExecServerError
from pycodex import otel
from pycodex.json_types import JsonObj, JsonValue
from pycodex.jsonrpc import ErrorReceived, NotificationReceived, RequestReceived, ResponseReceived
from pycodex.trace import recorder as trace
from pycodex.transport.base import Transport
from pycodex.transport.endpoint import Endpoint
from pycodex.transport.stdio import StreamTransport
from pycodex.transport.websocket import WebSocketTransport

__all__ = ["ExecServerClient", "ProcessEvent", "ProcessSubscription", "Transport"]

ProcessEvent = p.ProcessOutput | p.ProcessExited | p.ProcessClosed
NotificationHandler = Callable[[str, JsonValue], None]

_MAX_MESSAGE = 64 * 1024 * 1024 + 1024


class _Malformed(Exception):
    """A process notification whose params do not validate: ``process/exited params.exitCode: Field required``."""

    def __init__(self, method: str, exc: ValidationError) -> None:
        errors = exc.errors()
        where = ".".join(str(part) for part in errors[0]["loc"]) if errors else ""
        detail = errors[0]["msg"] if errors else str(exc)
        super().__init__(f"exec-server sent an invalid {method}: params.{where}: {detail}")


class ProcessSubscription:
    """Events of one process in order: output, then ``ProcessExited``, then ``ProcessClosed``."""

    def __init__(self, process_id: str, maxsize: int) -> None:
        self.process_id = process_id
        self._queue: asyncio.Queue[ProcessEvent | None] = asyncio.Queue(maxsize)
        self._closed: ExecServerClosed | None = None

    async def _put(self, event: ProcessEvent) -> None:
        await self._queue.put(event)

    def _close(self, error: ExecServerClosed) -> None:
        self._closed = error
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(None)  # wake a waiting reader

    async def next(self, timeout: float | None = None) -> ProcessEvent | None:
        """The next event, or None if ``timeout`` passes first.

        Raises ExecServerClosed once the connection is gone and every queued event was taken.
        """
        for _ in range(2):
            if not self._queue.empty():
                item = self._queue.get_nowait()  # queued already: no task and timer per event
            elif self._closed is not None:
                raise self._closed
            else:
                try:
                    item = await asyncio.wait_for(self._queue.get(), timeout)
                except TimeoutError:
                    return None
            if item is not None:
                return item
        raise self._closed or ExecServerClosed("exec-server connection is closed")


class ClientOptions(TypedDict, total=False):
    """The keyword options of :class:`ExecServerClient` that its constructors pass through."""

    request_timeout: float
    subscription_queue_size: int


class ExecServerClient:
    """The harness's client of one exec-server connection: requests with deadlines, process events by id.

    Notifications for a process go to its :class:`ProcessSubscription`; any other notification goes to the
    handlers added with ``add_notification_handler``. Requests the server might send are refused with -32601.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        request_timeout: float = 60.0,
        subscription_queue_size: int = 256,
    ) -> None:
        self._transport = transport
        self._endpoint = Endpoint(
            self._send, closed_error=ExecServerClosed, remote_error=ExecServerError.from_wire
        )
        self._peer = self._endpoint.peer
        self._subs: dict[str, ProcessSubscription] = {}
        self._handlers: list[NotificationHandler] = []
        self._timeout = request_timeout
        self._queue_size = subscription_queue_size
        self._write_ids = itertools.count(1)
        self.closed = self._endpoint.closed
        self.session_id: str | None = None
        self.environment_info: p.EnvironmentInfo | None = None
        self._reader = asyncio.create_task(self._read_loop(), name="exec-client-reader")

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    async def connect_websocket(
        cls,
        url: str,
        *,
        token: str | None = None,
        connect_timeout: float = 10.0,
        **kwargs: Unpack[ClientOptions],
    ) -> ExecServerClient:
        """Dial an exec-server websocket (bearer ``token`` if given); ``ExecServerClosed`` if that fails."""
        headers = {"Authorization": f"Bearer {token}"} if token is not None else None
        try:
            ws = await connect(
                url,
                additional_headers=headers,
                compression=None,
                max_size=_MAX_MESSAGE,
                open_timeout=connect_timeout,
                ping_interval=30,
                ping_timeout=60,
            )
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise ExecServerClosed(f"exec-server at {url} refused the connection: HTTP {status}") from exc
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            raise ExecServerClosed(f"cannot connect to exec-server at {url}: {exc}") from exc
        return cls(WebSocketTransport(ws), **kwargs)

    @classmethod
    def over_stdio(
        cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, **kwargs: Unpack[ClientOptions]
    ) -> ExecServerClient:
        """Speak to a child started with ``--listen stdio`` (its stdout → reader, its stdin → writer)."""
        return cls(StreamTransport.over_streams(reader, writer, max_line_bytes=_MAX_MESSAGE), **kwargs)

    # -- plumbing -----------------------------------------------------------------------------------
    def add_notification_handler(self, handler: NotificationHandler) -> None:
        """Called for every notification that is not a process event (e.g. ``fs/missingChanged``)."""
        self._handlers.append(handler)

    def subscribe(self, process_id: str) -> ProcessSubscription:
        """The event queue of ``process_id``; subscribe before starting it so no event is missed."""
        sub = self._subs.get(process_id)
        if sub is None:
            sub = self._subs[process_id] = ProcessSubscription(process_id, self._queue_size)
            if self.closed.is_set():
                sub._close(ExecServerClosed("exec-server connection is closed"))
        return sub

    def unsubscribe(self, process_id: str) -> None:
        """Stop queueing events of ``process_id`` (later ones are dropped)."""
        self._subs.pop(process_id, None)

    async def _read_loop(self) -> None:
        reason = "exec-server connection closed"
        try:
            while True:
                raw = await self._transport.recv()
                if raw is None:
                    return
                await self._on_message(raw)
        except (ExecServerClosed, OSError):
            return
        except _Malformed as exc:
            # A process event we cannot read (a field missing or renamed by a skewed build): what waits on
            # it is told why, instead of only that the connection went away.
            reason = str(exc)
        finally:
            self._shutdown(reason)

    async def _on_message(self, raw: bytes) -> None:
        trace.record("in", "exec", id(self), raw)
        params = output_params(raw)  # most messages are process output: skip the general codec for them
        if params is not None:
            await self._on_notification(p.Method.PROCESS_OUTPUT, params)
            return
        msg = self._endpoint.receive(raw)
        if isinstance(msg, ResponseReceived | ErrorReceived):
            return  # an answer nobody waits for any more (its deadline passed)
        if isinstance(msg, NotificationReceived):
            await self._on_notification(msg.method, msg.params)
        elif isinstance(msg, RequestReceived):
            # The exec-server never calls its client; refuse politely rather than leave it hanging.
            refusal = {"code": -32601, "message": "the exec-server client does not serve requests"}
            await self._send(self._peer.respond_error(msg.id, refusal))

    async def _on_notification(self, method: str, params: JsonValue) -> None:
        event: ProcessEvent | None = None
        try:
            if method == p.Method.PROCESS_OUTPUT:
                event = p.ProcessOutput.model_validate(params)
            elif method == p.Method.PROCESS_EXITED:
                event = p.ProcessExited.model_validate(params)
            elif method == p.Method.PROCESS_CLOSED:
                event = p.ProcessClosed.model_validate(params)
        except ValidationError as exc:
            raise _Malformed(method, exc) from None
        if event is None:
            for handler in list(self._handlers):
                handler(method, params)
            return
        sub = self._subs.get(event.process_id)
        if sub is not None:
            await sub._put(event)

    def _shutdown(self, reason: str) -> None:
        self._endpoint.close(reason)
        for sub in self._subs.values():
            sub._close(ExecServerClosed(reason))

    async def request(self, method: str, params: object, *, timeout: float | None = None) -> JsonValue:
        """Send a request and return its raw result; raises ``ExecServerError``, ``TimeoutError`` or
        ``ExecServerClosed``."""
        if self.closed.is_set():
            raise ExecServerClosed("exec-server connection is closed")
        deadline = self._timeout if timeout is None else timeout
        return await otel.exec_request(method, self._endpoint.request(method, params, timeout=deadline))

    async def _send(self, data: bytes) -> None:
        trace.record("out", "exec", id(self), data)
        try:
            await self._transport.send(data)
        except ExecServerClosed:
            raise
        except OSError as exc:  # any transport's "connection gone" (an edge's, a relay channel's)
            raise ExecServerClosed(f"exec-server connection lost: {exc}") from exc

    async def close(self) -> None:
        """Close the transport and stop the reader (bounded); pending requests fail with
        ``ExecServerClosed``."""
        await self._transport.close()
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(self._reader, 5)
        if not self._reader.done():
            self._reader.cancel()
        self._shutdown("client closed")

    # -- lifecycle ----------------------------------------------------------------------------------
    async def initialize(
        self, client_name: str = "pycodex", resume_session_id: str | None = None
    ) -> p.InitializeResult:
        """``initialize`` then ``initialized``; with ``resume_session_id`` the old session is resumed."""
        params = p.InitializeParams(client_name=client_name, resume_session_id=resume_session_id)
        result = p.InitializeResult.model_validate(await self.request(p.Method.INITIALIZE, params.wire()))
        await self._send(self._peer.notify(p.Method.INITIALIZED, {}))
        self.session_id = result.session_id
        self.environment_info = result.environment_info
        return result

    # -- processes ----------------------------------------------------------------------------------
    async def start_process(
        self,
        process_id: str,
        argv: list[str],
        cwd: str | Path,
        env: dict[str, str],
        *,
        tty: bool = False,
        pipe_stdin: bool = False,
        arg0: str | None = None,
        env_policy: JsonObj | None = None,
    ) -> ProcessSubscription:
        """Start a process and return its event subscription (registered before the request)."""
        params: JsonObj = {
            "processId": process_id,
            "argv": argv,
            "cwd": p.path_to_uri(cwd) if isinstance(cwd, Path) else cwd,
            "env": env,
            "tty": tty,
            "arg0": arg0,
            "pipeStdin": pipe_stdin,
        }
        if env_policy is not None:
            params["envPolicy"] = env_policy
        sub = self.subscribe(process_id)
        try:
            p.ProcessStartResult.model_validate(await self.request(p.Method.PROCESS_START, params))
        except BaseException:
            self.unsubscribe(process_id)
            raise
        return sub

    async def read_process(
        self,
        process_id: str,
        *,
        after_seq: int | None = None,
        max_bytes: int | None = None,
        wait_ms: int | None = None,
    ) -> p.ProcessReadResult:
        """``process/read``: retained events after ``after_seq``, waiting up to ``wait_ms`` for new ones."""
        params = p.ProcessReadParams(
            process_id=process_id, after_seq=after_seq, max_bytes=max_bytes, wait_ms=wait_ms
        )
        timeout = self._timeout + (wait_ms or 0) / 1000
        raw = await self.request(p.Method.PROCESS_READ, params.wire(), timeout=timeout)
        return p.ProcessReadResult.model_validate(raw)

    async def write_process(self, process_id: str, data: bytes, *, write_id: str | None = None) -> str:
        """``process/write``: send ``data`` to stdin; returns the wire status (``accepted``,
        ``stdinClosed`` ...)."""
        params = p.ProcessWriteParams(
            process_id=process_id, chunk=p.b64encode(data), write_id=write_id or f"w{next(self._write_ids)}"
        )
        raw = await self.request(p.Method.PROCESS_WRITE, params.wire())
        return p.ProcessWriteResult.model_validate(raw).status

    async def interrupt_process(self, process_id: str) -> None:
        """``process/signal``: interrupt the process group (SIGINT)."""
        await self.request(p.Method.PROCESS_SIGNAL, {"processId": process_id, "signal": "interrupt"})

    async def terminate_process(self, process_id: str) -> bool:
        """Kill the process group; True if the process was still running."""
        raw = await self.request(p.Method.PROCESS_TERMINATE, {"processId": process_id})
        return p.ProcessTerminateResult.model_validate(raw).running

    # -- filesystem ---------------------------------------------------------------------------------
    async def _fs(self, method: str, params: JsonObj) -> JsonValue:
        return await self.request(method, {**params, "sandbox": None})

    async def read_file(self, path: Path) -> bytes:
        """``fs/readFile``: the bytes of a file on the exec-server's side."""
        raw = await self._fs(p.Method.FS_READ_FILE, {"path": p.path_to_uri(path)})
        return p.b64decode_strict(p.FsReadFileResult.model_validate(raw).data_base64)

    async def write_file(self, path: Path, data: bytes) -> None:
        """``fs/writeFile``: create or replace a file with ``data``."""
        await self._fs(p.Method.FS_WRITE_FILE, {"path": p.path_to_uri(path), "dataBase64": p.b64encode(data)})

    async def create_directory(self, path: Path, *, recursive: bool = False) -> None:
        """``fs/createDirectory``: create a directory (parents too with ``recursive``)."""
        await self._fs(p.Method.FS_CREATE_DIRECTORY, {"path": p.path_to_uri(path), "recursive": recursive})

    async def get_metadata(self, path: Path) -> p.FsMetadata:
        """``fs/getMetadata``: kind, size and times of ``path``."""
        raw = await self._fs(p.Method.FS_GET_METADATA, {"path": p.path_to_uri(path)})
        return p.FsMetadata.model_validate(raw)

    async def read_directory(self, path: Path) -> list[p.FsDirectoryEntry]:
        """``fs/readDirectory``: the entries of a directory."""
        raw = await self._fs(p.Method.FS_READ_DIRECTORY, {"path": p.path_to_uri(path)})
        return p.FsReadDirectoryResult.model_validate(raw).entries

    async def canonicalize(self, path: Path) -> Path:
        """``fs/canonicalize``: ``path`` with every symlink resolved."""
        raw = await self._fs(p.Method.FS_CANONICALIZE, {"path": p.path_to_uri(path)})
        return p.uri_to_path(str(raw["path"]))

    async def copy(self, source: Path, destination: Path, *, recursive: bool = False) -> None:
        """``fs/copy``: copy a file, or a tree with ``recursive``."""
        params = {
            "sourcePath": p.path_to_uri(source),
            "destinationPath": p.path_to_uri(destination),
            "recursive": recursive,
        }
        await self._fs(p.Method.FS_COPY, params)

    async def remove(self, path: Path, *, recursive: bool = False, force: bool = False) -> None:
        """``fs/remove``: remove a file or, with ``recursive``, a tree; ``force`` ignores a missing path."""
        params = {"path": p.path_to_uri(path), "recursive": recursive, "force": force}
        await self._fs(p.Method.FS_REMOVE, params)
