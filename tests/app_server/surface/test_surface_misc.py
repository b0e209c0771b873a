"""The small methods: modes, feature flags, permission profiles, feedback, external agent config import,
Windows sandbox, diagnostics, user verification, remote control, the mock method and environments."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from tests.support.appserver import OMIT, AppServerClient
from tests.support.appserver_process import free_port

Start = Callable[..., Awaitable[AppServerClient]]


async def test_modes_features_profiles(app_server: Start) -> None:
    client = await app_server(experimental=True)
    modes = await client.call("collaborationMode/list", {})
    assert [m["mode"] for m in modes["data"]] == ["plan", "default"]
    features = {f["name"]: f for f in (await client.call("experimentalFeature/list", {}))["data"]}
    assert len(features) == 215 and features["shell_tool"]["enabled"] is True
    assert features["network_proxy"]["stage"] == "beta" and features["network_proxy"]["enabled"] is False
    applied = await client.call("experimentalFeature/enablement/set",
                                {"enablement": {"network_proxy": True, "shell_tool": False, "nosuch": True}})
    assert applied == {"enablement": {"network_proxy": True}}
    features = {f["name"]: f for f in (await client.call("experimentalFeature/list", {}))["data"]}
    assert features["network_proxy"]["enabled"] is True and features["shell_tool"]["enabled"] is True
    page = await client.call("experimentalFeature/list", {"limit": 2, "cursor": "2"})
    assert [f["name"] for f in page["data"]] == ["daemon_auto_start", "tui_workspace"] and page["nextCursor"] == "4"
    bad = await client.request("experimentalFeature/list", {"cursor": "zzz"})
    assert bad["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_cursor"},
                            "message": "invalid cursor: zzz"}
    assert (await client.call("permissionProfile/list", {"limit": 1}))["nextCursor"] == "1"
    profiles = await client.call("permissionProfile/list", {})
    assert [p["id"] for p in profiles["data"]] == [":read-only", ":workspace", ":danger-full-access"]


async def test_feedback(app_server: Start, tmp_path: Path) -> None:
    client = await app_server()
    target = tmp_path / "fb.zip"
    saved = await client.call("feedback/save", {"classification": "bug", "reason": "r", "savePath": str(target)})
    assert saved["savedPath"] == str(target) and saved["threadId"].startswith("no-active-thread-")
    with zipfile.ZipFile(target) as bundle:
        report = json.loads(bundle.read("report.json"))
    assert (report["classification"], report["reason"]) == ("bug", "r")
    again = await client.request("feedback/save", {"classification": "bug", "savePath": str(target)})
    assert again["error"] == {"code": -32603, "data": {"appErrorCode": "internal_error"},
                              "message": "failed to save feedback: feedback save path already exists"}
    relative = await client.request("feedback/save", {"classification": "bug", "savePath": "x.zip"})
    assert relative["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                 "message": "feedback savePath must be an absolute host path"}
    upload = await client.request("feedback/upload", {"classification": "bug"})
    assert upload["error"]["code"] == -32603 and "no feedback endpoint" in upload["error"]["message"]


async def test_external_agent_config_and_windows(app_server: Start) -> None:
    client = await app_server()
    assert await client.call("externalAgentConfig/detect", {}) == {"items": [], "connectors": []}
    assert "importId" in await client.call("externalAgentConfig/import", {"migrationItems": []})
    recorded = await client.call("externalAgentConfig/import/recordHistory", {"itemTypeResults": [], "providerId": "p"})
    histories = await client.call("externalAgentConfig/import/readHistories")
    assert [(h["importId"], h["providerId"]) for h in histories["data"]] == [(recorded["importId"], "p")]
    assert await client.call("windowsSandbox/setupStart", {"mode": "elevated"}) == {"started": True}
    done = await client.wait_notification("windowsSandbox/setupCompleted")
    assert done["params"]["success"] is False and done["params"]["mode"] == "elevated"
    assert await client.call("windowsSandbox/readiness") == {"status": "notConfigured"}


async def test_diagnostics_verification_remote_control(app_server: Start, codex_home: Path) -> None:
    client = await app_server(experimental=True, subprocess=True)  # diagnostics describe the process
    diag = await client.call("server/diagnostics", {})
    assert diag["process"]["id"] == client.process.proc.pid and diag["process"]["residentMemoryBytes"] > 0
    status = await client.call("userVerification/status", {})
    assert status["unavailableReason"] == "providerUnavailable"
    for method in ("userVerification/enroll", "userVerification/delete"):
        assert (await client.request(method, {}))["error"]["data"] == {"type": "unavailable", "reason": "providerUnavailable"}
    bad = await client.request("userVerification/verify", {"challenge": "c", "description": "d", "title": "t"})
    assert bad["error"]["code"] == -32602
    good = await client.request("userVerification/verify", {"challenge": "A" * 43, "description": "d", "title": "t"})
    assert good["error"]["code"] == -32603
    assert await client.call("userVerification/cancel", {"requestId": 1}) == {}
    remote = await client.call("remoteControl/status/read")
    assert remote["status"] == "disabled" and remote["installationId"] == (codex_home / "installation_id").read_text()
    for method, params in (("remoteControl/enable", OMIT), ("remoteControl/disable", OMIT),
                           ("remoteControl/client/list", {"environmentId": "e"}),
                           ("remoteControl/client/revoke", {"clientId": "c", "environmentId": "e"})):
        reply = await client.request(method, params)
        assert reply["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                  "message": "remote control requires ChatGPT authentication"}
    pairing = await client.request("remoteControl/pairing/start", {})
    assert pairing["error"]["message"] == "remote control pairing requires remote control to be enabled"
    no_code = await client.request("remoteControl/pairing/status", {})
    assert no_code["error"]["message"] == "remoteControl/pairing/status requires pairingCode or manualPairingCode"
    assert await client.call("mock/experimentalMethod", {"value": "v"}) == {"echoed": "v"}


async def test_experimental_methods_are_gated(app_server: Start) -> None:
    client = await app_server()
    for method in ("server/diagnostics", "collaborationMode/list", "environment/status"):
        reply = await client.request(method, {"environmentId": "local"})
        assert reply["error"] == {"code": -32600, "data": {"appErrorCode": "experimental_api_required", "feature": method},
                                  "message": f"{method} requires experimentalApi capability"}


async def test_environments(app_server: Start, workspace: Path) -> None:
    client = await app_server(experimental=True)
    assert await client.call("environment/status", {"environmentId": "local"}) == {"status": "ready"}
    info = await client.call("environment/info", {"environmentId": "local"})
    assert info["cwd"] == workspace.resolve().as_uri() and os.path.isabs(info["shell"]["path"])
    unknown = await client.call("environment/status", {"environmentId": "nosuch"})
    assert unknown == {"status": "unknown", "error": "unknown environment id `nosuch`"}
    assert (await client.request("environment/info", {"environmentId": "nosuch"}))["error"]["code"] == -32600
    reserved = await client.request("environment/add", {"environmentId": "local", "execServerUrl": "ws://127.0.0.1:9"})
    assert reserved["error"]["code"] == -32600
    url = f"ws://127.0.0.1:{free_port()}"  # nothing listens there
    assert await client.call("environment/add", {"environmentId": "e2", "execServerUrl": url}) == {}
    status = await client.call("environment/status", {"environmentId": "e2"})
    assert status["status"] == "disconnected" and url in status["error"]
    info_err = await client.request("environment/info", {"environmentId": "e2"})
    assert info_err["error"]["code"] == -32603
