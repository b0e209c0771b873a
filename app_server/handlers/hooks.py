"""hooks/list: the lifecycle hooks configured for the user layer, listed as Codex 0.169.0 lists them.

Hooks come from ``CODEX_HOME/hooks.json`` and the ``[hooks]`` tables of ``CODEX_HOME/config.toml`` (both
``{EventName: [{matcher, hooks: [{type, command, timeout, ...}]}]}``), in that order, events in Codex's
order. Project layers (``<repo>/.codex``) only count for trusted projects in Codex; pycodex reads no
project-layer hooks, so they are not listed. pycodex does not run hooks: every hook is reported
``untrusted``, as Codex reports hooks nobody has reviewed."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path

from app_server.context import HandlerContext
from app_server.protocol import responses_config as rc
from app_server.protocol import surface as p
from pycodex.json_types import JsonObj

__all__ = ["hooks_list", "list_hooks"]

DEFAULT_TIMEOUT_SEC = 600
EVENTS = ("PreModelRequest", "PostModelRequest", "PreToolUse", "PermissionRequest", "PostToolUse",
          "PreCompact", "PostCompact", "SessionStart", "SessionEnd", "UserPromptSubmit", "SubagentStart",
          "SubagentStop", "Stop", "Interrupt")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _hooks_of(table: object, path: Path, order: int) -> tuple[list[JsonObj], int]:
    """The command hooks of one ``{Event: [groups]}`` table; unknown events and handlers are skipped."""
    found: list[JsonObj] = []
    if not isinstance(table, dict):
        return found, order
    for event in EVENTS:
        groups = table.get(event)
        if not isinstance(groups, list):
            continue
        for g_index, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h_index, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if not isinstance(handler, dict) or handler.get("type") != "command" or "command" not in handler:
                    continue
                canonical = json.dumps({"event": event, "matcher": group.get("matcher"), **handler}, sort_keys=True)
                found.append({
                    "key": f"{path}:{_snake(event)}:{g_index}:{h_index}",
                    "eventName": event[0].lower() + event[1:], "handlerType": "command",
                    "command": str(handler["command"]), "async": bool(handler.get("async", False)),
                    "matcher": group.get("matcher"),
                    "timeoutSec": int(handler.get("timeout", DEFAULT_TIMEOUT_SEC)),
                    "statusMessage": handler.get("statusMessage"), "additionalContextLimit": None,
                    "sourcePath": str(path), "source": "user", "pluginId": None, "environmentId": None,
                    "displayOrder": order, "enabled": True, "isManaged": False,
                    "currentHash": "sha256:" + hashlib.sha256(canonical.encode()).hexdigest(),
                    "trustStatus": "untrusted",
                })
                order += 1
    return found, order


def list_hooks(codex_home: Path, cwd: str) -> rc.HooksListEntry:
    """One hooks/list entry for ``cwd``."""
    hooks: list[JsonObj] = []
    warnings: list[str] = []
    errors: list[rc.HookErrorInfo] = []
    json_path, toml_path = codex_home / "hooks.json", codex_home / "config.toml"
    sources: list[Path] = []
    order = 0
    if json_path.is_file():
        try:
            data = json.loads(json_path.read_text(encoding="utf-8"))
            found, order = _hooks_of(data.get("hooks") if isinstance(data, dict) else None, json_path, order)
            hooks += found
            sources.append(json_path)
        except (OSError, ValueError) as exc:
            errors.append(rc.HookErrorInfo(path=str(json_path), message=f"failed to parse hooks: {exc}"))
    if toml_path.is_file():
        try:
            table = tomllib.loads(toml_path.read_text(encoding="utf-8")).get("hooks")
        except (OSError, tomllib.TOMLDecodeError) as exc:
            errors.append(rc.HookErrorInfo(path=str(toml_path), message=f"failed to parse hooks: {exc}"))
            table = None
        if isinstance(table, dict) and table:
            found, order = _hooks_of(table, toml_path, order)
            hooks += found
            sources.append(toml_path)
    if len(sources) == 2:
        warnings.append(f"loading hooks from both {json_path} and {toml_path}; "
                        "prefer a single representation for this layer")
    return rc.HooksListEntry(cwd=cwd, hooks=hooks, warnings=warnings, errors=errors)


async def hooks_list(ctx: HandlerContext, params: p.HooksListParams) -> rc.HooksListResponse:
    home = ctx.services.codex_home
    cwds = params.cwds or [str(ctx.services.working_dir())]
    return rc.HooksListResponse(data=[list_hooks(home, cwd) for cwd in cwds])
