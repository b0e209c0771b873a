"""An asyncio library that drives an agent CLI (``pycodex exec --json`` or ``codex exec --json``).

    gateway = Gateway()
    gateway.register(CodexBackend(BackendConfig(binary="/path/to/codex")))
    handle = await gateway.run("codex", RunRequest(prompt="hi", working_dir="."))
    async for event in handle.events: ...
    completion = await handle.completion   # raises BackendError on a classified failure

Events flow through bounded hops (32 each): a consumer that stops reading stalls the child instead of
growing memory, and ``completion`` stays pending until the events are drained or closed. Closing the
events never kills the child; ``handle.cancel.cancel()`` and the request timeout do.
"""

from agent_api.backends import BackendConfig, CodexBackend, ExecBackend, PycodexBackend
from agent_api.errors import (
    AgentApiError,
    BackendError,
    InvalidRequest,
    UnknownBackend,
    UnsupportedCapability,
)
from agent_api.gateway import Gateway
from agent_api.run import CancelHandle, EventStream, RunHandle
from agent_api.values import Completion, Event, EventKind, RunRequest, SessionSelector

__all__ = [
    "AgentApiError",
    "BackendConfig",
    "BackendError",
    "CancelHandle",
    "CodexBackend",
    "Completion",
    "Event",
    "EventKind",
    "EventStream",
    "ExecBackend",
    "Gateway",
    "InvalidRequest",
    "PycodexBackend",
    "RunHandle",
    "RunRequest",
    "SessionSelector",
    "UnknownBackend",
    "UnsupportedCapability",
]
