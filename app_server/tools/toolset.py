"""Which tools the model is offered: chosen by the model's catalog metadata, then switched by config.

Codex 0.169 decides the set per slug (tests/data/tools/codex_0169_tools.json, one recorded request per
case):

* a slug with catalog metadata of the ``gpt-5.5`` family gets apply_patch as a freeform (grammar) tool,
  tool_search, and web_search with text and image results, and no sub-agent tools in ``tools`` (Codex
  defers ``multi_agent_v1`` behind tool_search, tests/data/tools/codex_0169_tool_search.json);
* a slug without metadata (fallback) gets no apply_patch (edits go through the shell, where an
  ``apply_patch`` heredoc is intercepted), no tool_search, the ``multi_agent_v1`` namespace and a plain
  web_search;
* every set has exec_command/write_stdin, request_user_input, view_image and the three goal tools.

Switches, with Codex's keys: ``[features] shell_tool``, ``view_image``, ``goals``, ``multi_agent`` (each
on by default), and ``web_search = "disabled" | "cached" | "live"`` (cached by default; live lets the
hosted tool reach the web). A thread with no environment gets no tools at all (``threads.tool_policy``).

The other catalog models run in "code mode" (``tools.code_mode``): the request has no ``tools``, their
tools arrive in an ``additional_tools`` input item (``code_mode_tools``) and scripts sent to the JavaScript
``exec`` tool call them.

Sub-agents (``tools.collab_tool``) and tool_search (``tools.tool_search``) are offered as Codex offers them;
the MCP tools tool_search defers leave ``tools`` (``threads.tool_policy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from app_server.threads.model_metadata import catalog_entry
from app_server.tools import specs, specs_agent, specs_collab
from app_server.tools.code_mode import specs as code_mode_specs
from pycodex.json_types import JsonObj, JsonValue

__all__ = ["NOT_BUILT", "ToolChoice", "choose_tools", "code_mode_tools", "offered_specs", "switches_from_config"]

#: Tools Codex offers that pycodex cannot run yet: they are left out rather than offered and refused (a model
#: would call them and fail). The differential test names exactly these as the difference from Codex.
NOT_BUILT: frozenset[str] = frozenset()

WebSearchMode = Literal["disabled", "cached", "live"]


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """The tools one model is offered, and in which variant."""

    shell: bool = True
    request_user_input: bool = True
    #: ``freeform`` (a grammar ``custom`` tool), ``function`` (a JSON ``input`` argument) or None (shell only).
    apply_patch: Literal["freeform", "function"] | None = None
    view_image: bool = True
    multi_agent: bool = False
    goals: bool = True
    tool_search: bool = False
    web_search: WebSearchMode = "cached"
    #: Whether the hosted web search may return images as well as text (catalog models).
    web_search_images: bool = False
    #: Code mode: no ``tools``; an ``additional_tools`` input item (``code_mode_tools``) instead.
    code_mode: bool = False
    #: Code mode's ``clock`` namespace and ``request_user_input_async`` (Codex's experimental_supported_tools).
    experimental: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Switches:
    """What config turns on or off, with Codex's defaults."""

    features: Mapping[str, bool]
    web_search: WebSearchMode = "cached"

    def on(self, name: str) -> bool:
        """Whether feature ``name`` is on (every tool feature defaults to on)."""
        return self.features.get(name, True)


def switches_from_config(*layers: Mapping[str, JsonValue] | None) -> Switches:
    """The switches from config layers, later ones winning (``features.x`` dotted keys count too)."""
    features: dict[str, bool] = {}
    web_search: WebSearchMode = "cached"
    for layer in layers:
        if not layer:
            continue
        table = layer.get("features")
        if isinstance(table, Mapping):
            features.update({k: v for k, v in table.items() if isinstance(v, bool)})
        features.update({k.removeprefix("features."): v for k, v in layer.items()
                         if k.startswith("features.") and isinstance(v, bool)})
        mode = layer.get("web_search")
        if mode in ("disabled", "cached", "live"):
            web_search = mode
    return Switches(features=features, web_search=web_search)


def choose_tools(slug: str, switches: Switches) -> ToolChoice:
    """The tool set for ``slug`` under ``switches``."""
    entry = catalog_entry(slug)
    if entry is None:
        base = ToolChoice(apply_patch=None, multi_agent=True, tool_search=False, web_search_images=False)
    else:
        base = ToolChoice(apply_patch="freeform", multi_agent=entry.get("multiAgentVersion") is not None,
                          tool_search=True, web_search_images=True)
    return ToolChoice(
        shell=switches.on("shell_tool"),
        request_user_input=base.request_user_input,
        apply_patch=base.apply_patch,
        view_image=switches.on("view_image"),
        multi_agent=base.multi_agent and switches.on("multi_agent"),
        goals=switches.on("goals"),
        tool_search=base.tool_search,
        web_search=switches.web_search,
        web_search_images=base.web_search_images,
        code_mode=entry is not None and str(entry["model"]) not in code_mode_specs.CODE_MODE_OFF,
        experimental=code_mode_specs.EXPERIMENTAL_TOOLS.get(str(entry["model"]) if entry else "", frozenset()),
    )


def code_mode_tools(choice: ToolChoice) -> code_mode_specs.CodeModeTools | None:
    """The ``additional_tools`` item and script tools of a code-mode ``choice`` (None for a direct tool set)."""
    if not choice.code_mode:
        return None
    clock = "clock" in choice.experimental
    nested = code_mode_specs.nested_specs(shell=choice.shell, view_image=choice.view_image, goals=choice.goals,
                                          clock=clock)
    item = code_mode_specs.additional_tools_item(nested, request_user_input=choice.request_user_input, clock=clock,
                                                 ask_async="send_user_message_async" in choice.experimental)
    return code_mode_specs.CodeModeTools(item, tuple(nested))


def offered_specs(choice: ToolChoice) -> list[JsonObj]:
    """The specs of ``choice``, in the order Codex sends them (none in code mode: see ``code_mode_tools``)."""
    out: list[JsonObj] = []
    if choice.code_mode:
        return out
    if choice.shell:
        out += specs.tool_specs()
    if choice.request_user_input:
        out.append(specs_agent.REQUEST_USER_INPUT)
    if choice.apply_patch == "freeform":
        out.append(specs_agent.APPLY_PATCH_FREEFORM)
    elif choice.apply_patch == "function":
        out.append(specs_agent.APPLY_PATCH_FUNCTION)
    if choice.view_image:
        out.append(specs_agent.VIEW_IMAGE)
    if choice.multi_agent and "multi_agent_v1" not in NOT_BUILT:
        out.append(specs_collab.MULTI_AGENT_V1)
    if choice.goals:
        out += [specs_agent.GET_GOAL, specs_agent.CREATE_GOAL, specs_agent.UPDATE_GOAL]
    if choice.tool_search and "tool_search" not in NOT_BUILT:
        out.append(specs_agent.TOOL_SEARCH)
    if choice.web_search != "disabled":
        out.append(specs_agent.web_search(live=choice.web_search == "live", content_types=choice.web_search_images))
    return out
