"""The tools offered per model slug and config switch equal Codex 0.169's, descriptions aside.

The recording (tests/data/tools/codex_0169_tools.json, scripts/capture_tool_specs.py) holds the first
request's tools of each case with descriptions dropped; our specs, dropped the same way, must be equal:
same names, types, order and parameter schemas.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from app_server.tools.code_mode.specs import HELD_BACK, NESTED_HELD_BACK
from app_server.tools.toolset import (
    NOT_BUILT,
    choose_tools,
    code_mode_tools,
    offered_specs,
    switches_from_config,
)
from scripts.capture_tool_specs import CASES, _strip

DATA = Path(__file__).resolve().parents[2] / "data" / "tools" / "codex_0169_tools.json"
RECORDED = json.loads(DATA.read_text())["cases"]
#: Codex drives these in code mode (no `tools`; an `additional_tools` input item instead).
CODE_MODE = {c["name"] for c in RECORDED if c["additional_tools"]}


def _ours(case: dict[str, Any]) -> list[Any]:
    config = tomllib.loads("\n".join(case["config"]))
    ours: list[Any] = _strip(offered_specs(choose_tools(case["model"], switches_from_config(config))))
    return ours


@pytest.mark.parametrize("case", [c for c in RECORDED if c["name"] not in CODE_MODE], ids=lambda c: c["name"])
def test_offered_tools_match_codex(case: dict[str, Any]) -> None:
    # Codex's tools minus the ones pycodex leaves out until it can run them (toolset.NOT_BUILT).
    assert _ours(case) == [t for t in case["tools"] if (t.get("name") or t["type"]) not in NOT_BUILT]



def test_the_recording_covers_a_catalog_model_a_dated_slug_and_an_unknown_one() -> None:
    names = {c["name"] for c in RECORDED}
    assert {"gpt-5.5", "gpt-5.5-dated", "mock-model"} <= names
    assert [c[0] for c in CASES] == [c["name"] for c in RECORDED]


def _choice(case: dict[str, Any]) -> Any:
    return choose_tools(case["model"], switches_from_config(tomllib.loads("\n".join(case["config"]))))


def _without_held_back(namespaces: list[Any]) -> list[Any]:
    return [dict(ns, tools=[t for t in ns["tools"] if t["name"] not in HELD_BACK])
            for ns in namespaces if ns["name"] not in HELD_BACK]


@pytest.mark.parametrize("case", [c for c in RECORDED if c["name"] in CODE_MODE], ids=lambda c: c["name"])
def test_code_mode_item_matches_codex(case: dict[str, Any]) -> None:
    # No `tools`, and the additional_tools item's namespaces and tools equal Codex's minus what is held back.
    choice = _choice(case)
    assert choice.code_mode and offered_specs(choice) == [] and case["tools"] == []
    tools = code_mode_tools(choice)
    assert tools is not None
    item = tools.item
    assert item["type"] == "additional_tools" and item["role"] == "developer"
    assert item["id"].startswith("at_") and case["additional_tools_index"] == [0]
    [recorded] = case["additional_tools_specs"]
    assert _strip(item["tools"]) == _without_held_back(recorded)


@pytest.mark.parametrize("case", [c for c in RECORDED if c["name"] in CODE_MODE], ids=lambda c: c["name"])
def test_code_mode_scripts_get_codex_nested_tools(case: dict[str, Any]) -> None:
    tools = code_mode_tools(_choice(case))
    assert tools is not None
    exec_spec = next(t for ns in tools.item["tools"] for t in ns["tools"] if t["name"] == "exec")
    ours = re.findall(r"^### `([^`]+)`$", exec_spec["description"], re.M)
    [recorded] = case["exec_nested_tools"]
    assert ours == [name for name in recorded if name not in NESTED_HELD_BACK]


def test_what_is_held_back_is_exactly_what_codex_offers_beyond_ours() -> None:
    # Every held-back name is offered by Codex for some recorded model (no stale entries).
    offered = {name for c in RECORDED for ns in c["additional_tools"] for name in [ns[0], *(t[1] for t in ns[1])]}
    nested = {name for c in RECORDED for names in c["exec_nested_tools"] for name in names}
    assert offered >= HELD_BACK and nested >= NESTED_HELD_BACK


def test_direct_models_get_no_code_mode_item() -> None:
    for case in RECORDED:
        if case["name"] not in CODE_MODE:
            assert code_mode_tools(_choice(case)) is None


def _description_texts(value: Any, *, in_properties: bool = False) -> list[str]:
    if isinstance(value, dict):
        found = [] if in_properties else [v for k, v in value.items() if k == "description" and isinstance(v, str)]
        return found + [t for k, v in value.items() for t in _description_texts(v, in_properties=k == "properties")]
    if isinstance(value, list):
        return [t for v in value for t in _description_texts(v)]
    return []


def test_the_recording_keeps_no_codex_prose_and_every_tool_of_ours_is_described() -> None:
    assert _description_texts([[c["tools"], c["additional_tools_specs"]] for c in RECORDED]) == []
    for spec in offered_specs(choose_tools("mock-model", switches_from_config())):
        assert spec["type"] == "web_search" or spec["description"]


@pytest.mark.codex
def test_the_recording_matches_the_live_binary(codex_bin: Path) -> None:
    from scripts.capture_tool_specs import _capture

    for name in ("gpt-5.5", "mock-model", "gpt-5.6-luna"):
        case = next(c for c in RECORDED if c["name"] == name)
        live = _capture(str(codex_bin), case["model"], case["config"])
        assert (live["tools"], live["additional_tools_specs"]) == (case["tools"], case["additional_tools_specs"])
