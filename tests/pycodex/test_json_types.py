"""``JsonObj`` has one home, :mod:`pycodex.json_types`: no module spells the alias again."""

from __future__ import annotations

import ast
from typing import Any

from pycodex.json_types import JsonObj
from tests.support.paths import REPO_ROOT

PACKAGES = ("pycodex", "app_server", "exec_client", "exec_server", "relay", "agent_api", "tests", "scripts", "bench")
HOME = REPO_ROOT / "pycodex" / "json_types.py"


def _definitions() -> list[str]:
    found: list[str] = []
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            if path == HOME:
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AnnAssign):
                    targets = [node.target]
                else:
                    continue
                if any(isinstance(t, ast.Name) and t.id == "JsonObj" for t in targets):
                    found.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    return found


def test_json_obj_is_defined_once() -> None:
    assert _definitions() == []


def test_the_home_is_a_json_object() -> None:
    assert JsonObj == dict[str, Any]
