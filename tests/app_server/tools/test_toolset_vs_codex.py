"""The tools offered per model slug and config switch equal Codex 0.169's, descriptions aside.

The recording (tests/data/tools/codex_0169_tools.json, scripts/capture_tool_specs.py) holds the first
request's tools of each case with descriptions dropped; our specs, dropped the same way, must be equal:
same names, types, order and parameter schemas.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from app_server.tools.toolset import NOT_BUILT, choose_tools, offered_specs, switches_from_config
from scripts.capture_tool_specs import CASES, _strip

DATA = Path(__file__).resolve().parents[2] / "data" / "tools" / "codex_0169_tools.json"
RECORDED = json.loads(DATA.read_text())["cases"]
#: Codex drives these in code mode (tools inside an `additional_tools` input item); pycodex has none.
CODE_MODE = {"gpt-6.1-sol"}


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


def test_code_mode_models_are_the_recorded_exception() -> None:
    for case in RECORDED:
        if case["name"] in CODE_MODE:
            assert case["tools"] == [] and case["additional_tools"]


def _description_texts(value: Any, *, in_properties: bool = False) -> list[str]:
    if isinstance(value, dict):
        found = [] if in_properties else [v for k, v in value.items() if k == "description" and isinstance(v, str)]
        return found + [t for k, v in value.items() for t in _description_texts(v, in_properties=k == "properties")]
    if isinstance(value, list):
        return [t for v in value for t in _description_texts(v)]
    return []


def test_the_recording_keeps_no_codex_prose_and_every_tool_of_ours_is_described() -> None:
    assert _description_texts([c["tools"] for c in RECORDED]) == []
    for spec in offered_specs(choose_tools("mock-model", switches_from_config())):
        assert spec["type"] == "web_search" or spec["description"]


@pytest.mark.codex
def test_the_recording_matches_the_live_binary(codex_bin: Path) -> None:
    from scripts.capture_tool_specs import _capture

    for name in ("gpt-5.5", "mock-model"):
        case = next(c for c in RECORDED if c["name"] == name)
        assert _capture(str(codex_bin), case["model"], case["config"])["tools"] == case["tools"]
