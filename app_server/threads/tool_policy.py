"""Which tools a thread offers the model, from how it was started.

Codex gives a thread started with ``environments: []`` no environment and no tools at all (the TUI's title
threads use that: a structured answer, no commands), and a thread whose config switches the shell tool off no
command tools. Such a thread must not offer exec_command: the model would call it and the turn would fail.
"""

from __future__ import annotations

from collections.abc import Sequence

from app_server.threads.state import ThreadRuntime
from pycodex.json_types import JsonObj

__all__ = ["apply_start_params", "tools_for"]

EXEC_TOOLS = frozenset({"exec_command", "write_stdin"})


def _feature_off(config: JsonObj | None, name: str) -> bool:
    if not config:
        return False
    if config.get(f"features.{name}") is False:
        return True
    features = config.get("features")
    return isinstance(features, dict) and features.get(name) is False


def apply_start_params(
    thread: ThreadRuntime, environments: Sequence[object] | None, config: JsonObj | None
) -> None:
    """Record what thread/start asked for: no environment (``[]``) and/or no shell tool."""
    if environments is not None and not environments:
        thread.services.environment.disable()
    if _feature_off(config, "shell_tool"):
        thread.shell_tool_enabled = False


def tools_for(thread: ThreadRuntime, tools: Sequence[JsonObj]) -> tuple[JsonObj, ...]:
    """The tools offered to the model: none without an environment, no command tools without the shell."""
    if thread.services.environment.disabled:
        return ()
    if not thread.shell_tool_enabled:
        return tuple(t for t in tools if t.get("name") not in EXEC_TOOLS)
    return tuple(tools)
