"""hooks/list, skills settings, plugins, marketplaces and apps (no plugin runtime, no remote catalog)."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path

from tests.support.appserver import AppServerClient

Start = Callable[..., Awaitable[AppServerClient]]
REMOTE = "chatgpt authentication required for remote plugin catalog"


async def test_hooks_and_skills_settings(app_server: Start, codex_home: Path, workspace: Path, tmp_path: Path) -> None:
    client = await app_server()
    hooks = await client.call("hooks/list", {})
    assert hooks == {"data": [{"cwd": str(workspace), "hooks": [], "warnings": [], "errors": []}]}
    two = await client.call("hooks/list", {"cwds": ["/a", "/b"]})
    assert [entry["cwd"] for entry in two["data"]] == ["/a", "/b"]
    assert await client.call("skills/config/write", {"enabled": False, "name": "greeter"}) == {"effectiveEnabled": False}
    assert await client.call("skills/config/write", {"enabled": True, "path": "/x/SKILL.md"}) == {"effectiveEnabled": True}
    config = tomllib.loads((codex_home / "config.toml").read_text())
    assert config["skills"]["config"] == [{"name": "greeter", "enabled": False},
                                          {"path": "/x/SKILL.md", "enabled": True}]
    both = await client.request("skills/config/write", {"enabled": True})
    assert both["error"] == {"code": -32602, "data": {"appErrorCode": "invalid_params"},
                             "message": "skills/config/write requires exactly one of path or name"}
    extra = tmp_path / "extra"
    (extra / "x/s9").mkdir(parents=True)
    (extra / "x/s9/SKILL.md").write_text("---\nname: s9\ndescription: extra skill\n---\nb\n")
    (extra / "SKILL.md").write_text("---\nname: s8\ndescription: top skill\n---\nb\n")
    assert await client.call("skills/extraRoots/set", {"extraRoots": [str(extra)]}) == {}
    await client.wait_notification("skills/changed")
    listed = (await client.call("skills/list", {}))["data"][0]["skills"]
    assert [(s["name"], s["scope"]) for s in listed if s["scope"] == "user"] == [("s8", "user"), ("s9", "user")]
    await client.call("skills/config/write", {"enabled": False, "name": "s8"})
    listed = (await client.call("skills/list", {}))["data"][0]["skills"]
    assert [(s["name"], s["enabled"]) for s in listed if s["scope"] == "user"] == [("s8", False), ("s9", True)]
    relative = await client.request("skills/extraRoots/set", {"extraRoots": ["rel"]})
    assert relative["error"]["code"] == -32600
    # The server still loads its config after the writes.
    assert (await client.call("config/read", {}))["config"]["skills"]["config"][0]["name"] == "greeter"


async def test_local_listings_are_empty(app_server: Start) -> None:
    client = await app_server(experimental=True)
    assert await client.call("plugin/list", {}) == {"marketplaces": [], "marketplaceLoadErrors": [], "featuredPluginIds": []}
    assert await client.call("plugin/installed", {}) == {"marketplaces": [], "marketplaceLoadErrors": []}
    assert await client.call("plugin/reconcile", {}) == {
        "changedPlugins": [], "failedRemotePluginIds": [], "failedMaterializationRemotePluginIds": []}
    assert await client.call("plugin/search", {"searchTerm": "x"}) == {"data": [], "nextCursor": None}
    assert await client.call("marketplace/upgrade", {}) == {"selectedMarketplaces": [], "upgradedRoots": [], "errors": []}
    assert await client.call("app/list", {}) == {"data": [], "nextCursor": None}
    assert await client.call("app/read", {"appIds": ["a", "b"]}) == {"apps": [], "missingAppIds": ["a", "b"]}
    assert await client.call("app/installed", {}) == {"apps": []}


CASES: list[tuple[str, object, str]] = [
    ("plugin/read", {"pluginName": "x"}, "plugin/read requires exactly one of marketplacePath or remoteMarketplaceName"),
    ("plugin/install", {"pluginName": "x"},
     "plugin/install requires exactly one of marketplacePath or remoteMarketplaceName"),
    ("plugin/install", {"pluginName": "x", "remoteMarketplaceName": "m"},
     f"read remote plugin details before install: {REMOTE}"),
    ("plugin/uninstall", {"pluginId": "x"}, f"resolve remote plugin before uninstall: {REMOTE}"),
    ("plugin/skill/read", {"remoteMarketplaceName": "m", "remotePluginId": "p", "skillName": "s"},
     f"read remote plugin skill details: {REMOTE}"),
    ("plugin/share/save", {"pluginPath": "/p"}, f"save remote plugin share: {REMOTE}"),
    ("plugin/share/updateTargets", {"discoverability": "LISTED", "remotePluginId": "p", "shareTargets": []},
     f"update remote plugin share targets: {REMOTE}"),
    ("plugin/share/list", {}, f"list remote plugin shares: {REMOTE}"),
    ("plugin/share/checkout", {"remotePluginId": "p"}, f"checkout plugin share: {REMOTE}"),
    ("plugin/share/delete", {"remotePluginId": "p"}, f"delete remote plugin share: {REMOTE}"),
    ("marketplace/remove", {"marketplaceName": "m"}, "marketplace `m` is not configured or installed"),
]


async def test_refusals(app_server: Start) -> None:
    client = await app_server()
    for method, params, message in CASES:
        reply = await client.request(method, params)
        assert reply["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                  "message": message}, method


async def test_local_marketplace_sources(app_server: Start, tmp_path: Path) -> None:
    client = await app_server()
    missing = await client.request("marketplace/add", {"source": str(tmp_path / "nope")})
    assert missing["error"]["message"] == (
        "failed to resolve local marketplace source path: No such file or directory (os error 2)")
    bare = await client.request("marketplace/add", {"source": str(tmp_path)})
    assert bare["error"]["message"] == (
        f"invalid marketplace file `{tmp_path}`: marketplace root does not contain a supported manifest")
    manifest = tmp_path / "m.json"
    no_file = await client.request("plugin/read", {"pluginName": "p", "marketplacePath": str(manifest)})
    assert no_file["error"]["message"] == f"marketplace file `{manifest}` does not exist"
    manifest.write_text(json.dumps({"name": "m", "plugins": [{"name": "p"}]}))
    absent = await client.request("plugin/read", {"pluginName": "q", "marketplacePath": str(manifest)})
    assert "was not found" in absent["error"]["message"]
