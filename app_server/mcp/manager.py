"""The set of configured MCP servers: start, status, tool catalog, calls, reload and shutdown.

One manager serves one configuration (Codex starts a thread's servers with the thread and reuses the
manager for that thread's turns; `config/mcpServer/reload` re-reads config.toml and reconciles). Reload
diffs the configs: added servers start, removed ones stop, changed ones restart, unchanged ones keep
running untouched. `on_status(name, state, error)` reports every startup-state change (the source of
`mcpServer/startupStatus/updated` notifications).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from mcp.types import CallToolResult, ReadResourceResult, Resource, Tool

from app_server.config.mcp_servers import McpServerConfig
from app_server.mcp.client import ConnectionState, ElicitationAnswer, McpCallError, McpConnection, process_env
from app_server.mcp.tools import ToolRoutes, deferred_spec, namespace_spec, search_text
from pycodex.json_types import JsonObj

StatusCallback = Callable[[str, str, str | None], None]


def unknown_server_error(name: str) -> McpCallError:
    """The error for a server name the manager does not know (Codex's wording)."""
    return McpCallError(f"unknown MCP server '{name}'")


@dataclass(frozen=True)
class ReloadPlan:
    """Which enabled servers a config reload adds, removes and restarts (changed), by name."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]


def plan_reload(old: Mapping[str, McpServerConfig], new: Mapping[str, McpServerConfig]) -> ReloadPlan:
    """Only enabled servers run, so enabling counts as added and disabling as removed."""
    old_on = {name: conf for name, conf in old.items() if conf.enabled}
    new_on = {name: conf for name, conf in new.items() if conf.enabled}
    return ReloadPlan(
        added=tuple(sorted(set(new_on) - set(old_on))),
        removed=tuple(sorted(set(old_on) - set(new_on))),
        changed=tuple(sorted(name for name in set(old_on) & set(new_on) if old_on[name] != new_on[name])),
    )


@dataclass(frozen=True)
class ServerSnapshot:
    """One server as status listings show it. `state` is "disabled" for `enabled = false` servers."""

    name: str
    config: McpServerConfig
    state: str
    error: str | None
    tools: tuple[Tool, ...]  # after enabled_tools / disabled_tools
    connection: ConnectionState | None


class McpConnectionManager:
    """One thread's MCP servers: starts the enabled ones, reports their state, routes calls and reloads."""

    def __init__(self, servers: Mapping[str, McpServerConfig], *, env: Mapping[str, str] | None = None,
                 on_status: StatusCallback | None = None,
                 elicitation_answer: ElicitationAnswer | None = None) -> None:
        self._configs: dict[str, McpServerConfig] = dict(servers)
        self._elicitation_answer = elicitation_answer
        self._env = dict(process_env() if env is None else env)
        self._on_status = on_status
        self._connections: dict[str, McpConnection] = {}
        self._closed = False

    @property
    def configs(self) -> Mapping[str, McpServerConfig]:
        """The server configs the manager runs from (a copy)."""
        return dict(self._configs)

    def _report(self, name: str, state: ConnectionState) -> None:
        if self._on_status is not None:
            self._on_status(name, state.state, state.error)

    def _launch(self, config: McpServerConfig) -> McpConnection:
        connection = McpConnection(config, self._env, on_state=self._report,
                                   elicitation_answer=self._elicitation_answer)
        self._connections[config.name] = connection
        connection.start()
        return connection

    def start(self, names: Iterable[str] | None = None) -> None:
        """Start every enabled server (or those named) that is not already running. Does not wait."""
        if self._closed:
            raise RuntimeError("the MCP connection manager is shut down")
        wanted = self._configs if names is None else {n: self._configs[n] for n in names if n in self._configs}
        for name, config in wanted.items():
            if config.enabled and name not in self._connections:
                self._launch(config)

    async def wait_ready(self, names: Iterable[str] | None = None) -> dict[str, ConnectionState]:
        """Wait until every started server (or those named) is ready or failed; each wait is bounded by
        that server's startup timeout."""
        chosen = [self._connections[n] for n in (names or self._connections) if n in self._connections]
        states = await asyncio.gather(*(connection.ready() for connection in chosen))
        return {connection.name: state for connection, state in zip(chosen, states, strict=True)}

    async def wait_for_turn(self, grace_s: float) -> None:
        """Wait as Codex does before building a turn's tool catalog: `required` servers until they are
        ready or failed; the others share one grace period (`mcp_optional_startup_grace_ms`; 0 means wait
        for each up to its startup timeout). A server still starting afterwards is left out of the turn."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        connections = list(self._connections.values())
        await asyncio.gather(*(c.ready() for c in connections if c.config.required))
        optional = [asyncio.ensure_future(c.ready()) for c in connections if not c.config.required]
        if not optional:
            return
        timeout = None if grace_s <= 0 else max(0.0, deadline - loop.time())
        _, pending = await asyncio.wait(optional, timeout=timeout)
        for task in pending:
            task.cancel()

    async def reload(self, servers: Mapping[str, McpServerConfig]) -> ReloadPlan:
        """Reconcile with a new configuration; started servers are not awaited."""
        plan = plan_reload(self._configs, servers)
        stopping = [self._connections.pop(name) for name in (*plan.removed, *plan.changed) if name in self._connections]
        await asyncio.gather(*(connection.stop() for connection in stopping))
        self._configs = dict(servers)
        for name in (*plan.added, *plan.changed):
            self._launch(self._configs[name])
        return plan

    async def shutdown(self) -> None:
        """Stop every server; their processes are gone when this returns."""
        self._closed = True
        connections = list(self._connections.values())
        self._connections.clear()
        await asyncio.gather(*(connection.stop() for connection in connections))

    def snapshot(self) -> list[ServerSnapshot]:
        """Every configured server, sorted by name (what mcpServerStatus/list pages over)."""
        out = []
        for name in sorted(self._configs):
            config = self._configs[name]
            connection = self._connections.get(name)
            if not config.enabled:
                out.append(ServerSnapshot(name, config, "disabled", None, (), None))
                continue
            if connection is None:
                out.append(ServerSnapshot(name, config, "notStarted", None, (), None))
                continue
            status = connection.status
            tools = tuple(t for t in status.tools if config.tool_enabled(t.name)) if status.state == "ready" else ()
            out.append(ServerSnapshot(name, config, status.state, status.error, tools, status))
        return out

    def tool_catalog(self) -> dict[str, list[Tool]]:
        """Ready servers' model-visible tools (after the enabled/disabled lists)."""
        return {snap.name: list(snap.tools) for snap in self.snapshot() if snap.state == "ready"}

    def tool_specs(self) -> list[JsonObj]:
        """The `namespace` tools to add to a Responses request, one per ready server with tools."""
        specs = [namespace_spec(server, tools) for server, tools in self.tool_catalog().items()]
        return [spec for spec in specs if spec is not None]

    def deferred_tools(self) -> list[tuple[JsonObj, str]]:
        """The ready servers' tools as tool_search holds them while they are deferred: (one-function
        namespace spec, search text) per tool, by server and tool name."""
        return [(deferred_spec(server, tool), search_text(server, tool))
                for server, tools in sorted(self.tool_catalog().items())
                for tool in sorted(tools, key=lambda t: t.name)]

    def routes(self) -> ToolRoutes:
        """The model-visible tools of the ready servers, by (namespace, name)."""
        return ToolRoutes(self.tool_catalog())

    def find_tool(self, server: str, tool: str) -> Tool | None:
        """The ready server's tool named ``tool``, or None."""
        return next((t for t in self.tool_catalog().get(server, []) if t.name == tool), None)

    def _connection(self, server: str) -> McpConnection:
        connection = self._connections.get(server)
        if connection is None:
            config = self._configs.get(server)
            if config is not None and not config.enabled:
                raise McpCallError(f"MCP server '{server}' is disabled")
            raise unknown_server_error(server)
        return connection

    async def call_tool(self, server: str, tool: str, arguments: JsonObj | None = None, *,
                        timeout_s: float | None = None, meta: JsonObj | None = None) -> CallToolResult:
        """Call a tool, waiting for a starting server first. A tool the enabled/disabled lists remove
        is refused here too (as Codex's connection manager does), whoever asks."""
        connection = self._connection(server)
        if not connection.config.tool_enabled(tool):
            raise McpCallError(f"tool '{tool}' is disabled for MCP server '{server}'")
        await connection.ready()
        return await connection.call_tool(tool, arguments, timeout_s, meta)

    async def list_resources(self, server: str) -> list[Resource]:
        """The resources of ``server`` once it is ready; raises McpCallError for an unknown server."""
        connection = self._connection(server)
        await connection.ready()
        return await connection.list_resources()

    async def read_resource(self, server: str, uri: str) -> ReadResourceResult:
        """Read ``uri`` from ``server`` once it is ready; raises McpCallError for an unknown server."""
        connection = self._connection(server)
        await connection.ready()
        return await connection.read_resource(uri)
