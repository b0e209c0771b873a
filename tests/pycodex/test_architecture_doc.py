"""docs/architecture.md is drawn from the code: every path it names exists, and so does every class or table it pins to one."""

from __future__ import annotations

import re

from tests.support.paths import REPO_ROOT

DOC = REPO_ROOT / "docs" / "architecture.md"
#: `path/to/module.py` or `path/to/package/`, optionally with `{a,b}` alternatives.
PATH = re.compile(r"`((?:pycodex|app_server|exec_client|exec_server|relay|agent_api|compat_tests|tests)/[\w/{},.]*)`")
#: "`ClassName` (`path/to/module.py`)" and "`ClassName` in `path/to/module.py`".
PINNED = re.compile(r"`([A-Z]\w+)`(?: \(| in )`([\w/]+\.py)`")


def _expand(path: str) -> list[str]:
    found = re.search(r"\{([^}]*)\}", path)
    if found is None:
        return [path]
    return [path[: found.start()] + alt + path[found.end():] for alt in found.group(1).split(",")]


def _file(path: str) -> str:
    """A path as the doc writes it: from the repository root, or (in the app-server tables) from app_server/."""
    whole = REPO_ROOT / path
    return (whole if whole.exists() else REPO_ROOT / "app_server" / path).read_text(encoding="utf-8")


def test_every_path_it_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    paths = [p for raw in PATH.findall(text) for p in _expand(raw)]
    assert len(paths) > 30
    missing = [p for p in paths if not (REPO_ROOT / p).exists()]
    assert missing == []


def test_every_class_it_pins_to_a_module_is_defined_there() -> None:
    text = DOC.read_text(encoding="utf-8")
    pinned = PINNED.findall(text)
    assert len(pinned) > 5
    wrong = [f"{name} in {path}" for name, path in pinned
             if not re.search(rf"^(class {name}\b|{name}\b *[:=])", _file(path), re.M)]
    assert wrong == []
