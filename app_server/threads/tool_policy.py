"""Which tools a thread offers the model, from how it was started and the model it runs.

Codex gives a thread started with ``environments: []`` no environment and no tools at all (the TUI's title
threads use that: a structured answer, no commands). Otherwise the model's catalog metadata and the config
switches choose the set (``tools.toolset``); thread/start's ``config`` overrides config.toml's switches.
A code-mode model gets no ``tools`` but an ``additional_tools`` input item (``code_mode_item_for``); its
skill and MCP tools are held back there (scripts cannot call them yet).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app_server.threads.state import ThreadRuntime
from app_server.tools.code_mode.specs import nested_specs
from app_server.tools.toolset import choose_tools, code_mode_item, offered_specs, switches_from_config
from pycodex.json_types import JsonObj, JsonValue

__all__ = ["apply_start_params", "code_mode_item_for", "code_mode_tools_for", "default_mode_asks_user", "tools_for"]


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
    switches = switches_from_config(config, thread.tool_config)
    choice = choose_tools(thread.settings.model, switches)
    return () if choice.code_mode else (*offered_specs(choice), *extra)


def code_mode_item_for(thread: ThreadRuntime, config: Mapping[str, JsonValue] | None) -> JsonObj | None:
    """The ``additional_tools`` item of a code-mode model's thread (None otherwise, or without an environment)."""
    if thread.services.environment.disabled:
        return None
    return code_mode_item(choose_tools(thread.settings.model, switches_from_config(config, thread.tool_config)))


def code_mode_tools_for(thread: ThreadRuntime, config: Mapping[str, JsonValue] | None) -> list[JsonObj] | None:
    """The tools a code-mode thread's exec scripts may call (None when the thread is not in code mode)."""
    if thread.services.environment.disabled:
        return None
    choice = choose_tools(thread.settings.model, switches_from_config(config, thread.tool_config))
    if not choice.code_mode:
        return None
    return nested_specs(shell=choice.shell, view_image=choice.view_image, goals=choice.goals, clock=choice.clock)


def default_mode_asks_user(thread: ThreadRuntime, config: Mapping[str, JsonValue] | None) -> bool:
    """Whether request_user_input may ask in Default mode: ``[features] default_mode_request_user_input``
    (off by default, as in Codex; the one collaboration mode pycodex runs is Default)."""
    features = switches_from_config(config, thread.tool_config).features
    return features.get("default_mode_request_user_input", False)
