"""MCP for a whole app-server: one connection manager per thread, and the mcpServer/* request logic.

Codex 0.169 starts a thread's MCP servers with the thread (every `mcpServer/startupStatus/updated`
carries the thread id), so each thread owns a manager. A request without `threadId`
(`mcpServerStatus/list`, `mcpServer/resource/read`) starts the configured servers just for that answer
and stops them again; `mcpServerStatus/list` then reports `runtimeStatus: null`. `config/mcpServer/reload`
hands the re-read configuration to every live thread's manager (added servers start, removed ones stop).
The handler layer validates params, calls these methods and maps `McpRequestError` to a JSON-RPC error.

The MCP SDK (whose package import also loads its server side: ~0.25 s) is imported only once a server is
configured or an mcpServer/* request needs it: a thread opened with no `[mcp_servers]` gets no manager
until a reload brings servers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from app_server.config.mcp_servers import HttpTransport, McpServerConfig
from app_server.lazy import LazyModule
from app_server.mcp.params import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    ListMcpServerStatusParams,
    McpRequestError,
    McpResourceReadParams,
    McpServerOauthLoginParams,
    McpServerToolCallParams,
)
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.mcp import client as mcp_client
    from app_server.mcp import manager as mcp_manager
    from app_server.mcp import wire as mcp_wire
    from app_server.mcp.manager import McpConnectionManager
    from app_server.mcp.tools import ToolRoute
else:
    mcp_client = LazyModule("app_server.mcp.client")
    mcp_manager = LazyModule("app_server.mcp.manager")
    mcp_wire = LazyModule("app_server.mcp.wire")

Notify = Callable[[str, JsonObj], None]
Policy = Callable[[], str | None] | None


@dataclass
class ThreadMcp:
    """One thread's MCP servers as its services hold them; `approved` are the tools the user allowed for
    the rest of the session."""

    thread_id: str
    service: McpService
    approved: set[ToolRoute] = field(default_factory=set)

    @property
    def manager(self) -> McpConnectionManager | None:
        """The thread's servers; None while no server is configured."""
        return self.service.thread_manager(self.thread_id)

    async def close(self) -> None:
        """Stop the thread's servers (unload, archive, shutdown)."""
        await self.service.end_thread(self.thread_id)


class McpService:
    """`servers()` returns the current `[mcp_servers]` (re-read by the caller on reload); `notify(method,
    params)` sends a notification to the clients."""

    def __init__(self, servers: Callable[[], Mapping[str, McpServerConfig]], notify: Notify,
                 env: Mapping[str, str] | None = None) -> None:
        self._servers = servers
        self._notify = notify
        self._env = env
        self._threads: dict[str, McpConnectionManager] = {}
        #: Open threads and how to read each one's approval policy, managed or not (yet).
        self._open: dict[str, Policy] = {}

    def start_thread(self, thread_id: str, approval_policy: Policy = None) -> McpConnectionManager | None:
        """Start the thread's servers (not awaited) and return its manager, None when no server is
        configured; idempotent. `approval_policy` reads the thread's current policy (it decides how a
        server's own elicitation is answered)."""
        self._open.setdefault(thread_id, approval_policy)
        manager = self._threads.get(thread_id)
        servers = self._servers()
        if manager is None and servers:
            policy = self._open[thread_id]

            def report(name: str, state: str, error: str | None) -> None:
                self._notify(mcp_wire.STATUS_METHOD, mcp_wire.startup_status_params(name, state, error, thread_id))

            def elicitation_answer() -> Literal["decline", "cancel"]:
                return "decline" if policy is not None and policy() == "never" else "cancel"

            manager = mcp_manager.McpConnectionManager(servers, env=self._env, on_status=report,
                                           elicitation_answer=elicitation_answer)
            self._threads[thread_id] = manager
            manager.start()
        return manager

    def open_thread(self, thread_id: str, approval_policy: Callable[[], str | None]) -> ThreadMcp:
        """Start the thread's MCP servers and return its handle on them."""
        self.start_thread(thread_id, approval_policy)
        return ThreadMcp(thread_id, self)

    def thread_manager(self, thread_id: str) -> McpConnectionManager | None:
        """The connection manager of the thread's MCP servers, or None when it has none."""
        return self._threads.get(thread_id)

    async def end_thread(self, thread_id: str) -> None:
        """Stop the thread's MCP servers (it unloaded)."""
        self._open.pop(thread_id, None)
        manager = self._threads.pop(thread_id, None)
        if manager is not None:
            await manager.shutdown()

    async def reload(self) -> JsonObj:
        """`config/mcpServer/reload`: every live thread reconciles with the current config (a thread that had
        no servers starts the new ones). Answers `{}`."""
        servers = self._servers()
        running = list(self._threads.values())
        for thread_id in [t for t in self._open if t not in self._threads]:
            self.start_thread(thread_id)
        await asyncio.gather(*(manager.reload(servers) for manager in running))
        return {}

    async def shutdown(self) -> None:
        """Stop every thread's MCP servers (the process is stopping)."""
        managers = list(self._threads.values())
        self._threads.clear()
        self._open.clear()
        await asyncio.gather(*(manager.shutdown() for manager in managers))

    @asynccontextmanager
    async def _manager_for(self, thread_id: str | None, only: str | None = None) -> AsyncIterator[McpConnectionManager]:
        """The thread's manager, or a temporary one (all servers, or just `only`) for a thread-less request (and
        an empty one for a thread with no servers)."""
        servers = self._servers()
        if thread_id is not None:
            manager = self._threads.get(thread_id)
            if manager is not None:
                yield manager
                return
            if thread_id not in self._open:
                raise McpRequestError(INVALID_PARAMS, f"thread not found: {thread_id}")
            servers = {}
        if only is not None:
            servers = {name: conf for name, conf in servers.items() if name == only}
        temporary = mcp_manager.McpConnectionManager(servers, env=self._env)
        try:
            temporary.start()
            yield temporary
        finally:
            await temporary.shutdown()

    async def list_status(self, params: ListMcpServerStatusParams) -> JsonObj:
        """``mcpServerStatus/list``: each server's status, tools and resources, one page."""
        async with self._manager_for(params.threadId, params.serverName) as manager:
            await manager.wait_ready()
            entries = []
            for snapshot in manager.snapshot():
                if params.serverName is not None and snapshot.name != params.serverName:
                    continue
                resources = []
                if params.detail != "toolsAndAuthOnly" and snapshot.state == "ready":
                    try:
                        resources = await manager.list_resources(snapshot.name)
                    except mcp_client.McpCallError:
                        resources = []  # a server without resources support still lists its tools
                entries.append(mcp_wire.server_status(snapshot, resources, detail=params.detail,
                                             thread_runtime=params.threadId is not None))
        try:
            return mcp_wire.page(entries, params.cursor, params.limit)
        except ValueError as exc:
            raise McpRequestError(INVALID_PARAMS, str(exc)) from None

    async def tool_call(self, params: McpServerToolCallParams) -> JsonObj:
        """``mcpServer/tool/call``: call one tool of a thread's server and answer with its result."""
        async with self._manager_for(params.threadId) as manager:
            arguments = params.arguments
            if arguments is not None and not isinstance(arguments, dict):
                raise McpRequestError(INVALID_PARAMS, "`arguments` must be an object")
            try:
                result = await manager.call_tool(params.server, params.tool, arguments,
                                                  meta=params.meta if isinstance(params.meta, dict) else None)
            except mcp_client.McpCallError as exc:
                raise McpRequestError(INTERNAL_ERROR, str(exc)) from None
            return mcp_wire.tool_call_response(result)

    async def resource_read(self, params: McpResourceReadParams) -> JsonObj:
        """``mcpServer/resource/read``: read one resource of a thread's server."""
        async with self._manager_for(params.threadId, params.server) as manager:
            try:
                result = await manager.read_resource(params.server, params.uri)
            except mcp_client.McpCallError as exc:
                raise McpRequestError(INTERNAL_ERROR, str(exc)) from None
            return mcp_wire.resource_read_response(result)

    async def oauth_login(self, params: McpServerOauthLoginParams) -> JsonObj:
        """`mcpServer/oauth/login`: Codex's refusals for unknown and stdio servers; HTTP OAuth is not
        implemented, so it is refused too rather than pretending to start a login."""
        config = self._servers().get(params.name)
        if config is None:
            raise McpRequestError(INVALID_REQUEST, f"No MCP server named '{params.name}' found.")
        if not isinstance(config.transport, HttpTransport):
            raise McpRequestError(INVALID_REQUEST, "OAuth login is only supported for streamable HTTP servers.")
        raise McpRequestError(INVALID_REQUEST, f"OAuth login for MCP server '{params.name}' is not supported by "
                              "pycodex yet; use `bearer_token_env_var` or `http_headers`.")
