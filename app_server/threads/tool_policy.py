"""Which tools a thread offers the model, from how it was started and the model it runs.

Codex gives a thread started with ``environments: []`` no environment and no tools at all (the TUI's title
threads use that: a structured answer, no commands). Otherwise the model's catalog metadata and the config
switches choose the set (``tools.toolset``); thread/start's ``config`` overrides config.toml's switches.
A code-mode model gets no ``tools`` but an ``additional_tools`` input item (``code_mode_for``); its
skill and MCP tools are held back there (scripts cannot call them yet).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app_server.threads.state import ThreadRuntime
from app_server.tools.code_mode.specs import CodeModeTools
from app_server.tools.toolset import choose_tools, code_mode_tools, offered_specs, switches_from_config
from pycodex.json_types import JsonObj, JsonValue

__all__ = ["apply_start_params", "code_mode_for", "default_mode_asks_user", "defers_mcp_tools", "tools_for"]


def apply_start_params(
    thread: ThreadRuntime, environments: Sequence[object] | None, config: JsonObj | None
) -> None:
    """Record what thread/start asked for: no environment (``[]``) and its config's tool switches."""
    if environments is not None and not environments:
        thread.services.environment.disable()
    if config:
        thread.tool_config = dict(config)


def tools_for(
    thread: ThreadRuntime, config: Mapping[str, JsonValue] | None, extra: Sequence[JsonObj] = ()
) -> tuple[JsonObj, ...]:
    """The tools offered to the model of ``thread``: none without an environment, else its toolset + ``extra``."""
    if thread.services.environment.disabled:
        return ()
    agents = thread.services.agents  # a thread at the [agents] max_depth limit may not spawn (Codex: no tools)
    too_deep = agents is not None and not agents.limits().allows_spawn_from(agents.depth(thread.id))
    switches = switches_from_config(config, thread.tool_config,
                                    {"features.multi_agent": False} if too_deep else None)
    choice = choose_tools(thread.settings.model, switches)
    return () if choice.code_mode else (*offered_specs(choice), *extra)


def code_mode_for(thread: ThreadRuntime, config: Mapping[str, JsonValue] | None) -> CodeModeTools | None:
    """A code-mode thread's ``additional_tools`` item and script tools (None otherwise, or without an environment)."""
    if thread.services.environment.disabled:
        return None
    return code_mode_tools(choose_tools(thread.settings.model, switches_from_config(config, thread.tool_config)))


def defers_mcp_tools(thread: ThreadRuntime, config: Mapping[str, JsonValue] | None) -> bool:
    """Whether the MCP tools of ``thread`` stay out of ``tools``, found through tool_search instead."""
    return choose_tools(thread.settings.model, switches_from_config(config, thread.tool_config)).tool_search


def default_mode_asks_user(thread: ThreadRuntime, config: Mapping[str, JsonValue] | None) -> bool:
    """Whether request_user_input may ask in Default mode: ``[features] default_mode_request_user_input``
    (off by default, as in Codex; the one collaboration mode pycodex runs is Default)."""
    features = switches_from_config(config, thread.tool_config).features
    return features.get("default_mode_request_user_input", False)
