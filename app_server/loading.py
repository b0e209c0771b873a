"""What the app-server loads at start-up and what it defers: the one place that says so.

Serving ``initialize`` must stay cheap (Codex clients time the handshake), so the server's modules load in
four steps, each declared here:

1. **Before the answer** (:data:`BEFORE_ANSWER`): ``pycodex app-server`` on stdio answers ``initialize`` from
   ``app_server/startup.py``, which needs only the standard library and the JSON-RPC codec.
2. **At start-up** (:data:`AT_STARTUP`, group :data:`AFTER_ANSWER`): the server itself, its config, stores
   and the ``initialize`` family, built once the answer is written.
3. **After the handshake** (group :data:`AFTER_HANDSHAKE`): what the first thread and turn need, imported by
   :func:`prewarm` in a worker thread once a client sends ``initialized``, while it is idle.
4. **On first use** (group :data:`ON_FIRST_USE`): what only some sessions need (the MCP SDK, fuzzy search,
   config writes, remote environments), imported by the first call that needs it.

A deferred module is a :class:`LazyModule`: code imports it from here at the top of its file (``from
app_server.loading import mcp_manager``) and uses it as the module (``mcp_manager.McpConnectionManager``);
the type checker sees the real module, the interpreter imports it on the first attribute read. Request
handler families are deferred by the method table (``app_server/protocol/method_table.py``), one family
on its first request; the families a first turn uses are in the prewarm group.

``tests/app_server/test_app_server_startup_imports.py`` pins the start-up sets against a real
``pycodex app-server``, ``tests/app_server/test_loading.py`` pins the prewarm group against a first turn and
lists the few imports inside functions that remain in ``app_server`` (each with its reason), and
``tests/pycodex/test_import_graph.py`` reads ``from app_server.loading import x`` as an edge to x's module.

This module imports only the standard library: start-up loads it before the answer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final, Literal

__all__ = [
    "AFTER_ANSWER",
    "AFTER_HANDSHAKE",
    "AT_STARTUP",
    "BEFORE_ANSWER",
    "ON_FIRST_USE",
    "Group",
    "LazyModule",
    "config_write",
    "declared",
    "exec_client_client",
    "exec_client_remote",
    "logging_setup",
    "mcp_client",
    "mcp_manager",
    "mcp_service",
    "mcp_wire",
    "model_client",
    "model_clients",
    "model_provider_write",
    "model_scripted",
    "prewarm",
    "prewarm_modules",
    "protocol_base",
    "protocol_methods",
    "pydantic_models",
    "search_fuzzy",
    "server_app",
    "skills_bundled",
    "skills_catalog",
    "store_thread_state",
    "threads_agents",
    "threads_skills_glue",
    "threads_tool_policy",
    "tools_mcp_tool",
    "tools_router",
    "tools_unified_exec",
    "trace_recorder",
    "transport_stdio",
    "transport_websocket",
    "turn_notify",
    "ws_auth",
]

Group = Literal["after-answer", "after-handshake", "on-first-use"]
AFTER_ANSWER: Final = "after-answer"
AFTER_HANDSHAKE: Final = "after-handshake"
ON_FIRST_USE: Final = "on-first-use"

#: The product modules ``pycodex app-server`` (stdio, no flags) has imported when its ``initialize`` answer
#: is written: the fast path and nothing of the server (no pydantic, no asyncio either).
BEFORE_ANSWER: Final = frozenset({
    "app_server", "app_server.loading", "app_server.main", "app_server.startup", "pycodex", "pycodex.cli",
    "pycodex.json_types", "pycodex.jsonrpc", "pycodex.jsonrpc.codec", "pycodex.jsonrpc.errors",
    "pycodex.jsonrpc.framing", "pycodex.jsonrpc.peer", "pycodex.signals", "pycodex.trace",
})

#: What it has imported besides once the server is built and has served that ``initialize``: the server,
#: config, stores, the method table and the ``initialize`` family (no other family, no turn machinery).
#: Measured with no API key, so the provider is the built-in scripted one and its script is checked.
AT_STARTUP: Final = frozenset({
    "app_server.app", "app_server.config", "app_server.config.errors", "app_server.config.loader",
    "app_server.config.mcp_servers", "app_server.config.providers", "app_server.config.schema",
    "app_server.config.tables", "app_server.connection", "app_server.context", "app_server.environments",
    "app_server.handlers", "app_server.model", "app_server.model.auth", "app_server.model.errors",
    "app_server.model.events", "app_server.model.provider", "app_server.model.retry",
    "app_server.model.retry_hints", "app_server.model.script", "app_server.model.scripted",
    "app_server.model.sse", "app_server.protocol", "app_server.protocol.base",
    "app_server.protocol.declarations", "app_server.protocol.initialize", "app_server.protocol.method_names",
    "app_server.protocol.method_table", "app_server.protocol.notices", "app_server.router",
    "app_server.session", "app_server.store", "app_server.store.errors", "app_server.store.ids",
    "app_server.store.index", "app_server.store.indexing", "app_server.store.layout",
    "app_server.store.reconstruct", "app_server.store.records", "app_server.store.store",
    "app_server.store.thread_shape", "app_server.store.writer", "app_server.surface_state",
    "app_server.threads", "app_server.threads.contracts", "app_server.threads.lifecycle",
    "app_server.threads.manager", "app_server.threads.prompt", "app_server.threads.services",
    "app_server.threads.state", "app_server.tools", "app_server.tools.contracts", "app_server.tools.processes",
    "app_server.tools.sandbox", "app_server.tools.shell_snapshot", "app_server.truncation", "exec_client",
    "exec_client.environment", "exec_client.local_environment", "exec_client.wire", "exec_client.wire.errors",
    "pycodex.jsonrpc.router", "pycodex.jsonrpc.serde", "pycodex.lazy_exports", "pycodex.log_context",
    "pycodex.logging_setup", "pycodex.platform", "pycodex.platform.fd_reader", "pycodex.platform.landlock",
    "pycodex.platform.spawn", "pycodex.trace.recorder", "pycodex.trace.redact", "pycodex.transport",
    "pycodex.transport.base", "pycodex.transport.endpoint", "pycodex.transport.stdio",
})

_DECLARED: list[LazyModule] = []


class LazyModule:
    """A module imported on the first read of one of its attributes; declared with its group and why."""

    __slots__ = ("_module", "group", "name", "reason")

    def __init__(self, name: str, group: Group, reason: str) -> None:
        self.name = name
        self.group = group
        self.reason = reason
        self._module: ModuleType | None = None
        _DECLARED.append(self)

    def load(self) -> ModuleType:
        """The module, imported now if it is not yet."""
        module = self._module
        if module is None:
            # The import statement's own path (not importlib.import_module), so `-X importtime` sees it.
            __import__(self.name)
            module = self._module = sys.modules[self.name]
        return module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.load(), attr)

    def __repr__(self) -> str:
        return f"<LazyModule {self.name} ({self.group})>"


def declared(group: Group | None = None) -> tuple[LazyModule, ...]:
    """Every deferred module, or those of one group, in declaration order."""
    return tuple(m for m in _DECLARED if group is None or m.group == group)


def prewarm_modules() -> tuple[str, ...]:
    """What :func:`prewarm` imports: the after-handshake group."""
    return tuple(m.name for m in declared(AFTER_HANDSHAKE))


def prewarm(on_error: Callable[[str], None]) -> None:
    """Import the after-handshake group (run in a worker thread once a client has finished its handshake);
    ``on_error(name)`` is called inside the ``except`` of a module that failed (the turn that needs it
    reports the failure properly)."""
    for module in declared(AFTER_HANDSHAKE):
        try:
            module.load()
        except Exception:
            on_error(module.name)


def _prewarm_only(name: str, reason: str) -> None:
    """A module the first turn needs that no code here reads through a LazyModule (a handler family the
    method table loads, or a library module imported deep inside another)."""
    LazyModule(name, AFTER_HANDSHAKE, reason)


# -- after the answer: start-up, once `initialize` is written ------------------------------------------------
if TYPE_CHECKING:
    import pydantic as pydantic_models

    from app_server import app as server_app
    from app_server.model import scripted as model_scripted
    from app_server.protocol import base as protocol_base
    from pycodex import logging_setup
    from pycodex.trace import recorder as trace_recorder
    from pycodex.transport import stdio as transport_stdio
    from pycodex.transport import websocket as transport_websocket
    from pycodex.transport import ws_auth
else:
    server_app = LazyModule("app_server.app", AFTER_ANSWER, "the server: config, stores, router")
    logging_setup = LazyModule("pycodex.logging_setup", AFTER_ANSWER, "logging, configured as the loop starts")
    trace_recorder = LazyModule("pycodex.trace.recorder", AFTER_ANSWER, "the --trace recorder")
    transport_stdio = LazyModule("pycodex.transport.stdio", AFTER_ANSWER, "the stdio transport")
    transport_websocket = LazyModule("pycodex.transport.websocket", ON_FIRST_USE,
                                     "websockets, only for a ws:// listener")
    model_scripted = LazyModule("app_server.model.scripted", AFTER_ANSWER,
                                "the scripted model: its script is checked at start-up when it is the provider")
    # Handler families turn their results into wire JSON with these; the method table itself needs neither.
    protocol_base = LazyModule("app_server.protocol.base", AFTER_ANSWER, "to_wire, for a family's answers")
    pydantic_models = LazyModule("pydantic", AFTER_ANSWER, "BaseModel, to tell a model result from a dict")
    ws_auth = LazyModule("pycodex.transport.ws_auth", ON_FIRST_USE, "JWT/token auth, only for a ws:// listener")

# -- after the handshake: what a first thread and turn import (the prewarm) ----------------------------------
_prewarm_only("app_server.handlers.threads", "the thread/start family")
_prewarm_only("app_server.handlers.turns", "the turn/start family")
_prewarm_only("app_server.handlers.info", "model/list and the other requests a client sends at once")
_prewarm_only("app_server.protocol.notifications", "the notifications of a thread and a turn")
_prewarm_only("app_server.threads.runner", "the turn runner")
_prewarm_only("app_server.tools.exec_tool", "exec_command, the first tool call")
_prewarm_only("app_server.prompts", "the base instructions, read through importlib.resources")
_prewarm_only("exec_client.wire.protocol", "a local exec's output pump reads the wire's chunk size")
_prewarm_only("exec_client.wire.sandbox_context", "the sandbox context is built per command")
_prewarm_only("anyio._backends._asyncio", "httpx picks its anyio backend on the first request")
_prewarm_only("anyio._core._sockets", "httpx opens its first connection through it")
if TYPE_CHECKING:
    import app_server.skills as skills_catalog
    from app_server.mcp import service as mcp_service
    from app_server.model import client as model_client
    from app_server.model import clients as model_clients
    from app_server.protocol import methods as protocol_methods
    from app_server.skills import bundled as skills_bundled
    from app_server.store import thread_state as store_thread_state
    from app_server.threads import agents as threads_agents
    from app_server.threads import skills_glue as threads_skills_glue
    from app_server.threads import tool_policy as threads_tool_policy
    from app_server.tools import router as tools_router
    from app_server.tools import unified_exec as tools_unified_exec
else:
    protocol_methods = LazyModule("app_server.protocol.methods", AFTER_HANDSHAKE,
                                  "every method's wire models and the experimental-field gate")
    model_clients = LazyModule("app_server.model.clients", AFTER_HANDSHAKE, "the model clients, per provider")
    model_client = LazyModule("app_server.model.client", AFTER_HANDSHAKE, "the HTTP Responses client (httpx)")
    skills_catalog = LazyModule("app_server.skills", AFTER_HANDSHAKE, "the skills catalog")
    skills_bundled = LazyModule("app_server.skills.bundled", AFTER_HANDSHAKE, "pycodex's system skills")
    store_thread_state = LazyModule("app_server.store.thread_state", AFTER_HANDSHAKE,
                                    "read states and goals (sqlite), opened for the first thread")
    mcp_service = LazyModule("app_server.mcp.service", AFTER_HANDSHAKE, "a thread's MCP servers (no SDK)")
    threads_skills_glue = LazyModule("app_server.threads.skills_glue", AFTER_HANDSHAKE, "a thread's skills")
    threads_agents = LazyModule("app_server.threads.agents", AFTER_HANDSHAKE, "the server's sub-agents")
    threads_tool_policy = LazyModule("app_server.threads.tool_policy", AFTER_HANDSHAKE, "which tools a turn gets")
    tools_unified_exec = LazyModule("app_server.tools.unified_exec", AFTER_HANDSHAKE, "a thread's exec sessions")
    tools_router = LazyModule("app_server.tools.router", AFTER_HANDSHAKE, "tool-call routing")

# -- on first use: what only some sessions need -------------------------------------------------------------
if TYPE_CHECKING:
    from app_server import notify as turn_notify
    from app_server.config import write as config_write
    from app_server.mcp import client as mcp_client
    from app_server.mcp import manager as mcp_manager
    from app_server.mcp import wire as mcp_wire
    from app_server.model import provider_write as model_provider_write
    from app_server.search import fuzzy as search_fuzzy
    from app_server.tools import mcp_tool as tools_mcp_tool
    from exec_client import client as exec_client_client
    from exec_client import remote as exec_client_remote
else:
    mcp_manager = LazyModule("app_server.mcp.manager", ON_FIRST_USE, "the MCP SDK, for a thread with MCP servers")
    mcp_client = LazyModule("app_server.mcp.client", ON_FIRST_USE, "the MCP SDK's client session")
    mcp_wire = LazyModule("app_server.mcp.wire", ON_FIRST_USE, "MCP answers in the app-server's wire shapes")
    tools_mcp_tool = LazyModule("app_server.tools.mcp_tool", ON_FIRST_USE, "a call of an MCP tool")
    turn_notify = LazyModule("app_server.notify", ON_FIRST_USE, "the `notify` program, when config sets one")
    search_fuzzy = LazyModule("app_server.search.fuzzy", ON_FIRST_USE, "fuzzyFileSearch")
    config_write = LazyModule("app_server.config.write", ON_FIRST_USE, "config/value/write and friends")
    model_provider_write = LazyModule("app_server.model.provider_write", ON_FIRST_USE, "model provider setup")
    exec_client_client = LazyModule("exec_client.client", ON_FIRST_USE, "a remote exec-server environment")
    exec_client_remote = LazyModule("exec_client.remote", ON_FIRST_USE, "the Noise relay environment")
