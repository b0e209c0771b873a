"""hooks/list: hooks from CODEX_HOME/hooks.json and config.toml, as Codex 0.169.0 lists them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.appserver import AppServerClient
from tests.support.appserver_process import write_codex_config

Start = Callable[..., Awaitable[AppServerClient]]

CONFIG_HOOKS = """
[[hooks.PreToolUse]]
matcher = "Bash"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "echo pre"
timeout = 30
[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "echo stop"
"""
JSON_HOOKS = {"hooks": {
    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi", "statusMessage": "s"}]}],
    "Bogus": [{"hooks": [{"type": "command", "command": "x"}]}],
}}


def make_home(root: Path) -> Path:
    home = root / "home"
    write_codex_config(home, base_url="http://127.0.0.1:9/v1")
    with (home / "config.toml").open("a") as handle:
        handle.write(CONFIG_HOOKS)
    (home / "hooks.json").write_text(json.dumps(JSON_HOOKS))
    return home


def comparable(entry: dict[str, Any], home: Path) -> list[dict[str, Any]]:
    """The hooks with our/their home replaced and the (implementation-defined) hash left out."""
    return [json.loads(json.dumps({k: v for k, v in h.items() if k != "currentHash"}).replace(str(home), "<home>"))
            for h in entry["hooks"]]


async def test_hooks_from_both_files(app_server: Start, tmp_path: Path, workspace: Path) -> None:
    home = make_home(tmp_path)
    client = await app_server(codex_home=home)
    entry = (await client.call("hooks/list", {}))["data"][0]
    assert [(h["eventName"], h["command"], h["displayOrder"]) for h in entry["hooks"]] == [
        ("sessionStart", "echo hi", 0), ("preToolUse", "echo pre", 1), ("stop", "echo stop", 2)]
    assert entry["hooks"][1]["key"] == f"{home}/config.toml:pre_tool_use:0:0"
    assert entry["hooks"][1]["timeoutSec"] == 30 and entry["hooks"][2]["timeoutSec"] == 600
    assert len(entry["warnings"]) == 1 and entry["errors"] == []
    (home / "hooks.json").write_text("{not json")
    broken = (await client.call("hooks/list", {}))["data"][0]
    assert broken["errors"][0]["path"] == str(home / "hooks.json")
    assert [h["eventName"] for h in broken["hooks"]] == ["preToolUse", "stop"]


@pytest.mark.codex
async def test_hooks_list_like_codex(app_server: Start, codex_bin: Path, tmp_path: Path) -> None:
    listings = {}
    for label, argv in (("codex", [str(codex_bin), "app-server"]), ("pycodex", None)):
        home = make_home(tmp_path / label)
        kwargs: dict[str, Any] = {"codex_home": home}
        if argv is not None:
            kwargs["argv"] = argv
        client = await app_server(**kwargs)
        entry = (await client.call("hooks/list", {"cwds": [str(tmp_path)]}))["data"][0]
        listings[label] = (comparable(entry, home), [w.replace(str(home), "<home>") for w in entry["warnings"]])
    assert listings["pycodex"] == listings["codex"]
