"""One MCP server connection over the official `mcp` SDK (stdio or streamable HTTP).

A connection runs in its own asyncio task: the SDK's transports are anyio context managers whose
cancel scopes must be entered and left by the same task, so that task opens the transport and the
`ClientSession`, initializes and lists tools within the startup timeout, then parks until `stop()`.
Requests from other tasks go through the session (the SDK's streams are task-safe).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal, TypeVar

import anyio
import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.types import (
    CONNECTION_CLOSED,
    CallToolResult,
    ElicitResult,
    Implementation,
    PaginatedRequestParams,
    ReadResourceResult,
    Resource,
    ServerCapabilities,
    Tool,
)
from pydantic import AnyUrl, ValidationError

from app_server.config.mcp_servers import HttpTransport, McpServerConfig, StdioTransport
from pycodex import otel
from pycodex.json_types import JsonObj

CLIENT_INFO = Implementation(name="pycodex-mcp-client", version="0.1.0")
T = TypeVar("T")
REQUEST_TIMEOUT = int(httpx.codes.REQUEST_TIMEOUT)  # the code the SDK gives a request that timed out
STOP_TIMEOUT_S = 10.0  # the SDK gives a stdio server 2 s after closing stdin, then kills its group


def rust_duration(seconds: float) -> str:
    """A duration the way Rust's `Debug` prints it in Codex's messages: "300s", "1.5s", "500ms"."""
    if seconds >= 1 or seconds == 0:
        return f"{seconds:g}s"
    return f"{seconds * 1000:g}ms"


def _prefixed(what: str, cause: str) -> str:
    return f"{what}: {cause}" if what else cause


class McpCallError(Exception):
    """A request to a server failed: not ready, timed out, or the server answered with an error."""


@dataclass
class ConnectionState:
    """What the connection knows; `state` is an `McpServerStartupState` ("starting"/"ready"/"failed"/"cancelled")."""

    state: str = "starting"
    error: str | None = None
    tools: list[Tool] = field(default_factory=list)  # every tool the server lists (unfiltered)
    server_info: Implementation | None = None
    capabilities: ServerCapabilities | None = None


# What a stdio server inherits from us unasked (Codex's list); everything else only through `env_vars`.
DEFAULT_ENV_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "USER", "__CF_USER_TEXT_ENCODING", "LANG", "LC_ALL",
                    "TERM", "TMPDIR", "TZ")


def stdio_parameters(transport: StdioTransport, env: Mapping[str, str]) -> StdioServerParameters:
    """The default variables from our environment, then `env_vars` passed through, then `env`."""
    child_env = {name: env[name] for name in (*DEFAULT_ENV_VARS, *transport.env_vars) if name in env}
    child_env.update(transport.env or {})
    return StdioServerParameters(command=transport.command, args=list(transport.args), env=child_env,
                                 cwd=transport.cwd)


def http_headers(name: str, transport: HttpTransport, env: Mapping[str, str]) -> dict[str, str]:
    """Static headers, headers whose values come from the environment, and the bearer token. Raises
    McpCallError when `bearer_token_env_var` names a variable that is unset or empty."""
    headers = dict(transport.http_headers or {})
    for header, var in (transport.env_http_headers or {}).items():
        if env.get(var):
            headers[header] = env[var]
    if transport.bearer_token_env_var is not None:
        token = env.get(transport.bearer_token_env_var)
        if not token:
            raise McpCallError(f"Environment variable {transport.bearer_token_env_var} for MCP server "
                               f"'{name}' is not set")
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _describe(exc: BaseException) -> str:
    """An error's cause; an OS error in Rust's words ("No such file or directory (os error 2)")."""
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    if isinstance(exc, OSError) and exc.errno is not None and exc.strerror:
        return f"{exc.strerror} (os error {exc.errno})"
    return str(exc) or type(exc).__name__


#: What to answer a server's elicitation with (the thread's approval policy decides).
ElicitationAnswer = Callable[[], Literal["decline", "cancel"]]


class McpConnection:
    """Start with `start()`, await `ready()`, stop with `stop()` (idempotent)."""

    def __init__(self, config: McpServerConfig, env: Mapping[str, str],
                 on_state: Callable[[str, ConnectionState], None] | None = None,
                 elicitation_answer: ElicitationAnswer | None = None) -> None:
        self.config = config
        self._elicitation_answer = elicitation_answer
        self.status = ConnectionState()
        self._env = env
        self._on_state = on_state
        self._session: ClientSession | None = None
        self._settled = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        """The server's name in the config."""
        return self.config.name

    def start(self) -> None:
        """Start connecting in the background (once); ``ready()`` waits for the outcome."""
        if self._task is None:
            self._set("starting")
            self._task = asyncio.create_task(self._run(), name=f"mcp:{self.name}")

    async def ready(self) -> ConnectionState:
        """Wait until the server is ready or has failed (bounded by the startup timeout)."""
        await self._settled.wait()
        return self.status

    def _set(self, state: str, error: str | None = None) -> None:
        self.status.state, self.status.error = state, error
        if state != "starting":
            self._settled.set()
        if self._on_state is not None:
            self._on_state(self.name, self.status)

    @contextlib.asynccontextmanager
    async def _transport(self, stack: AsyncExitStack) -> AsyncIterator[ClientSession]:
        transport = self.config.transport
        if isinstance(transport, StdioTransport):
            streams = await stack.enter_async_context(stdio_client(stdio_parameters(transport, self._env), sys.stderr))
            read, write = streams
        else:
            client = httpx.AsyncClient(headers=http_headers(self.name, transport, self._env),
                                       timeout=httpx.Timeout(30.0, read=300.0))
            await stack.enter_async_context(client)
            read, write, _ = await stack.enter_async_context(streamable_http_client(transport.url, http_client=client))
        yield await stack.enter_async_context(ClientSession(read, write, client_info=CLIENT_INFO,
                                                            elicitation_callback=self._elicit))

    async def _elicit(self, context: object, params: object) -> ElicitResult:
        """A server's own question (`elicitation/create`). Codex 0.169 does not pass it to an app-server
        client by default: it declines under `approval_policy = "never"` and cancels otherwise (observed)."""
        action = self._elicitation_answer() if self._elicitation_answer is not None else "cancel"
        return ElicitResult(action=action)

    async def _handshake(self, session: ClientSession) -> None:
        init = await session.initialize()
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
            tools.extend(page.tools)
            cursor = page.nextCursor
            if not cursor:
                break
        self.status.server_info, self.status.capabilities, self.status.tools = init.serverInfo, init.capabilities, tools

    async def _settle_handshake(self, session: ClientSession) -> bool:
        """Initialize and list tools within the startup timeout; `stop()` cuts it short. True when ready."""
        handshake = asyncio.ensure_future(self._handshake(session))
        stopping = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({handshake, stopping}, timeout=self.config.startup_timeout,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (handshake, stopping):
                task.cancel()
            await asyncio.gather(handshake, stopping, return_exceptions=True)
        if handshake.cancelled() or not handshake.done():
            if self._stop.is_set():
                self._set("cancelled")
            else:
                self._set("failed", f"MCP client for `{self.name}` timed out after "
                          f"{self.config.startup_timeout:g} seconds. Add or adjust `startup_timeout_sec` in your "
                          f"config.toml:\n[mcp_servers.{self.name}]\nstartup_timeout_sec = XX")
            return False
        error = handshake.exception()
        if error is not None:
            raise error
        return True

    async def _run(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                async with self._transport(stack) as session:
                    if not await self._settle_handshake(session):
                        return
                    self._session = session
                    self._set("ready")
                    await self._stop.wait()
        except asyncio.CancelledError:
            if self.status.state == "starting":
                self._set("cancelled")
            raise
        except Exception as exc:  # any transport or protocol failure ends this server only
            if self.status.state in ("starting", "ready"):
                self._set("failed", f"MCP client for `{self.name}` failed to start: MCP startup failed: {_describe(exc)}")
        finally:
            self._session = None
            if self.status.state == "starting":
                self._set("cancelled")

    async def stop(self) -> None:
        """Close the session and the transport (the SDK ends a stdio server's process group)."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT_S)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _ready_session(self) -> ClientSession:
        if self._session is None or self.status.state != "ready":
            detail = f": {self.status.error}" if self.status.error else ""
            raise McpCallError(f"MCP server '{self.name}' is not ready ({self.status.state}){detail}")
        return self._session

    async def _request(self, what: str, request: Awaitable[T], timeout_text: str | None = None) -> T:
        """Await one request; server errors and a dead connection become McpCallError ("<what>: <cause>",
        or the bare cause when `what` is empty). A dead connection also marks the server failed, so status
        listings stop calling it ready."""
        try:
            return await request
        except McpError as exc:
            if exc.error.code == REQUEST_TIMEOUT and timeout_text is not None:
                raise McpCallError(_prefixed(what, timeout_text)) from None
            if exc.error.code != CONNECTION_CLOSED:
                raise McpCallError(_prefixed(what, exc.error.message)) from None
            raise self._closed(what, "") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, httpx.HTTPError) as exc:
            raise self._closed(what, str(exc)) from None
        except ValidationError as exc:
            # The server answered, but not with the result the method defines (``{}`` to resources/list):
            # this one request failed; the connection and the other servers are fine.
            problem = exc.errors(include_url=False)[0] if exc.errors() else None
            where = ".".join(str(p) for p in problem["loc"]) if problem else ""
            cause = f"invalid response: {where}: {problem['msg']}" if problem else "invalid response"
            raise McpCallError(_prefixed(what, cause)) from None

    def _closed(self, what: str, detail: str) -> McpCallError:
        error = f"MCP server '{self.name}' connection closed" + (f": {detail}" if detail else "")
        if self.status.state == "ready":
            self._set("failed", error)
        # The caller (and the model) get Codex 0.169's words for a dead transport; the status keeps the detail.
        return McpCallError(_prefixed(what, "Transport closed"))

    async def call_tool(self, tool: str, arguments: JsonObj | None, timeout_s: float | None = None,
                        meta: JsonObj | None = None) -> CallToolResult:
        """Raises McpCallError worded as Codex 0.169 words a failed call for the model, e.g.
        "tool call error: tool call failed for `calc/slow`\n\nCaused by:\n    timed out awaiting tools/call after 300s"."""
        session = self._ready_session()
        limit = self.config.tool_timeout if timeout_s is None else timeout_s
        request = session.call_tool(tool, arguments, read_timeout_seconds=timedelta(seconds=limit), meta=meta)
        try:
            return await self._request("", otel.mcp_call(self.name, tool, request), timeout_text=f"timed out awaiting tools/call after {rust_duration(limit)}")
        except McpCallError as exc:
            raise McpCallError(f"tool call error: tool call failed for `{self.name}/{tool}`\n\nCaused by:\n    {exc}") from None

    async def list_resources(self) -> list[Resource]:
        """Every resource the server lists (all pages); the connection must be ready."""
        session = self._ready_session()
        resources: list[Resource] = []
        cursor: str | None = None
        while True:
            request = session.list_resources(params=PaginatedRequestParams(cursor=cursor))
            page = await self._request(f"resources/list failed for `{self.name}`", request)
            resources.extend(page.resources)
            cursor = page.nextCursor
            if not cursor:
                return resources

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read the resource at ``uri``; the connection must be ready."""
        session = self._ready_session()
        return await self._request(f"resources/read failed for `{self.name}`", session.read_resource(AnyUrl(uri)))


def process_env() -> dict[str, str]:
    """Our environment, read once where a manager is built (never at import)."""
    return dict(os.environ)
