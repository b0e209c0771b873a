"""What the app-server loads at start-up and what it defers: the one place that says so.

Serving ``initialize`` must stay cheap (Codex clients time the handshake), so the server's modules load in
five steps, each declared here:

1. **Before the answer** (:data:`BEFORE_ANSWER`): ``pycodex app-server`` on stdio answers ``initialize`` from
   ``app_server/startup.py``, which needs only the standard library and the JSON-RPC codec.
2. **At start-up** (:data:`AT_STARTUP`, group :data:`AFTER_ANSWER`): the server itself, its config, stores
   and the ``initialize`` family, built once the answer is written.
3. **After the handshake** (group :data:`AFTER_HANDSHAKE`): what the first thread needs, imported by
   :func:`prewarm` in a worker thread once a client sends ``initialized``, while it is idle; ``thread/start``
   waits for it, so the thread's services find their modules loaded.
4. **After the first thread** (group :data:`AFTER_FIRST_THREAD`): what a first turn needs besides (the
   turn family, the HTTP client, the tools), imported the same way once a thread has been handed out (while
   the client composes its first prompt); ``turn/start`` waits for it, so the first turn does not pay for
   the imports, and ``thread/start`` is not kept waiting for them.
5. **On first use** (group :data:`ON_FIRST_USE`): what only some sessions need (the MCP SDK, fuzzy search,
   config writes, remote environments), imported by the first call that needs it.

A deferred module is a :class:`~app_server.lazy.LazyModule` handle, declared by the code that uses it beside
the real import its type checker reads (``app_server/lazy.py`` shows the form); the interpreter imports it on
the first attribute read. This module imports none of them, so it is a leaf of the import graph: it only
says, in :data:`DEFERRED`, each deferred module's group and why. Request handler families are deferred by
the method table (``app_server/protocol/method_table.py``), one family on its first request; the families a
first thread and turn use are in the two prewarm groups.

``tests/app_server/test_app_server_startup_imports.py`` pins the start-up sets against a real
``pycodex app-server``, ``tests/app_server/test_loading.py`` pins the prewarm groups against a first thread and turn and
lists the few imports inside functions that remain in ``app_server`` (each with its reason) and checks that
every ``LazyModule("x")`` in the code names a module declared here.

This module imports only the standard library.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "AFTER_ANSWER",
    "AFTER_FIRST_THREAD",
    "AFTER_HANDSHAKE",
    "AT_STARTUP",
    "BEFORE_ANSWER",
    "DEFERRED",
    "ON_FIRST_USE",
    "Deferred",
    "Group",
    "declared",
    "prewarm",
    "prewarm_modules",
]

Group = Literal["after-answer", "after-handshake", "after-first-thread", "on-first-use"]
AFTER_ANSWER: Final = "after-answer"
AFTER_HANDSHAKE: Final = "after-handshake"
AFTER_FIRST_THREAD: Final = "after-first-thread"
ON_FIRST_USE: Final = "on-first-use"

#: The product modules ``pycodex app-server`` (stdio, no flags) has imported when its ``initialize`` answer
#: is written: the fast path and nothing of the server (no pydantic, no asyncio either).
BEFORE_ANSWER: Final = frozenset({
    "app_server", "app_server.lazy", "app_server.main", "app_server.startup", "pycodex", "pycodex.cli",
    "pycodex.codex_home", "pycodex.json_types", "pycodex.jsonrpc", "pycodex.lean_imports", "pycodex.jsonrpc.codec",
    "pycodex.jsonrpc.errors",
    "pycodex.jsonrpc.framing", "pycodex.jsonrpc.peer", "pycodex.signals", "pycodex.trace",
})

#: What it has imported besides once the server is built and has served that ``initialize``: the server,
#: config, stores, the method table and the ``initialize`` family (no other family, no turn machinery).
#: Measured with no config and no API key: the provider is the built-in `openai` one (the offline `scripted`
#: model, and its script check, load only when it is the provider; the stream events only with a turn).
AT_STARTUP: Final = frozenset({
    "app_server.app", "app_server.config", "app_server.config.errors", "app_server.config.loader",
    "app_server.config.mcp_servers", "app_server.config.providers", "app_server.config.schema",
    "app_server.config.tables", "app_server.connection", "app_server.context", "app_server.environments",
    "app_server.errors",
    "app_server.handlers", "app_server.loading", "app_server.model", "app_server.model.auth",
    "app_server.model.provider", "app_server.protocol", "app_server.protocol.base",
    "app_server.protocol.declarations", "app_server.protocol.initialize", "app_server.protocol.method_names",
    "app_server.protocol.method_table", "app_server.protocol.method_table_surface", "app_server.protocol.notices",
    "app_server.router",
    "app_server.session", "app_server.store", "app_server.store.errors", "app_server.store.ids",
    "app_server.store.index", "app_server.store.indexing", "app_server.store.layout",
    "app_server.store.reconstruct", "app_server.store.records", "app_server.store.store",
    "app_server.store.thread_shape", "app_server.store.writer", "app_server.surface_state",
    "app_server.shell_words", "app_server.store.codex_db", "app_server.store.codex_format",
    "app_server.store.codex_history",
    "app_server.store.codex_item_fields", "app_server.store.codex_items", "app_server.store.intact",
    "app_server.store.codex_schema", "app_server.store.codex_state", "app_server.store.git_info", "pycodex.git_repo",
    "app_server.store.index_sync", "app_server.store.migrate", "app_server.store.rollout_file",
    "app_server.store.session_index", "app_server.store.writer_lock", "app_server.store.compression",
    "app_server.threads", "app_server.threads.contracts", "app_server.threads.lifecycle",
    "app_server.threads.manager", "app_server.threads.prompt", "app_server.threads.services",
    "app_server.threads.state", "app_server.tools", "app_server.tools.code_mode", "app_server.tools.code_mode.cells",
    "app_server.tools.contracts", "app_server.tools.processes",
    "app_server.tools.sandbox", "app_server.tools.shell_snapshot", "app_server.truncation", "exec_client",
    "exec_client.environment", "exec_client.local_environment", "exec_client.wire", "exec_client.wire.errors",
    "pycodex.jsonrpc.path_fields", "pycodex.jsonrpc.router", "pycodex.jsonrpc.serde", "pycodex.jsonrpc.unknown_fields",
    "pycodex.lazy_exports", "pycodex.log_context",
    "pycodex.logging_setup", "pycodex.platform", "pycodex.platform.fd_reader", "pycodex.platform.landlock",
    "pycodex.platform.spawn", "pycodex.trace.recorder", "pycodex.trace.redact", "pycodex.transport",
    "pycodex.transport.base", "pycodex.transport.endpoint", "pycodex.transport.stdio",
    # OpenTelemetry's hooks and the [otel] settings: standard library only, the SDK loads only when configured.
    "app_server.config.otel", "pycodex.otel", "pycodex.otel.settings",
})


@dataclass(frozen=True, slots=True)
class Deferred:
    """When a deferred module loads, and why it waits."""

    group: Group
    reason: str


#: Every deferred module (a ``LazyModule`` handle somewhere, or imported by :func:`prewarm`), in load order.
DEFERRED: Final[Mapping[str, Deferred]] = {
    # -- after the answer: start-up, once `initialize` is written
    'app_server.app': Deferred(AFTER_ANSWER, 'the server: config, stores, router'),
    'pycodex.logging_setup': Deferred(AFTER_ANSWER, 'logging, configured as the loop starts'),
    'pycodex.trace.recorder': Deferred(AFTER_ANSWER, 'the --trace recorder'),
    'pycodex.transport.stdio': Deferred(AFTER_ANSWER, 'the stdio transport'),
    'app_server.protocol.base': Deferred(AFTER_ANSWER, "to_wire, for a family's answers"),
    'pydantic': Deferred(AFTER_ANSWER, 'BaseModel, to tell a model result from a dict'),
    # -- after the handshake: what a first thread imports (the prewarm); some of these no code reads through a
    # handle (a handler family the method table loads, a module imported deep inside another)
    'app_server.handlers.threads': Deferred(AFTER_HANDSHAKE, 'the thread/start family'),
    'app_server.protocol.methods': Deferred(AFTER_HANDSHAKE, "every method's wire models and the experimental-field gate"),
    'app_server.model.clients': Deferred(AFTER_HANDSHAKE, "the model clients, per provider (thread/start checks its provider)"),
    'app_server.skills': Deferred(AFTER_HANDSHAKE, 'the skills catalog'),
    'app_server.skills.bundled': Deferred(AFTER_HANDSHAKE, "pycodex's system skills"),
    'app_server.store.thread_state': Deferred(AFTER_HANDSHAKE, 'read states and goals (sqlite), opened for the first thread'),
    'app_server.mcp.service': Deferred(AFTER_HANDSHAKE, "a thread's MCP servers (no SDK)"),
    'app_server.threads.skills_glue': Deferred(AFTER_HANDSHAKE, "a thread's skills"),
    'app_server.threads.agents': Deferred(AFTER_HANDSHAKE, "the server's sub-agents"),
    'app_server.threads.tool_policy': Deferred(AFTER_HANDSHAKE, 'which tools a turn gets'),
    'app_server.tools.unified_exec': Deferred(AFTER_HANDSHAKE, "a thread's exec sessions"),
    # -- after the first thread: what a first turn imports besides, once a thread is handed out
    'app_server.handlers.turns': Deferred(AFTER_FIRST_THREAD, 'the turn/start family'),
    'app_server.threads.runner': Deferred(AFTER_FIRST_THREAD, 'the turn runner'),
    'app_server.handlers.info': Deferred(AFTER_FIRST_THREAD, 'model/list and the other requests a client sends at once'),
    'app_server.tools.exec_tool': Deferred(AFTER_FIRST_THREAD, 'exec_command, the first tool call'),
    'app_server.tools.router': Deferred(AFTER_FIRST_THREAD, 'tool-call routing'),
    'app_server.prompts': Deferred(AFTER_FIRST_THREAD, 'the base instructions, read through importlib.resources'),
    'exec_client.wire.sandbox_context': Deferred(AFTER_FIRST_THREAD, 'the sandbox context is built per command'),
    'app_server.model.client': Deferred(AFTER_FIRST_THREAD, 'the HTTP Responses client (httpx), built for the first turn'),
    'anyio._backends._asyncio': Deferred(AFTER_FIRST_THREAD, 'httpx picks its anyio backend on the first request'),
    'anyio._core._sockets': Deferred(AFTER_FIRST_THREAD, 'httpx opens its first connection through it'),
    # -- on first use: what only some sessions need
    'pycodex.transport.websocket': Deferred(ON_FIRST_USE, 'websockets, only for a ws:// listener'),
    'pycodex.transport.unix': Deferred(ON_FIRST_USE, 'websockets over a unix socket, only for a unix:// listener'),
    'pycodex.transport.ws_auth': Deferred(ON_FIRST_USE, 'JWT/token auth, only for a ws:// listener'),
    'app_server.mcp.manager': Deferred(ON_FIRST_USE, 'the MCP SDK, for a thread with MCP servers'),
    'app_server.model.scripted': Deferred(ON_FIRST_USE, 'the offline scripted model, only when it is the provider (its script is then checked at start-up)'),
    'app_server.mcp.client': Deferred(ON_FIRST_USE, "the MCP SDK's client session"),
    'app_server.mcp.wire': Deferred(ON_FIRST_USE, "MCP answers in the app-server's wire shapes"),
    'app_server.tools.mcp_tool': Deferred(ON_FIRST_USE, 'a call of an MCP tool'),
    'app_server.notify': Deferred(ON_FIRST_USE, 'the `notify` program, when config sets one'),
    'app_server.handlers.projects': Deferred(ON_FIRST_USE, "projects, for a thread/* request that names or reports a project (the fs family's models and watcher with them)"),
    'app_server.search.fuzzy': Deferred(ON_FIRST_USE, 'fuzzyFileSearch'),
    'app_server.config.write': Deferred(ON_FIRST_USE, 'config/value/write and friends'),
    'app_server.model.provider_write': Deferred(ON_FIRST_USE, 'model provider setup'),
    'exec_client.client': Deferred(ON_FIRST_USE, 'a remote exec-server environment'),
    'exec_client.remote': Deferred(ON_FIRST_USE, 'the Noise relay environment'),
    'app_server.providers': Deferred(ON_FIRST_USE, 'environments with a provider: a box per thread'),
    'app_server.tools.image_codec': Deferred(ON_FIRST_USE, 'image preparation, for the first image a model is sent'),
    'PIL.Image': Deferred(ON_FIRST_USE, 'Pillow, to decode and re-encode images'),
}


def declared(group: Group | None = None) -> tuple[str, ...]:
    """The deferred modules, or those of one group, in declaration order."""
    return tuple(name for name, d in DEFERRED.items() if group is None or d.group == group)


def prewarm_modules(group: Group = AFTER_HANDSHAKE) -> tuple[str, ...]:
    """What :func:`prewarm` imports for ``group``: the after-handshake group, or the after-first-thread one."""
    return declared(group)


def prewarm(on_error: Callable[[str], None], group: Group = AFTER_HANDSHAKE) -> None:
    """Import a prewarm group (run in a worker thread: the after-handshake group once a client has finished
    its handshake, the after-first-thread group once a thread has been handed out); ``on_error(name)`` is
    called inside the ``except`` of a module that failed (the turn that needs it reports the failure
    properly)."""
    for name in prewarm_modules(group):
        try:
            __import__(name)
        except Exception:
            on_error(name)
