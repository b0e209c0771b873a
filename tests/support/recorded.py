"""Codex answers recorded by scripts/record_config_read.py, and the placeholders they use for paths."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support.paths import DATA

FRONTENDS = DATA / "frontends"


def load(name: str) -> Any:
    """`tests/data/frontends/<name>.json`."""
    return json.loads((FRONTENDS / f"{name}.json").read_text())


def normalise(value: Any, places: Mapping[str, Path | str]) -> Any:
    """Machine paths to the recording's placeholders (longest path first)."""
    text = json.dumps(value)
    for name, path in sorted(places.items(), key=lambda item: -len(str(item[1]))):
        text = text.replace(str(path), name)
    return json.loads(text)


def write_tree(root: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
