"""Minimal valid requests for the "surface" methods (files, commands, hooks, plugins, accounts, misc),
sent to both servers by tests/app_server/surface/test_surface_diff.py. ``{tmp}`` in a string becomes a scratch folder."""

from __future__ import annotations

import re
from typing import Any

from pycodex.json_types import JsonObj

OMIT_PARAMS: Any = object()
_ID_KEY = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

# (method, params); params may hold "{tmp}" placeholders. Order matters: the fs calls build on each other.
SURFACE_REQUESTS: list[tuple[str, Any]] = [
    ("fs/writeFile", {"path": "{tmp}/a.txt", "dataBase64": "aGk="}),
    ("fs/readFile", {"path": "{tmp}/a.txt"}),
    ("fs/createDirectory", {"path": "{tmp}/d"}),
    ("fs/getMetadata", {"path": "{tmp}/a.txt"}),
    ("fs/readDirectory", {"path": "{tmp}"}),
    ("fs/copy", {"sourcePath": "{tmp}/a.txt", "destinationPath": "{tmp}/b.txt"}),
    ("fs/remove", {"path": "{tmp}/b.txt"}),
    ("fs/watch", {"path": "{tmp}", "watchId": "w1"}),
    ("fs/unwatch", {"watchId": "w1"}),
    ("command/exec", {"command": ["echo", "hi"]}),
    ("command/exec/write", {"processId": "nosuch"}),
    ("command/exec/terminate", {"processId": "nosuch"}),
    ("command/exec/resize", {"processId": "nosuch", "size": {"rows": 10, "cols": 20}}),
    ("process/spawn", {"command": ["sleep", "30"], "cwd": "{tmp}", "processHandle": "p1"}),
    ("process/writeStdin", {"processHandle": "p1"}),
    ("process/resizePty", {"processHandle": "p1", "size": {"rows": 10, "cols": 20}}),
    ("process/kill", {"processHandle": "p1"}),
    ("hooks/list", {}),
    ("skills/config/write", {"enabled": False, "name": "nosuch"}),
    ("skills/extraRoots/set", {"extraRoots": []}),
    ("plugin/list", {}),
    ("plugin/installed", {}),
    ("plugin/read", {"pluginName": "nosuch"}),
    ("plugin/install", {"pluginName": "nosuch"}),
    ("plugin/uninstall", {"pluginId": "nosuch"}),
    ("plugin/reconcile", {}),
    ("plugin/search", {"searchTerm": "x"}),
    ("plugin/skill/read", {"remoteMarketplaceName": "m", "remotePluginId": "p", "skillName": "s"}),
    ("plugin/share/save", {"pluginPath": "{tmp}"}),
    ("plugin/share/updateTargets", {"discoverability": "PRIVATE", "remotePluginId": "p", "shareTargets": []}),
    ("plugin/share/list", {}),
    ("plugin/share/checkout", {"remotePluginId": "p"}),
    ("plugin/share/delete", {"remotePluginId": "p"}),
    ("marketplace/add", {"source": "{tmp}/nosuch"}),
    ("marketplace/remove", {"marketplaceName": "nosuch"}),
    ("marketplace/upgrade", {}),
    ("app/list", {}),
    ("app/read", {"appIds": []}),
    ("app/installed", {}),
    ("account/login/start", {"type": "apiKey", "apiKey": "sk-test-surface"}),
    ("account/read", {}),
    ("account/logout", None),
    ("account/login/cancel", {"loginId": "nosuch"}),
    ("account/gatewayOAuth/read", None),
    ("account/gatewayOAuth/login", None),
    ("account/gatewayOAuth/cancel", None),
    ("account/securitySetup/read", None),
    ("account/rateLimits/read", None),
    ("account/rateLimitResetCredit/consume", {"idempotencyKey": "k"}),
    ("account/usage/read", None),
    ("account/workspaceMessages/read", None),
    ("account/sendAddCreditsNudgeEmail", {"creditType": "credits"}),
    ("accountSession/list", {}),
    ("accountSession/switch", {"accountId": "a", "sessionId": "s"}),
    ("account/bedrock/discover", {}),
    ("account/bedrock/checkGovCloudRequirements", {}),
    ("account/gcp/setup", {"projectId": "p"}),
    ("collaborationMode/list", {}),
    ("experimentalFeature/list", {}),
    ("experimentalFeature/enablement/set", {"enablement": {}}),
    ("permissionProfile/list", {}),
    ("feedback/save", {"classification": "bug", "savePath": "{tmp}/feedback.zip"}),
    ("externalAgentConfig/detect", {}),
    ("externalAgentConfig/import", {"migrationItems": []}),
    ("externalAgentConfig/import/recordHistory", {"itemTypeResults": [], "providerId": "p"}),
    ("externalAgentConfig/import/readHistories", None),
    ("windowsSandbox/setupStart", {"mode": "unelevated"}),
    ("windowsSandbox/readiness", None),
    ("server/diagnostics", {}),
    ("userVerification/status", {}),
    ("userVerification/enroll", {}),
    ("userVerification/delete", {}),
    ("userVerification/verify", {"challenge": "c", "description": "d", "title": "t"}),
    ("userVerification/cancel", {"requestId": 1}),
    ("remoteControl/enable", None),
    ("remoteControl/disable", None),
    ("remoteControl/status/read", None),
    ("remoteControl/pairing/start", {}),
    ("remoteControl/pairing/status", {}),
    ("remoteControl/client/list", {"environmentId": "e"}),
    ("remoteControl/client/revoke", {"clientId": "c", "environmentId": "e"}),
    ("mock/experimentalMethod", {}),
    ("environment/info", {"environmentId": "local"}),
    ("environment/status", {"environmentId": "local"}),
    ("environment/add", {"environmentId": "e2", "execServerUrl": "ws://127.0.0.1:9"}),
]


def fill(value: Any, tmp: str) -> Any:
    """``value`` with every "{tmp}" replaced by the scratch folder."""
    if isinstance(value, str):
        return value.replace("{tmp}", tmp)
    if isinstance(value, list):
        return [fill(v, tmp) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, tmp) for k, v in value.items()}
    return value


def shape(value: Any) -> Any:
    """The JSON shape of a value: keys and types, lists by their first element; keys that are ids (a map
    keyed by thread id) become "<id>"."""
    if isinstance(value, dict):
        return {("<id>" if _ID_KEY.fullmatch(k) else k): shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    if isinstance(value, int | float):
        return "number"
    return "string"


def shape_differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two shapes (from `shape`) differ, as "path: codex X vs ours Y" lines."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [line for key in sorted(set(a) | set(b))
                for line in (shape_differences(a.get(key, "absent"), b.get(key, "absent"), f"{path}.{key}"))]
    if isinstance(a, list) and isinstance(b, list) and a and b:
        return shape_differences(a[0], b[0], f"{path}[0]")
    if a == b:
        return []
    def brief(x: Any) -> str:
        return x if isinstance(x, str) else type(x).__name__
    return [f"{path.lstrip('.') or '(result)'}: codex {brief(a)} vs ours {brief(b)}"]


def answered_alike(codex: JsonObj, ours: JsonObj, replace: dict[str, str]) -> tuple[bool, str]:
    """Whether two responses agree: both results of the same shape, or both errors with the same code and
    message (paths of each run replaced by placeholders). Returns (alike, why not)."""

    def norm(text: str) -> str:
        for old, new in replace.items():
            text = text.replace(old, new)
        return text

    if "result" in codex and "result" in ours:
        a, b = shape(codex["result"]), shape(ours["result"])
        return a == b, "" if a == b else "result shape differs at " + "; ".join(shape_differences(a, b))
    if "error" in codex and "error" in ours:
        ca, cb = codex["error"], ours["error"]
        alike = ca.get("code") == cb.get("code") and norm(ca.get("message", "")) == norm(cb.get("message", ""))
        return alike, "" if alike else f"error differs: codex {ca} vs ours {cb}"
    return False, f"codex {'ok' if 'result' in codex else codex.get('error')} vs ours " \
                  f"{'ok' if 'result' in ours else ours.get('error')}"
