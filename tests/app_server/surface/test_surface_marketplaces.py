"""Local plugin marketplaces: add, list, read, install, installed, uninstall, remove; and the same
sequence side by side with Codex 0.169.0."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.appserver import AppServerClient
from tests.support.appserver_process import write_codex_config

Start = Callable[..., Awaitable[AppServerClient]]


def make_marketplace(root: Path) -> Path:
    (root / ".agents/plugins").mkdir(parents=True)
    (root / ".agents/plugins/marketplace.json").write_text(json.dumps(
        {"name": "local-mkt", "plugins": [{"name": "p1", "source": {"source": "local", "path": "./plugins/p1"}}]}))
    plugin = root / "plugins/p1"
    (plugin / ".codex-plugin").mkdir(parents=True)
    (plugin / ".codex-plugin/plugin.json").write_text(json.dumps({"name": "p1", "version": "1.0.0", "description": "d"}))
    (plugin / "skills/s1").mkdir(parents=True)
    (plugin / "skills/s1/SKILL.md").write_text("---\nname: s1\ndescription: skill one\n---\nbody\n")
    return root


async def lifecycle(client: AppServerClient, market: Path) -> list[dict[str, Any]]:
    manifest = str(market / ".agents/plugins/marketplace.json")
    steps: list[tuple[str, dict[str, Any]]] = [
        ("marketplace/add", {"source": str(market)}),
        ("marketplace/add", {"source": str(market)}),
        ("plugin/list", {}),
        ("plugin/read", {"pluginName": "p1", "marketplacePath": manifest}),
        ("plugin/read", {"pluginName": "nope", "marketplacePath": manifest}),
        ("plugin/install", {"pluginName": "p1", "marketplacePath": manifest}),
        ("plugin/installed", {}),
        ("skills/list", {}),
        ("plugin/uninstall", {"pluginId": "p1@local-mkt"}),
        ("plugin/installed", {}),
        ("marketplace/upgrade", {}),
        ("marketplace/remove", {"marketplaceName": "local-mkt"}),
        ("plugin/list", {}),
    ]
    answers = [await client.request(method, params) for method, params in steps]
    skills = answers[7]["result"]["data"][0]
    skills["skills"] = [skill for skill in skills["skills"] if skill["pluginId"]]  # not the system skills
    skills["cwd"] = "<cwd>"
    return answers


async def test_local_marketplace_lifecycle(app_server: Start, codex_home: Path, tmp_path: Path) -> None:
    market = make_marketplace(tmp_path / "mkt")
    client = await app_server()
    answers = [a.get("result", a.get("error")) for a in await lifecycle(client, market)]
    assert answers[0] == {"marketplaceName": "local-mkt", "installedRoot": str(market), "alreadyAdded": False}
    assert answers[1]["alreadyAdded"] is True
    listed = answers[2]["marketplaces"][0]["plugins"][0]
    assert (listed["id"], listed["localVersion"], listed["installed"]) == ("p1@local-mkt", "1.0.0", False)
    assert answers[3]["plugin"]["skills"][0]["name"] == "p1:s1"
    assert answers[4]["code"] == -32600
    assert answers[5] == {"authPolicy": "ON_INSTALL", "appsNeedingAuth": []}
    # installed = the copy under plugins/cache exists; uninstall removed it again
    assert answers[6]["marketplaces"][0]["plugins"][0]["enabled"] is True
    plugin_skill = answers[7]["data"][0]["skills"][0]
    assert (plugin_skill["name"], plugin_skill["pluginId"], plugin_skill["scope"]) == ("p1:s1", "p1@local-mkt", "user")
    assert plugin_skill["path"] == str(codex_home / "plugins/cache/local-mkt/p1/1.0.0/skills/s1/SKILL.md")
    assert not (codex_home / "plugins/cache/local-mkt/p1").exists()
    assert answers[8] == {} and answers[9] == {"marketplaces": [], "marketplaceLoadErrors": []}
    assert answers[11] == {"marketplaceName": "local-mkt", "installedRoot": None}
    assert answers[12]["marketplaces"] == []
    config = tomllib.loads((codex_home / "config.toml").read_text())
    assert "marketplaces" not in config and "plugins" not in config and config["model"] == "mock-model"


@pytest.mark.codex
async def test_lifecycle_like_codex(app_server: Start, codex_bin: Path, tmp_path: Path) -> None:
    runs = {}
    for label, argv in (("codex", [str(codex_bin), "app-server"]), ("pycodex", None)):
        home, market = tmp_path / label / "home", make_marketplace(tmp_path / label / "mkt")
        write_codex_config(home, base_url="http://127.0.0.1:9/v1")
        kwargs: dict[str, Any] = {"codex_home": home}
        if argv is not None:
            kwargs["argv"] = argv
        client = await app_server(**kwargs)
        answers = await lifecycle(client, market)
        text = json.dumps([a.get("result", {"code": a.get("error", {}).get("code")}) for a in answers])
        runs[label] = json.loads(text.replace(str(tmp_path / label), "<root>"))
    assert runs["codex"][7]["data"][0]["skills"], "Codex lists the installed plugin's skill"
    assert runs["pycodex"] == runs["codex"]
